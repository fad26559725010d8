#pragma once
// Fitting an arch preset's free parameters to measurements (`tilesim calibrate`).
//
// The spec names a starting arch, the measurements, the experiments (only those whose
// `validate.subset` is `calibration` are fitted), the parameters with their ranges, and the
// objective's scales. Continuous parameters are fitted by Nelder-Mead in the unit box of their
// ranges; each combination of the discrete ones (`values:`) gets its own fit, and the best
// wins. Every evaluation simulates the calibration cases with the candidate parameters as
// arch_overrides. Deterministic: no random restarts, the same spec gives the same fit.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/tools/validate/validation.hpp"

namespace tilesim {

struct CalibParam {
  std::string key;                  ///< dotted arch key, e.g. compute.mma_efficiency
  double lo = 0, hi = 0;            ///< continuous range
  bool integer = false;             ///< round to an integer (ways, sizes)
  std::vector<std::string> values;  ///< discrete: the values to try (YAML scalars)
};

struct CalibSpec {
  std::string file;                 ///< the spec's path (relative paths resolve against its folder)
  std::string arch;                 ///< preset name or arch file to start from
  std::vector<std::string> measured, experiments;
  std::vector<CalibParam> params;
  /// Objective = sum of each aggregate error over its scale (default the targets).
  double hit_scale = 3, dram_scale = 10, time_scale = 15, knee_scale = 2;
  int max_evaluations = 80;         ///< per combination of discrete values
  double tolerance = 0.002;         ///< stop when the simplex's objective spread is below this
};

CalibSpec load_calib_spec(const std::string& path);

struct CalibResult {
  std::vector<std::pair<std::string, std::string>> values;  ///< fitted key -> value (YAML scalar)
  double objective = 0;
  Aggregate calibration;            ///< the fitted preset's errors on the calibration subset
  int evaluations = 0;
  std::vector<std::string> calibration_cases;
};

/// The objective of an aggregate under a spec's scales (missing figures count 0).
double calib_objective(const Aggregate& a, const CalibSpec& s);

/// Runs the fit. `log` receives one line per evaluation (may be empty).
CalibResult calibrate(const CalibSpec& spec, int jobs, const std::function<void(const std::string&)>& log);

/// The fitted preset as YAML text: the starting arch file's text with the fitted values put in
/// place (comments kept) and a `calibration:` block of provenance appended.
std::string fitted_arch_yaml(const CalibSpec& spec, const CalibResult& r, const std::string& provenance_note);

/// Sets `key` (dotted, block-style YAML) to `value` in `text`, keeping comments; inserts the key
/// at the end of its parent block when absent. Exposed for tests.
std::string set_yaml_key(const std::string& text, const std::string& key, const std::string& value);

/// Nelder-Mead on [0,1]^d (points are clamped into the box). Exposed for tests.
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                                double step, int max_evaluations, double tolerance, int* evaluations = nullptr);

}  // namespace tilesim
