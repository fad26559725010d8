// `tilesim run`: one experiment or a sweep, printed as a table, optionally JSON and CSV, and
// with --out a folder that an interrupted sweep resumes from. Under mpirun the points are
// spread over the ranks; rank 0 prints and writes.
#include <boost/program_options.hpp>
#include <spdlog/spdlog.h>

#include <iostream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/report/report.hpp"
#include "sim/run/compare.hpp"
#include "sim/run/progress.hpp"
#include "sim/run/runner.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

namespace {

// --dry-run: the validated points, one line each, and what a folder would resume.
void print_points(std::ostream& out, const ExperimentPlan& plan) {
  out << "experiment: " << plan.name << "  points: " << plan.size();
  if (plan.sweep.grid_size != plan.size()) out << " (of " << plan.sweep.grid_size << " in the grid; the rest filtered)";
  out << "\n";
  for (std::size_t i = 0; i < plan.size(); ++i)
    out << i << "  " << plan.point_hash(i).substr(0, 12) << "  " << (plan.label(i).empty() ? "(single point)" : plan.label(i))
        << "\n";
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts("tilesim run [EXPERIMENT.yaml] [options]");
  std::vector<std::string> sets;
  std::string json_path, csv_path, timeline_path, experiment, out_dir, mode;
  int jobs = 0;
  opts.add_options()("help,h", "show this help")(
      "set", po::value(&sets)->composing(), "override a key: --set workload.m=4096 (repeatable; value is YAML)")(
      "out,o", po::value(&out_dir),
      "write the sweep into folder DIR as it runs (results.jsonl, summary.json/.csv, kernels.csv); "
      "run again to resume: finished points are skipped")(
      "json", po::value(&json_path), "write results as JSON to FILE")("csv", po::value(&csv_path),
                                                                       "write results as CSV to FILE (a row per kernel)")(
      "timeline", po::value(&timeline_path),
      "write the per-block timeline of a single point to FILE (.csv: CSV, else Perfetto trace JSON)")(
      "jobs,j", po::value(&jobs)->default_value(0), "simulate up to N sweep points in parallel (0 = all cores)")(
      "dry-run,n", "validate every point and list them, simulate nothing")(
      "mode", po::value(&mode),
      "exact (every block) or sampled (skip the steady middle of kernels whose dispatch repeats, or of long ones whose per-wave rates hold level); "
      "the same as --set sim.mode=MODE")(
      "quiet,q", "print no table and no progress")("verbose,v", "log progress to stderr");
  const po::variables_map vm = parse_args(args, opts, "experiment", &experiment);
  if (vm.count("help")) {
    std::cout << opts
              << "\nWith no EXPERIMENT, runs the built-in comparison of launch orders.\n"
                 "A sweep prints the table of all points, then its comparison: each group of points that\n"
                 "differ only in the compared axis (sweep.baseline), fastest first, with speedups.\n"
                 "Under `mpirun -n R`, the points are spread over R ranks; rank 0 prints and writes.\n"
                 "Progress: a bar on a terminal, else a line every 10 s once a run takes that long\n"
                 "(stderr; --quiet silences it). A point being simulated counts by its dispatched blocks.\n";
    return 0;
  }
  if (vm.count("verbose")) spdlog::set_level(spdlog::level::info);
  if (jobs < 0) throw InputError("--jobs: expected a non-negative integer");
  if (!mode.empty()) {
    if (mode != "exact" && mode != "sampled") throw InputError("--mode: expected exact or sampled, got '" + mode + "'");
    sets.push_back("sim.mode=" + mode);
  }

  sweep::ProcessGroup group;
  if (!group.is_writer()) spdlog::set_level(spdlog::level::err);  // one voice for the run
  const ExperimentPlan plan = experiment.empty()
                                  ? load_plan_text(default_experiment_yaml(), "<built-in experiment>", ".", sets)
                                  : load_plan(experiment, sets);
  if (vm.count("dry-run")) {
    sweep::WorkloadCache cache;
    for (std::size_t i = 0; i < plan.size(); ++i) plan.build(i, &cache);
    if (group.is_writer()) print_points(std::cout, plan);
    return 0;
  }
  const bool sweep = plan.size() > 1 || !plan.label(0).empty();
  if (!timeline_path.empty()) {
    // Checked before simulating: a sweep would otherwise run to the end and then fail.
    if (plan.size() != 1)
      throw InputError("--timeline writes the blocks of one simulated point, but the sweep has " +
                       std::to_string(plan.size()) +
                       " points; drop the sweep with --set 'sweep={}' and choose its values with --set (e.g. --set workload.m=4096)");
    if (!out_dir.empty()) throw InputError("--timeline and --out: give one of them (--timeline runs a single point)");
    if (!group.is_writer()) return 0;
    const ExperimentPoint p = plan.build(0);
    SimResult r = simulate(*p.workload, p.arch, p.options);
    r.experiment = plan.name;
    r.point = p.label;
    const std::vector<RunBounds> bounds = {
        compute_traffic_bounds(*p.workload, p.arch.l2.bytes, infer_gemm_shapes(*p.workload))};
    if (!vm.count("quiet")) print_table(std::cout, plan.name, {r}, &bounds);
    write_outputs(plan.name, {r}, sweep, json_path, csv_path, &bounds);
    write_timeline(timeline_path, r);
    return 0;
  }

  sweep::RunSettings settings;
  settings.jobs = jobs;
  settings.out_dir = out_dir;
  settings.progress = sweep::progress_style(vm.count("quiet") > 0);
  const sweep::SweepOutcome outcome = sweep::run_sweep(plan, settings, group);
  if (!group.is_writer()) return 0;
  std::vector<nlohmann::json> results;
  for (const auto& p : outcome.points) results.push_back(p.at("result"));
  if (!vm.count("quiet")) {
    print_table(std::cout, plan.name, results);
    sweep::print_comparison(std::cout, plan.sweep, outcome.points, outcome.groups);
  }
  write_outputs(plan.name, results, sweep, json_path, csv_path);
  return 0;
}

}  // namespace tilesim::app
