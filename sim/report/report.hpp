#pragma once
// Printers of simulation results: a readable table, the result JSON of DESIGN.md, and CSV.
// They only read the counter structs; no model code lives here.
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "sim/stats.hpp"

namespace tilesim {

/// One point's result as DESIGN.md's result JSON (experiment, arch, kernels[], total).
nlohmann::json result_json(const SimResult& r);
/// A run: the single result object, or {"experiment", "points": [result objects]} for a sweep.
nlohmann::json run_json(const std::string& experiment, const std::vector<SimResult>& results, bool sweep);

/// One row per point and kernel, side by side; with one point also the per-tensor breakdown.
void print_table(std::ostream& out, const std::string& experiment, const std::vector<SimResult>& results);
/// CSV with a header row; one row per point and kernel.
void write_csv(std::ostream& out, const std::vector<SimResult>& results);

}  // namespace tilesim
