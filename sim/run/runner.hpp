#pragma once
// Running an experiment's points: validate every point first, then simulate the ones not yet
// finished, on threads (-j) and MPI ranks, streaming each finished point into an output
// folder so that an interrupted sweep resumes where it stopped.
//
// The output folder holds
//   experiment.yaml  the experiment as run (overrides applied)
//   results.jsonl    one point object per line, flushed as each point finishes (any order)
//   summary.json     at the end: axes, comparison, and every point in sweep order
//   summary.csv      a row per point; kernels.csv a row per point and kernel
// A point object is {"index", "hash", "label", "axes": {key: label}, "config": the resolved
// point as JSON, "result": the result JSON}. A finished point is recognised by its hash (the
// resolved configuration, the files it names and the simulator's fingerprint) and skipped.
#include <nlohmann/json.hpp>

#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/config/experiment.hpp"
#include "sim/run/distribute.hpp"
#include "sim/run/progress.hpp"

namespace tilesim::sweep {

struct RunSettings {
  int jobs = 0;               ///< threads per process, 0 = all cores
  std::string out_dir;        ///< empty: no folder, nothing resumed
  ProgressStyle progress = ProgressStyle::off;  ///< how progress shows on stderr (progress_style)
};

struct SweepOutcome {
  std::vector<nlohmann::json> points;  ///< point objects in sweep order (the writer's; empty on other ranks)
  nlohmann::json groups;               ///< compare_points' groups
  std::size_t simulated = 0, resumed = 0;
  std::size_t workloads_built = 0;     ///< distinct workloads generated during validation
};

/// One point's pre-run check: its hash, or the error that makes it unrunnable.
struct PointCheck {
  std::string hash;
  std::exception_ptr error;  ///< null: the point builds and passes the simulator's pre-checks
};

/// Builds every point of `plan` on `jobs` threads and makes the simulator's checks that need no
/// simulation (occupancy, dependency cycles, progress with the slots a kernel can have); a
/// deadlock names its point. `also` (optional) sees each point that passed, from any thread.
std::vector<PointCheck> check_points(const ExperimentPlan& plan, int jobs, WorkloadCache& cache,
                                     const std::function<void(std::size_t, const ExperimentPoint&)>& also = {});

/// Why one line of a results file cannot stand ("" when it can).
using LineCheck = std::function<std::string(const nlohmann::json&)>;

/// The objects of a results file by their "hash" (a string), each of which must also hold
/// `required` and pass `check`. A last line cut short by a kill is dropped and cut off the
/// file, so appending starts on a fresh line. Any other line that cannot stand (not JSON, not
/// WHAT, failing `check`, or a second line for a hash already read) is reported as
/// "PATH:LINE: ..." and moved to PATH.damaged, the file keeping its good lines: its point is
/// simply not finished. A file none of whose lines stands is an error ("...; FIX"), untouched.
std::unordered_map<std::string, nlohmann::json> read_hashed_jsonl(const std::filesystem::path& path,
                                                                  const std::string& required,
                                                                  const std::string& what, const std::string& fix,
                                                                  const LineCheck& check = {});

/// The check of a results.jsonl line on resume: every figure finite and >= 0, and the result
/// readable by every printer (they trust its fields).
std::string resumed_result_problem(const nlohmann::json& line);

/// Validates, runs and (with out_dir) writes the folder; returns on every rank.
SweepOutcome run_sweep(const ExperimentPlan& plan, const RunSettings& settings, ProcessGroup& group);

/// summary.json's object for a finished sweep.
nlohmann::json summary_json(const ExperimentPlan& plan, const SweepOutcome& outcome);

/// Point i's object from its result JSON (labels and config from the plan).
nlohmann::json point_object(const ExperimentPlan& plan, std::size_t i, const std::string& hash,
                            nlohmann::json result);

}  // namespace tilesim::sweep
