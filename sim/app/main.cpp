// tilesim: the command-line entry point. Dispatches to a verb; maps errors to exit codes
// (2 = bad input, 3 = simulated deadlock, 4 = a validation target missed, 1 = internal error).
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "sim/app/commands.hpp"

namespace {

const char* kUsage = R"(tilesim — a tile-level simulator of a GPU's memory hierarchy

usage: tilesim <command> [options]

commands:
  run [EXPERIMENT.yaml]   simulate one experiment, or every point of its sweep (no file: a
                          built-in comparison of launch orders on an 8192^3 fp16 GEMM on h100)
  trace EXPERIMENT.yaml -o FILE
                          write the experiment's dispatch sequence and block programs to a trace
  replay FILE             simulate a trace file
  l2-replay EXPERIMENT.yaml --timeline FILE
                          the experiment's requests through the L2 model at the times a block
                          timeline gives (measured on a GPU), beside the simulation's own
  order ORDER --grid MxN [-o FILE]
                          write a launch order's dispatch sequence as an order file
  order-search --grid MxN [--chain N1] --cache C [-o FILE]
                          the order with the fewest DRAM panel loads (exact on small grids),
                          of one GEMM grid or of a producer/consumer pair
  tune EXPERIMENT.yaml [--strategy exhaustive|heuristic|greedy] [-o BEST.yaml]
                          search the experiment's `tune:` axes for the fastest configuration
  tune --model NAME --batch B --seq S [--arch A] [--layer-top K] [--json FILE]
                          tune every kernel of one transformer layer alone, then the whole
                          layer with the L2 carried between kernels, prefill and decode
  validate --measured CSV... --experiments DIR|YAML...
                          compare simulated with measured kernels (Nsight Compute CSVs)
  import ncu|cutlass CSV... -o DIR
                          experiments from Nsight Compute raw pages or CUTLASS profiler CSVs,
                          ready for validate
  calibrate SPEC.yaml -o ARCH.yaml
                          fit an arch preset's free parameters to measurements
  report OUTDIR [-o FILE] an HTML page (tables, charts) of a sweep's output folder; opens offline
  explore EXPERIMENT.yaml -o PAGE.html [--compare OTHER.yaml]
                          the launch-order explorer: step through the dispatches, watch the L2,
                          build an order by hand; one page that opens offline
  policies [FAMILY]       the names every policy family accepts (workload, order, sync,
                          replacement, hash, dispatch), with what each does
  help                    this text

`tilesim <command> --help` lists a command's options. Exit codes: 0 ok, 2 bad input
(the message names the file, key or line), 3 a simulated deadlock, 4 a validation target
missed, 1 an internal error.
)";

// One write per message: under mpirun every rank may report the same error at once, and
// pieces written separately interleave.
void say(const char* prefix, const char* what) {
  const std::string line = std::string(prefix) + what + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

int run_verb(const std::string& verb, const std::vector<std::string>& args);

}  // namespace

int main(int argc, char** argv) {
  // Logs go to stderr, so that stdout holds only results (tables, and what a pipe reads).
  spdlog::set_default_logger(spdlog::stderr_logger_mt("tilesim"));
  spdlog::set_pattern("tilesim: %l: %v");
  spdlog::set_level(spdlog::level::warn);
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string verb = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  const int code = run_verb(verb, args);
  // Results go to stdout: a write that failed (a full disk, a closed pipe) is an error too.
  std::cout.flush();
  if (!std::cout && code == 0) {
    say("tilesim: error: ", "writing to standard output failed");
    return 2;
  }
  return code;
}

namespace {

int run_verb(const std::string& verb, const std::vector<std::string>& args) {
  try {
    if (verb == "run") return tilesim::app::cmd_run(args);
    if (verb == "trace") return tilesim::app::cmd_trace(args);
    if (verb == "replay") return tilesim::app::cmd_replay(args);
    if (verb == "l2-replay") return tilesim::app::cmd_l2_replay(args);
    if (verb == "order") return tilesim::app::cmd_order(args);
    if (verb == "order-search") return tilesim::app::cmd_order_search(args);
    if (verb == "tune") return tilesim::app::cmd_tune(args);
    if (verb == "validate") return tilesim::app::cmd_validate(args);
    if (verb == "calibrate") return tilesim::app::cmd_calibrate(args);
    if (verb == "report") return tilesim::app::cmd_report(args);
    if (verb == "explore") return tilesim::app::cmd_explore(args);
    if (verb == "import") return tilesim::app::cmd_import(args);
    if (verb == "policies") return tilesim::app::cmd_policies(args);
    if (verb == "help" || verb == "--help" || verb == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (verb == "--version") {
      std::cout << "tilesim " << TILESIM_VERSION << "\n";
      return 0;
    }
    std::cerr << "tilesim: error: unknown command '" << verb << "'\n\n" << kUsage;
    return 2;
  } catch (const tilesim::InputError& e) {
    say("tilesim: error: ", e.what());
    return e.exit_code();
  } catch (const tilesim::DeadlockError& e) {
    say("tilesim: deadlock: ", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    say("tilesim: internal error: ", e.what());
    return 1;
  }
}

}  // namespace
