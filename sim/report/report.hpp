#pragma once
// Printers of simulation results: a readable table, the result JSON (docs/architecture.md,
// "Stable outputs"), CSV, and per-block timelines. They only read the counter structs; no
// model code lives here.
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "sim/report/bounds.hpp"
#include "sim/report/waves.hpp"
#include "sim/core/stats.hpp"

namespace tilesim {

// `bounds`, where given, holds one RunBounds per result (same order); nullptr prints no bounds.

/// One point's result as the result JSON of docs/architecture.md (experiment, arch, kernels[], total).
nlohmann::json result_json(const SimResult& r, const RunBounds* bounds = nullptr);
/// result_json of each result, with its bounds where given.
std::vector<nlohmann::json> results_json(const std::vector<SimResult>& results, const std::vector<RunBounds>* bounds);
/// A run: the single result object, or {"experiment", "points": [result objects]} for a sweep.
nlohmann::json run_json(const std::string& experiment, const std::vector<nlohmann::json>& results, bool sweep);
nlohmann::json run_json(const std::string& experiment, const std::vector<SimResult>& results, bool sweep,
                        const std::vector<RunBounds>* bounds = nullptr);

// The printers below read result_json objects (with "point" labels in a sweep), so that results
// gathered from other processes or from a sweep folder print exactly like fresh ones; the
// SimResult overloads convert first.

/// One row per point and kernel, side by side; with one point also the per-tensor breakdown.
/// With bounds, a "DRAM/bound" column: simulated DRAM bytes over max(compulsory, io_bound).
void print_table(std::ostream& out, const std::string& experiment, const std::vector<nlohmann::json>& results);
void print_table(std::ostream& out, const std::string& experiment, const std::vector<SimResult>& results,
                 const std::vector<RunBounds>* bounds = nullptr);
/// CSV with a header row; one row per point and kernel. Columns added later are appended at the
/// end; the bounds columns are empty without bounds. With `points` (the sweep's point objects,
/// one per result), two last columns point_index and point_hash join it to summary.csv.
void write_csv(std::ostream& out, const std::vector<nlohmann::json>& results,
               const std::vector<nlohmann::json>* points = nullptr);
void write_csv(std::ostream& out, const std::vector<SimResult>& results, const std::vector<RunBounds>* bounds = nullptr);

/// One row per block record: kernel_index, kernel, block (-1: early exit), position, sm,
/// start_ns, end_ns, wait_ns; times exact to the picosecond.
void write_timeline_csv(std::ostream& out, const SimResult& r);
/// Chrome/Perfetto trace-event JSON: an "X" slice per block (pid 0, one track per SM, ts/dur in
/// microseconds), a nested "wait" slice at the block's start when it waited, and thread_name
/// metadata "SM 12". Blocks that overlap on one SM go to separate lanes of it (see lanes below).
void write_timeline_trace_json(std::ostream& out, const SimResult& r);
/// The trace tracks: lane of each record (index into r.blocks) on its SM, so that no two blocks
/// of a lane overlap (trace viewers drop overlapping slices of one thread). tid = sm x lanes +
/// lane, with *lanes_per_sm = the most lanes any SM needs (1 when SMs run one block at a time,
/// so then tid = SM id).
std::vector<std::uint32_t> timeline_lanes(const SimResult& r, std::uint32_t* lanes_per_sm);

}  // namespace tilesim
