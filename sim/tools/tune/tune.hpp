#pragma once
// `tilesim tune`: search the axes of an experiment's `tune:` section for the best
// configuration. The section has the grammar of `sweep:` (sim/config/sweep_spec.hpp), so points,
// labels and hashes are the sweep's; points that fail a legality check when built (shared
// memory, MMA multiples, occupancy) are counted as illegal and skipped. Results live in a
// persistent cache keyed by ExperimentPlan::point_hash, so a repeated or overlapping search
// simulates only what it has not seen. Strategies and heuristic rules: docs/tune.md.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/experiment.hpp"
#include "sim/run/progress.hpp"
#include "sim/tools/tune/heuristic.hpp"

namespace tilesim::tune {

enum class Strategy { exhaustive, heuristic, greedy };
enum class Objective { duration, dram };

Strategy parse_strategy(const std::string& s);
Objective parse_objective(const std::string& s);

struct Settings {
  Strategy strategy = Strategy::heuristic;
  Objective objective = Objective::duration;
  double top_fraction = 0.2;
  std::string cache_dir = ".tilesim-cache/tune";  ///< empty: no persistent cache
  int jobs = 0;
  sweep::ProgressStyle progress = sweep::ProgressStyle::off;  ///< while candidates are simulated
};

/// "strategy heuristic  objective duration": the settings as the tables' headers print them.
std::string settings_text(const Settings& s);

/// The figures of a simulated point the search and its table need.
struct Measured {
  double duration_ns = 0;
  double dram_bytes = 0;
  std::uint64_t waves = 0;
  double last_wave_utilization = 1;
  /// Each kernel's duration by name, in launch order (the layer stage reads them per kernel);
  /// the cache keeps them only for workloads of several kernels.
  std::vector<std::pair<std::string, double>> kernel_ns;
};

struct Candidate {
  std::size_t index = 0;  ///< point index in the tune plan
  std::string label;
  std::string hash;
  bool legal = false;
  std::string error;      ///< why not legal
  Estimate estimate;
  std::optional<Measured> measured;
};

struct Outcome {
  std::vector<Candidate> candidates;  ///< every point of the grid, in sweep order
  std::optional<std::size_t> best;    ///< candidate index of the best simulated point
  Measured base;                      ///< the experiment's own configuration
  std::string base_label;
  std::size_t legal = 0, illegal = 0, simulated = 0, from_cache = 0;
  double wall_s = 0;
  /// Strategy's best over the best of every legal point, when all of them are cached.
  std::optional<double> gap;
};

/// The two plans of a tune experiment: `tune:` as the sweep, and the experiment as written
/// (tune removed). Errors name `origin` (a `sweep:` beside `tune:`, a missing `tune:`).
struct TunePlans {
  ExperimentPlan search;
  ExperimentPlan base;
};
TunePlans load_tune_plans_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                               const std::vector<std::string>& overrides);
TunePlans load_tune_plans(const std::string& path, const std::vector<std::string>& overrides);

/// Runs the search.
Outcome run_tune(const TunePlans& plans, const Settings& settings);

/// Simulates point 0 of each plan, or takes it from the persistent cache of `settings`
/// (keyed by its point hash, as the search's points), on settings.jobs threads. Adds to
/// `simulated` and `cached` how many of each there were.
std::vector<Measured> measure_plans(const std::vector<const ExperimentPlan*>& plans, const Settings& settings,
                                    std::size_t& simulated, std::size_t& cached);

/// The objective's value of a measured point (lower is better).
double objective_value(const Measured& m, Objective o);

/// The top-10 table, the search cost and the gap.
void print_outcome(std::ostream& out, const TunePlans& plans, const Outcome& outcome, const Settings& settings);

/// The best point as a ready-to-run experiment (no `tune:`, the best values applied).
std::string best_yaml(const TunePlans& plans, const Outcome& outcome);

}  // namespace tilesim::tune
