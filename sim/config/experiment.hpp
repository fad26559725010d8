#pragma once
// Experiment YAML -> validated points ready to simulate. Top-level keys: name, description,
// arch, arch_overrides, workload, order, sync, sim, sweep, validate, tune (read by `tilesim tune`). `sweep:` (see
// sim/config/sweep_spec.hpp) expands to a grid of points; every point is validated before any
// runs, so a bad point is an error naming the point, not a failure halfway.
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "models/arch.hpp"
#include "sim/core/simulator.hpp"
#include "sim/config/sweep_spec.hpp"
#include "sim/config/workload_cache.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

struct ExperimentPoint {
  std::string label;  ///< "order=grouped(group_m=8)", empty without a sweep
  ArchSpec arch;
  std::shared_ptr<const Workload> workload;  ///< shared by points that differ only in the model
  SimOptions options;
};

/// The `validate:` section: how `tilesim validate` and `tilesim calibrate` match the
/// experiment to measurements. `case` defaults to the experiment's name, `group` (the cases
/// whose policies are ranked against each other) to the case name without its last
/// `_suffix`, `subset` to `validation`.
struct ValidateTag {
  std::string case_name;
  std::string group;
  /// The kernel family the case belongs to (validate reports and checks each family apart);
  /// default: the workload's kind.
  std::string family;
  std::string subset = "validation";  ///< calibration | validation
  /// Which figures to compare (hit_rate, dram, duration): a chain profiled kernel by kernel
  /// with cache flushes in between has per-kernel traffic that is not the chain's.
  bool hit_rate = true, dram = true, duration = true;
  /// What ran before each repetition of the measured event timings: nothing that touches the L2
  /// (`none`: back-to-back launches, as calibration/kernels time), or a long write
  /// (`write_flush`: Triton's do_bench), which validate simulates with sim.l2_start write_flushed.
  bool events_after_write_flush = false;
};

/// An experiment as parsed and expanded, before its points are built: what a sweep runner
/// needs to build any point on demand, from any thread.
class ExperimentPlan {
 public:
  std::string name;
  std::string file;
  std::string base_dir;   ///< relative paths in the experiment resolve against it
  ValidateTag validate;
  sweep::Sweep sweep;

  std::size_t size() const { return sweep.points.size(); }
  const std::string& label(std::size_t i) const { return sweep.points[i].label; }
  /// The experiment as run: the file's YAML with the --set overrides applied.
  std::string resolved_yaml() const;
  /// Point i's YAML (sweep removed, its values applied), parsed afresh so that errors keep
  /// pointing at the file's lines.
  YAML::Node point_yaml(std::size_t i) const;
  /// Builds and validates point i; workloads come from `cache` when given.
  ExperimentPoint build(std::size_t i, sweep::WorkloadCache* cache = nullptr) const;
  /// The digest a finished point is known by: its resolved configuration, the contents of
  /// the files it names (arch file or preset, order files) and the simulator's fingerprint.
  std::string point_hash(std::size_t i) const;

 private:
  friend ExperimentPlan load_plan_text(const std::string&, const std::string&, const std::string&,
                                       const std::vector<std::string>&, const std::string&);
  YAML::Node parse() const;  ///< the file's text with the overrides applied

  std::string text_;
  std::vector<std::string> overrides_;
};

struct Experiment {
  std::string name;
  std::string file;
  ValidateTag validate;
  std::vector<ExperimentPoint> points;
  /// What the points were built from: a caller that releases a point's workload to bound its
  /// memory (validate, calibrate) builds it again from here.
  std::shared_ptr<const ExperimentPlan> plan;
};

/// Parses an experiment file with `--set` overrides and expands its sweep (points unbuilt).
ExperimentPlan load_plan(const std::string& path, const std::vector<std::string>& overrides);
/// The same from YAML text (`origin` names it in errors; relative paths resolve against base_dir).
/// `sweep_key` is the section expanded into points: `sweep`, or `tune` for `tilesim tune`'s
/// search; the points never contain either section, so errors keep the file's own lines.
ExperimentPlan load_plan_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                              const std::vector<std::string>& overrides, const std::string& sweep_key = "sweep");



/// Loads an experiment file, applies `--set` overrides, expands, builds and validates every point.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides);
/// The same from YAML text.
Experiment load_experiment_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                                const std::vector<std::string>& overrides);
/// The built-in experiment `tilesim run` uses without a file: launch orders side by side.
const std::string& default_experiment_yaml();

}  // namespace tilesim
