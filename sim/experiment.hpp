#pragma once
// Experiment YAML -> validated points ready to simulate. Top-level keys: name, description,
// arch, arch_overrides, workload, order, sync, sim, sweep, validate. A `sweep:` maps dotted keys to lists
// of values and expands to their full grid (first key slowest). Every point is validated
// before any runs, so a bad point is an error naming the point, not a failure halfway.
#include <string>
#include <vector>

#include "models/arch.hpp"
#include "sim/simulator.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

struct ExperimentPoint {
  std::string label;  ///< "order=grouped(group_m=8)", empty without a sweep
  ArchSpec arch;
  Workload workload;
  SimOptions options;
};

/// The `validate:` section: how `tilesim validate` and `tilesim calibrate` match the
/// experiment to measurements. `case` defaults to the experiment's name, `group` (the cases
/// whose policies are ranked against each other) to the case name without its last
/// `_suffix`, `subset` to `validation`.
struct ValidateTag {
  std::string case_name;
  std::string group;
  std::string subset = "validation";  ///< calibration | validation
  /// Which figures to compare (hit_rate, dram, duration): a chain profiled kernel by kernel
  /// with cache flushes in between has per-kernel traffic that is not the chain's.
  bool hit_rate = true, dram = true, duration = true;
};

struct Experiment {
  std::string name;
  std::string file;
  ValidateTag validate;
  std::vector<ExperimentPoint> points;
};

/// Loads an experiment file, applies `--set` overrides, expands and validates the sweep.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides);
/// The same from YAML text (`origin` names it in errors; relative paths resolve against base_dir).
Experiment load_experiment_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                                const std::vector<std::string>& overrides);
/// The built-in experiment `tilesim run` uses without a file: launch orders side by side.
const std::string& default_experiment_yaml();

}  // namespace tilesim
