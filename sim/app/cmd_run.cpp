// `tilesim run`: one experiment or a sweep, printed as a table, optionally JSON and CSV.
#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <fstream>
#include <iostream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/app/run_points.hpp"
#include "sim/report/report.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts("tilesim run [EXPERIMENT.yaml] [options]");
  std::vector<std::string> sets;
  std::string json_path, csv_path, timeline_path, experiment;
  int jobs = 0;
  opts.add_options()("help,h", "show this help")(
      "set", po::value(&sets)->composing(), "override a key: --set workload.m=4096 (repeatable; value is YAML)")(
      "json", po::value(&json_path), "write results as JSON to FILE")("csv", po::value(&csv_path),
                                                                       "write results as CSV to FILE")(
      "timeline", po::value(&timeline_path),
      "write the per-block timeline of a single point to FILE (.csv: CSV, else Perfetto trace JSON)")(
      "jobs,j", po::value(&jobs)->default_value(0), "simulate up to N sweep points in parallel (0 = all cores)")(
      "quiet,q", "print no table")("verbose,v", "log progress to stderr");
  const po::variables_map vm = parse_args(args, opts, "experiment", &experiment);
  if (vm.count("help")) {
    std::cout << opts << "\nWith no EXPERIMENT, runs the built-in comparison of launch orders.\n";
    return 0;
  }
  if (vm.count("verbose")) spdlog::set_level(spdlog::level::info);
  if (jobs < 0) throw InputError("--jobs: expected a non-negative integer");

  const Experiment e = experiment.empty()
                           ? load_experiment_text(default_experiment_yaml(), "<built-in experiment>", ".", sets)
                           : load_experiment(experiment, sets);
  // Checked before simulating: a sweep would otherwise run to the end and then fail.
  if (!timeline_path.empty() && e.points.size() != 1)
    throw InputError("--timeline writes the blocks of one simulated point, but the sweep has " +
                     std::to_string(e.points.size()) +
                     " points; drop the sweep with --set 'sweep={}' and choose its values with --set (e.g. --set workload.m=4096)");
  spdlog::info("{}: {} point(s) validated, simulating", e.name, e.points.size());
  const std::vector<SimResult> results = simulate_points(e, jobs);
  const bool sweep = e.points.size() > 1 || !e.points[0].label.empty();
  // Bounds need only the workload and the L2 size; GEMM shapes (for the I/O bound) are not
  // passed yet, so they hold the compulsory traffic only.
  std::vector<RunBounds> bounds;
  for (const ExperimentPoint& p : e.points) bounds.push_back(compute_traffic_bounds(p.workload, p.arch.l2.bytes, infer_gemm_shapes(p.workload)));
  if (!vm.count("quiet")) print_table(std::cout, e.name, results, &bounds);
  write_outputs(e.name, results, sweep, json_path, csv_path, &bounds);
  if (!timeline_path.empty()) write_timeline(timeline_path, results[0]);
  return 0;
}

}  // namespace tilesim::app
