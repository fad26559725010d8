#pragma once
// Simulated versus measured, case by case, and the aggregate errors `tilesim validate` reports
// and `tilesim calibrate` minimises. Experiments are matched to measured cases by their
// `validate.case` (default: the experiment's name).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/experiment.hpp"
#include "sim/run/progress.hpp"
#include "sim/tools/validate/measured.hpp"

namespace tilesim {

/// The figures compared for one case. Optional ones are absent when the measurement lacks them.
struct CaseFigures {
  std::optional<double> hit_rate_pct;  ///< L2 lookup hit rate, Nsight Compute's definition
  std::optional<double> dram_read_bytes;
  std::optional<double> dram_write_bytes;
  std::optional<double> duration_ns;
  /// Read sectors the L2 looked up for the SMs' requests, what the request coalescer did not
  /// merge (Nsight Compute's lts__t_sectors_srcunit_tex_op_read; simulated: read_sectors).
  std::optional<double> l2_read_lookups;
  std::vector<double> waves;           ///< per kernel
};

struct CaseComparison {
  std::string name, group, subset, family, experiment_file;
  std::string duration_source;  ///< "events" (CUDA events, no profiler) or "ncu" (gpu__time_duration)
  /// The SM clock Nsight Compute recorded over the case's kernels (sm__cycles_elapsed.avg.per_second,
  /// weighted by their durations), MHz; absent when the CSV lacks it.
  std::optional<double> measured_clock_mhz;
  /// The SM clock the case was simulated at, and whether it was the recorded one ("measured")
  /// or the arch's own (its power cap, or sm.clock_mhz: "model").
  double simulated_clock_mhz = 0;
  std::string clock_source = "model";
  /// The SM clock the counters (hit rate, DRAM bytes) were simulated at, when it differs from
  /// the duration's: an event-timed case whose counters Nsight Compute took at its own clock
  /// from a flushed L2 is simulated twice, once under each measurement's conditions.
  std::optional<double> counters_clock_mhz;
  /// The L2 the case was simulated from: "empty", or "write_flushed" for event times taken
  /// after do_bench's flush (validate.events_after: write_flush).
  std::string l2_start = "empty";
  CaseFigures measured, simulated;
  /// Simulated with this many noise seeds (validate's `seeds`): `simulated` is their mean, and
  /// these each figure's least and greatest (set when seeds > 1).
  int seeds = 1;
  std::optional<CaseFigures> simulated_min, simulated_max;
  std::optional<double> stream_bytes;  ///< buffer size of an L2 capacity-stream case
};

struct RankPairs {
  std::size_t compared = 0;  ///< pairs whose measured values differ by more than the tie tolerance
  std::size_t agree = 0;
  std::size_t ties = 0;      ///< pairs within the tolerance, not counted
};

struct Aggregate {
  std::size_t cases = 0;
  std::optional<double> hit_mae_pp;         ///< mean |measured - simulated| hit rate, points
  std::optional<double> dram_read_mape_pct; ///< mean |error| / measured, percent
  std::optional<double> dram_write_mape_pct;
  std::optional<double> duration_mape_pct;
  std::optional<double> l2_lookups_mape_pct;  ///< of l2_read_lookups: the request coalescer's merges, case by case
  RankPairs rank_duration, rank_dram;
  std::optional<double> rank_agreement;     ///< agreeing pairs / compared pairs, both metrics
  std::optional<double> knee_measured_mib, knee_simulated_mib;  ///< capacity-stream knee
  std::optional<double> knee_error_mib;
};

struct ValidationReport {
  std::vector<CaseComparison> cases;
  std::map<std::string, Aggregate> subsets;  ///< "calibration", "validation", "all"
  /// Per kernel family (validate.family), per subset ("calibration", "validation", "all").
  std::map<std::string, std::map<std::string, Aggregate>> families;
  double tie_tolerance = 0.02;
};

/// Targets; an unset one is not checked. `family` empty: the whole subset; a name: that
/// family's cases of the subset; "each": every family that has cases in the subset.
struct Targets {
  std::string subset = "validation";
  std::string family;
  std::optional<double> hit_mae_pp, dram_read_mape_pct, duration_mape_pct, rank_agreement, knee_error_mib;
  std::optional<double> l2_lookups_mape_pct;  ///< at most; only where the measurements have the lookups
};

/// Experiment files from paths (a folder contributes its *.yaml files, sorted by name).
std::vector<std::string> experiment_files(const std::vector<std::string>& paths);

/// Loads the experiments (each must be a single point) with `overrides` applied.
std::vector<Experiment> load_validation_experiments(const std::vector<std::string>& files,
                                                    const std::vector<std::string>& overrides);

/// The measured figures of a case. Throws InputError naming the case's files when a required
/// metric is missing, or when the case was measured on a GPU other than `arch`.
CaseFigures measured_figures(const MeasuredCase& m, const ArchSpec& arch, const std::string& experiment_file,
                             std::string& duration_source);
/// The simulated figures of a run.
CaseFigures simulated_figures(const SimResult& r);

/// Simulates every experiment (in parallel, `jobs` threads; results independent of it) and
/// compares it with its measured case. Every experiment must have a measured case.
/// Which SM clock a case is simulated at. `automatic`: the clock Nsight Compute recorded, when
/// the compared duration is Nsight Compute's and the CSV has the clock (the profiler locks the
/// clocks to base by default, a condition of the measurement that the arch's power model cannot
/// know), else the arch's; and where the duration is an event timing but the counters are
/// Nsight Compute's, the counters are simulated apart at its recorded clock (how far blocks
/// drift apart, and so how much they reuse, depends on the clock). `model`: always the arch's,
/// one simulation per case.
enum class ClockChoice { automatic, model };

/// `seeds` > 1: each case is simulated with that many seeds of the per-step noise (sim.seed,
/// sim.seed + 1, ...) and compared by their mean; near a tipping point one seed can move a
/// case's DRAM bytes by tens of percent (docs/validation.md, "Shared step noise").
/// `on_case`, when given, sees each case as soon as it is simulated (one call at a time, in the
/// order cases finish), so that a long run can write its cases as it goes. `done`, when given,
/// holds cases simulated before (by case name: a cut-short run's --cases-jsonl lines): a case
/// found there for the same experiment file takes its simulated figures instead of being
/// simulated again, and on_case does not see it.
ValidationReport validate(const std::vector<Experiment>& experiments,
                          const std::map<std::string, MeasuredCase>& measured, int jobs, double tie_tolerance = 0.02,
                          sweep::ProgressStyle progress = sweep::ProgressStyle::off,
                          ClockChoice clock = ClockChoice::automatic, int seeds = 1,
                          const std::function<void(const CaseComparison&)>& on_case = {},
                          const std::map<std::string, CaseComparison>* done = nullptr);

/// Aggregates over the cases of one subset ("all": every case), of one family when `family` is
/// not empty.
Aggregate aggregate(const std::vector<CaseComparison>& cases, const std::string& subset, double tie_tolerance,
                    const std::string& family = "");

/// Loads targets from a YAML file: one mapping (keys: subset, family, hit_mae_pp,
/// dram_read_mape_pct, duration_mape_pct, rank_agreement, knee_error_mib, l2_lookups_mape_pct) or a
/// list of them.
std::vector<Targets> load_targets(const std::string& path);
/// The targets missed, one line each (empty: all met).
std::vector<std::string> missed_targets(const ValidationReport& r, const Targets& t);

}  // namespace tilesim
