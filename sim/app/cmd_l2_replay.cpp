// `tilesim l2-replay`: the experiment's requests through the L2 model at the times a block
// timeline gives (measured on a GPU, or another run's --timeline), beside the simulation's own.
// The difference between the two is what the simulated timing does to the cache.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/config/experiment.hpp"
#include "sim/tools/validate/l2_replay.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

namespace {

// The simulation's read hit rate with the coalescer's merged requests counted as hits: the
// replay has no coalescer, so every request it makes is looked up and a merged one would hit.
double sim_read_hit(const MemCounters& m) {
  const double all = static_cast<double>(m.read_sectors + m.coalesced_sectors);
  return all > 0 ? (m.read_hit_sectors + m.coalesced_sectors) / all : 0.0;
}

void print_rows(const std::vector<L2ReplayKernel>& replay, const SimResult* sim) {
  std::printf("%-16s %7s  %-22s  %-24s  %-24s\n", "kernel", "blocks", "L2 read hit", "DRAM read GB",
              "DRAM write GB (evicted)");
  std::printf("%-16s %7s  %-22s  %-24s  %-24s\n", "", "", sim ? "replay / simulated" : "replay",
              sim ? "replay / simulated" : "replay", sim ? "replay / simulated" : "replay");
  for (std::size_t k = 0; k < replay.size(); ++k) {
    const L2ReplayKernel& r = replay[k];
    if (r.blocks == 0) continue;
    char hit[64], rd[64], wr[64];
    if (sim) {
      const MemCounters& m = sim->kernels[k].mem;
      std::snprintf(hit, sizeof hit, "%5.1f%% / %5.1f%%", 100 * r.read_hit_rate(), 100 * sim_read_hit(m));
      std::snprintf(rd, sizeof rd, "%8.3f / %8.3f", r.dram_read_bytes / 1e9, m.dram_read_bytes / 1e9);
      std::snprintf(wr, sizeof wr, "%8.3f / %8.3f", r.dram_write_bytes / 1e9, m.dram_write_bytes / 1e9);
    } else {
      std::snprintf(hit, sizeof hit, "%5.1f%%", 100 * r.read_hit_rate());
      std::snprintf(rd, sizeof rd, "%8.3f", r.dram_read_bytes / 1e9);
      std::snprintf(wr, sizeof wr, "%8.3f", r.dram_write_bytes / 1e9);
    }
    std::printf("%-16s %7u  %-22s  %-24s  %-24s\n", r.name.c_str(), r.blocks, hit, rd, wr);
  }
}

nlohmann::json to_json(const std::string& experiment, const std::vector<L2ReplayKernel>& replay, const SimResult* sim) {
  nlohmann::json j = {{"experiment", experiment}, {"kernels", nlohmann::json::array()}};
  for (std::size_t k = 0; k < replay.size(); ++k) {
    const L2ReplayKernel& r = replay[k];
    if (r.blocks == 0) continue;
    nlohmann::json o = {{"name", r.name},
                        {"blocks", r.blocks},
                        {"replay", {{"read_sectors", r.read_sectors},
                                    {"read_hit_rate", r.read_hit_rate()},
                                    {"dram_read_bytes", r.dram_read_bytes},
                                    {"dram_write_bytes", r.dram_write_bytes},
                                    {"fabric_sectors", r.fabric_sectors}}}};
    if (sim) {
      const MemCounters& m = sim->kernels[k].mem;
      o["simulated"] = {{"read_hit_rate", sim_read_hit(m)},
                        {"dram_read_bytes", m.dram_read_bytes},
                        {"dram_write_bytes", m.dram_write_bytes},
                        {"fabric_sectors", m.fabric_sectors},
                        {"duration_ns", static_cast<double>(sim->kernels[k].duration()) / 1000.0}};
    }
    j["kernels"].push_back(o);
  }
  return j;
}

}  // namespace

int cmd_l2_replay(const std::vector<std::string>& args) {
  po::options_description opts("tilesim l2-replay EXPERIMENT.yaml --timeline FILE [options]");
  std::vector<std::string> sets;
  std::string experiment, timeline, case_name, json_path;
  opts.add_options()("help,h", "show this help")(
      "timeline", po::value(&timeline),
      "block timeline CSV: columns sm, start_ns, end_ns and block (or pid_m, pid_n[, pid_z]); kernel_index "
      "optional (`tilesim run --timeline X.csv` writes one)")(
      "case", po::value(&case_name), "read only the timeline's rows whose `case` column is NAME")(
      "set", po::value(&sets)->composing(), "override a key: --set workload.m=4096 (repeatable)")(
      "json", po::value(&json_path), "write the figures as JSON to FILE")(
      "no-sim", "do not simulate the experiment for comparison (the replay alone)");
  const po::variables_map vm = parse_args(args, opts, "experiment", &experiment);
  if (vm.count("help")) {
    std::cout << opts
              << "\nEvery block of the timeline runs its steps evenly spread between its start and end, on its SM's\n"
                 "L2 half; the requests of all blocks reach the L2 model (empty at the start) in time order.\n"
                 "Beside it, the experiment simulated as `tilesim run` would: where the two differ, the\n"
                 "simulated timing, not the cache, is what moved the traffic (docs/validation.md).\n";
    return 0;
  }
  if (experiment.empty()) throw InputError("l2-replay: expected an EXPERIMENT.yaml");
  if (timeline.empty()) throw InputError("l2-replay: expected --timeline FILE");
  const Experiment e = load_experiment(experiment, sets);
  const ExperimentPoint& p = single_point(e, experiment, "l2-replay takes");
  const std::vector<TimelineBlock> blocks = read_block_timeline(timeline, *p.workload, case_name);
  const std::vector<L2ReplayKernel> replay = replay_l2(*p.workload, p.arch, blocks);
  SimResult sim;
  const bool compare = !vm.count("no-sim");
  if (compare) sim = simulate(*p.workload, p.arch, p.options);
  print_rows(replay, compare ? &sim : nullptr);
  if (!json_path.empty()) write_file(json_path, to_json(p.workload->name, replay, compare ? &sim : nullptr).dump(2) + "\n");
  return 0;
}

}  // namespace tilesim::app
