// `tilesim calibrate`: fits an arch preset's free parameters to the calibration subset of the
// measurements and writes the fitted preset with its provenance (docs/validation.md).
#include <boost/program_options.hpp>

#include <chrono>
#include <iostream>

#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/run/progress.hpp"
#include "sim/tools/validate/calibrate.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

int cmd_calibrate(const std::vector<std::string>& args) {
  po::options_description opts("tilesim calibrate SPEC.yaml -o ARCH.yaml [options]");
  std::string spec_path, out_path, note;
  int jobs = 0;
  opts.add_options()("help,h", "show this help")("output,o", po::value(&out_path), "fitted arch YAML to write")(
      "jobs,j", po::value(&jobs)->default_value(0), "simulate up to N cases in parallel (0 = all cores)")(
      "note", po::value(&note), "a line of provenance to record in the fitted preset")(
      "verbose,v", "print every evaluation")(
      "quiet,q", "print no progress (otherwise a status line: on a terminal redrawn, else every 10 s)");
  const po::variables_map vm = parse_args(args, opts, "spec", &spec_path);
  if (vm.count("help")) {
    std::cout << opts << "\nSPEC.yaml: arch (start), measured (CSVs or folders), experiments (YAMLs or folders;\n"
                         "those with validate.subset: calibration are fitted), parameters ({key: {min, max[, integer]}}\n"
                         "or {key: {values: [...]}}), objective scales, max_evaluations. See docs/validation.md.\n";
    return 0;
  }
  if (spec_path.empty()) throw InputError("calibrate: expected a SPEC.yaml");
  if (out_path.empty()) throw InputError("calibrate: -o: expected the fitted arch file to write");
  const CalibSpec spec = load_calib_spec(spec_path);
  const bool verbose = vm.count("verbose") > 0;
  const sweep::ProgressStyle style = verbose ? sweep::ProgressStyle::off : sweep::progress_style(vm.count("quiet") > 0);
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  int n = 0;
  const CalibResult r = calibrate(spec, jobs, [&](const std::string& line) {
    ++n;
    if (verbose) std::cerr << "calibrate: " << n << ": " << line << "\n";
    // The number of evaluations depends on the search: say how many so far and the latest.
    const auto now = std::chrono::steady_clock::now();
    const long s = static_cast<long>(std::chrono::duration<double>(now - start).count());
    const std::string status = "calibrate: " + std::to_string(n) + " evaluations in " + std::to_string(s / 60) + ":" +
                               (s % 60 < 10 ? "0" : "") + std::to_string(s % 60) + ", the last: " + line;
    if (style == sweep::ProgressStyle::bar) {
      std::cerr << "\r" << status << "\x1b[K" << std::flush;
    } else if (style == sweep::ProgressStyle::lines && now - last >= std::chrono::seconds(10)) {
      last = now;
      std::cerr << status << "\n";
    }
  });
  if (style == sweep::ProgressStyle::bar) std::cerr << "\n";
  write_file(out_path, fitted_arch_yaml(spec, r, note));
  std::cout << "fitted on " << r.calibration_cases.size() << " calibration cases in " << n << " evaluations:";
  for (const auto& [k, v] : r.values) std::cout << " " << k << "=" << v;
  std::cout << "\nobjective " << r.objective << "; wrote " << out_path
            << " (check it on the validation subset with tilesim validate)\n";
  return 0;
}

}  // namespace tilesim::app
