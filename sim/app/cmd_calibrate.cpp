// `tilesim calibrate`: fits an arch preset's free parameters to the calibration subset of the
// measurements and writes the fitted preset with its provenance (docs/validation.md).
#include <boost/program_options.hpp>

#include <iostream>

#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
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
      "verbose,v", "print every evaluation");
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
  int n = 0;
  const CalibResult r = calibrate(spec, jobs, [&](const std::string& line) {
    ++n;
    if (verbose) std::cerr << "calibrate: " << n << ": " << line << "\n";
  });
  write_file(out_path, fitted_arch_yaml(spec, r, note));
  std::cout << "fitted on " << r.calibration_cases.size() << " calibration cases in " << n << " evaluations:";
  for (const auto& [k, v] : r.values) std::cout << " " << k << "=" << v;
  std::cout << "\nobjective " << r.objective << "; wrote " << out_path
            << " (check it on the validation subset with tilesim validate)\n";
  return 0;
}

}  // namespace tilesim::app
