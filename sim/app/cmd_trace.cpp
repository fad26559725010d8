// `tilesim trace` writes an experiment's workload (dispatch sequence and block programs) to a
// trace file; `tilesim replay` simulates one. run and trace+replay give identical results.
#include <boost/program_options.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

#include "common/error.hpp"
#include "common/text.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/config/experiment.hpp"
#include "sim/report/l2_stream.hpp"
#include "sim/report/report.hpp"
#include "traces/trace.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

int cmd_trace(const std::vector<std::string>& args) {
  po::options_description opts("tilesim trace EXPERIMENT.yaml -o FILE | --l2-stream FILE [options]");
  std::vector<std::string> sets;
  std::string out_path, experiment, stream_path;
  opts.add_options()("help,h", "show this help")("output,o", po::value(&out_path), "trace file to write")(
      "text", "write the line-based text form instead of the binary form")(
      "l2-stream", po::value(&stream_path),
      "simulate the experiment and write the L2 request stream it makes to FILE (docs/trace-format.md)")(
      "set", po::value(&sets)->composing(), "override a key: --set workload.m=4096 (repeatable)");
  const po::variables_map vm = parse_args(args, opts, "experiment", &experiment);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (experiment.empty()) throw InputError("trace: expected an EXPERIMENT.yaml");
  if (out_path.empty() && stream_path.empty()) throw InputError("trace: expected -o FILE (or --l2-stream FILE)");
  const Experiment e = load_experiment(experiment, sets);
  const ExperimentPoint& p = single_point(e, experiment, "trace writes");
  if (!out_path.empty())
    write_trace_file(*p.workload, out_path, vm.count("text") ? TraceFormat::text : TraceFormat::binary);
  if (!stream_path.empty()) {
    L2StreamWriter writer(stream_path, p.arch.l2);
    SimOptions opt = p.options;
    opt.observer = &writer;
    (void)simulate(*p.workload, p.arch, opt);
    writer.close();
    std::cout << stream_path << ": " << writer.requests() << " L2 requests\n";
  }
  return 0;
}

int cmd_replay(const std::vector<std::string>& args) {
  po::options_description opts("tilesim replay FILE [options]");
  double launch_gap_ns = 0, poll_ns = 200;
  std::string dispatch = "oldest_kernel";
  std::string trace_path, arch = "h100", json_path, csv_path, timeline_path;
  opts.add_options()("help,h", "show this help")("arch", po::value(&arch)->default_value("h100"),
                                                 "arch preset name or arch YAML file")(
      "json", po::value(&json_path), "write results as JSON to FILE")("csv", po::value(&csv_path),
                                                                       "write results as CSV to FILE")(
      "timeline", po::value(&timeline_path),
      "write the per-block timeline to FILE (.csv: CSV, else Perfetto trace JSON)")(
      "cold-l2-per-kernel", "empty the L2 when a kernel launches on an idle GPU (as Nsight Compute measures)")(
      "launch-gap-ns", po::value(&launch_gap_ns)->default_value(0), "time between kernels of one stream (sim.launch_gap_ns)")(
      "dispatch", po::value(&dispatch)->default_value("oldest_kernel"),
      "which kernel's blocks take free SMs first: oldest_kernel or round_robin (sim.dispatch)")(
      "poll-interval-ns", po::value(&poll_ns)->default_value(200), "semaphore poll interval (sim.poll_interval_ns)")(
      "quiet,q", "print no table");
  const po::variables_map vm = parse_args(args, opts, "trace", &trace_path);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (trace_path.empty()) throw InputError("replay: expected a trace FILE");
  const Workload w = read_trace_file(trace_path);
  const ArchSpec a = load_arch(arch, YAML::Node(), "--arch");
  SimOptions o;
  if (vm.count("cold-l2-per-kernel")) o.cold_l2 = SimOptions::ColdL2::per_kernel;
  // The ranges sim.launch_gap_ns and sim.poll_interval_ns allow in an experiment; the negated
  // comparisons also refuse nan.
  if (!(launch_gap_ns >= 0 && launch_gap_ns <= 1e9))
    throw InputError("--launch-gap-ns: expected a number of nanoseconds in [0, 1e9], got " + std::to_string(launch_gap_ns));
  if (!(poll_ns >= 1 && poll_ns <= 1e9))
    throw InputError("--poll-interval-ns: expected a number of nanoseconds in [1, 1e9], got " + std::to_string(poll_ns));
  const std::vector<std::string> rules = dispatch_names();
  if (std::find(rules.begin(), rules.end(), dispatch) == rules.end())
    throw InputError("--dispatch: expected one of: " + join(rules) + "; got '" + dispatch + "'");
  o.launch_gap_ns = launch_gap_ns;
  o.poll_interval_ns = poll_ns;
  o.dispatch = dispatch_rule(dispatch);
  SimResult r = simulate(w, a, o);
  r.experiment = w.name;
  const std::vector<RunBounds> bounds = {compute_traffic_bounds(w, a.l2.bytes, infer_gemm_shapes(w))};
  if (!vm.count("quiet")) print_table(std::cout, w.name, {r}, &bounds);
  write_outputs(w.name, {r}, false, json_path, csv_path, &bounds);
  if (!timeline_path.empty()) write_timeline(timeline_path, r);
  return 0;
}

}  // namespace tilesim::app
