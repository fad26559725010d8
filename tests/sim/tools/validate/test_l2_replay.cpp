// The L2 model under a given block timeline (sim/tools/validate/l2_replay.hpp): the simulator's
// own timeline gives back its own traffic, a different timing gives different traffic, and the
// timeline reader's refusals.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/core/simulator.hpp"
#include "sim/tools/validate/l2_replay.hpp"

using namespace tilesim;

namespace {

// Eight SMs and a 2 MiB L2 against 4 MiB operands: what the L2 keeps depends on when blocks run.
ExperimentPoint small_gemm(const std::string& order) {
  const std::string text =
      "arch: h100\n"
      "arch_overrides: {sm: {count: 8, l2_port_fast_sms: [], gpcs: [], partition_map: interleaved}, l2: {bytes: 2097152}, power: {cap_w: 0}}\n"
      "workload: {kind: gemm, m: 2048, n: 2048, k: 1024, dtype: fp16, tile: [128, 128, 64], stages: 3}\n"
      "order: " + order + "\n";
  return load_experiment_text(text, "exp.yaml", ".", {}).points.at(0);
}

std::vector<TimelineBlock> timeline_of(const SimResult& r) {
  std::vector<TimelineBlock> t;
  for (const BlockRecord& b : r.blocks) {
    if (b.block == kNoBlock) continue;
    t.push_back({b.kernel, b.block, b.sm, b.start / 1000.0, b.end / 1000.0});
  }
  return t;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("l2-replay: the simulator's own timeline gives back the simulated traffic", "[l2_replay]") {
  for (const char* order : {"{kind: row}", "{kind: column}", "{kind: grouped, group_m: 4}"}) {
    const ExperimentPoint p = small_gemm(order);
    const SimResult r = simulate(*p.workload, p.arch, p.options);
    const std::vector<L2ReplayKernel> k = replay_l2(*p.workload, p.arch, timeline_of(r));
    REQUIRE(k.size() == 1);
    CHECK(k[0].blocks == 256);
    const double sim_bytes = static_cast<double>(r.kernels[0].mem.dram_read_bytes);
    INFO(order << ": replay " << k[0].dram_read_bytes << " B, simulated " << sim_bytes << " B");
    // Steps evenly spread over a block and no coalescer: close, not identical.
    CHECK(std::abs(k[0].dram_read_bytes / sim_bytes - 1.0) < 0.05);
    CHECK(k[0].dram_read_bytes >= 8u << 20);  // A and B at least once
    CHECK(k[0].write_sectors * 32 == 2048u * 2048 * 2);
  }
}

TEST_CASE("l2-replay: the same blocks at other times move other traffic", "[l2_replay]") {
  const ExperimentPoint p = small_gemm("{kind: row}");
  const SimResult r = simulate(*p.workload, p.arch, p.options);
  std::vector<TimelineBlock> t = timeline_of(r);
  const std::uint64_t simulated = replay_l2(*p.workload, p.arch, t)[0].dram_read_bytes;
  // Every block at once: the slices of A and B in flight (three steps of 512 KiB) are read about
  // once and shared by all the blocks that need them before later steps' evict them.
  for (TimelineBlock& b : t) {
    b.start_ns = 0;
    b.end_ns = 1000;
  }
  const std::uint64_t together = replay_l2(*p.workload, p.arch, t)[0].dram_read_bytes;
  CHECK(together < (8u << 20) * 1.2);
  CHECK(simulated > together * 3);
}

TEST_CASE("l2-replay: timelines name blocks by index or by tile, and a case picks rows", "[l2_replay]") {
  const ExperimentPoint p = small_gemm("{kind: row}");
  std::string csv = "case,program,pid_m,pid_n,sm,start_ns,end_ns\n";
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      csv += "mine,0," + std::to_string(m) + "," + std::to_string(n) + "," + std::to_string((m * 16 + n) % 8) + ",0,10\n";
      csv += "other,0," + std::to_string(m) + "," + std::to_string(n) + ",0,5,6\n";
    }
  const std::string path = write_temp("tilesim_l2_replay_tiles.csv", csv);
  const std::vector<TimelineBlock> t = read_block_timeline(path, *p.workload, "mine");
  REQUIRE(t.size() == 256);
  CHECK(t[17].block == 17);  // pid_m 1, pid_n 1 of a 16 x 16 grid
  CHECK(t[17].sm == 1);
  CHECK(t[17].end_ns == 10.0);
  CHECK_THROWS_WITH(read_block_timeline(path, *p.workload, ""),
                    Catch::Contains(":3: block 0 of kernel 'gemm' appears twice (first on line 2)"));
  CHECK_THROWS_WITH(read_block_timeline(path, *p.workload, "nobody"), Catch::Contains("no blocks of case 'nobody'"));
}

TEST_CASE("l2-replay: a bad timeline is one clear error naming file and line", "[l2_replay]") {
  const ExperimentPoint p = small_gemm("{kind: row}");
  const auto err = [&](const std::string& text) {
    const std::string path = write_temp("tilesim_l2_replay_bad.csv", text);
    try {
      (void)replay_l2(*p.workload, p.arch, read_block_timeline(path, *p.workload, ""));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(err("block,start_ns,end_ns\n0,0,1\n"), Catch::Contains(":1: expected a header with the columns sm"));
  CHECK_THAT(err("sm,start_ns,end_ns\n0,0,1\n"), Catch::Contains("expected a column `block`, or `pid_m` and `pid_n`"));
  CHECK_THAT(err("block,sm,start_ns,end_ns\n0,0,abc,1\n"),
             Catch::Contains(":2: start_ns: expected a number >= 0, got 'abc'"));
  CHECK_THAT(err("block,sm,start_ns,end_ns\n256,0,0,1\n"), Catch::Contains(":2: block: expected an integer below 256"));
  CHECK_THAT(err("block,sm,start_ns,end_ns\n0,0,5,1\n"), Catch::Contains(":2: end_ns is before start_ns"));
  CHECK_THAT(err("block,sm,start_ns,end_ns\n0,0,0,1\n"), Catch::Contains("kernel 'gemm' lacks block 1"));
  CHECK_THAT(err("pid_m,pid_n,sm,start_ns,end_ns\n0,16,0,0,1\n"), Catch::Contains(":2: pid_n: expected an integer below 16"));
  CHECK_THAT(err(""), Catch::Contains("empty file"));
  std::string all = "block,sm,start_ns,end_ns\n";
  for (int b = 0; b < 256; ++b) all += std::to_string(b) + "," + (b == 9 ? "8" : "0") + ",0,1\n";
  CHECK_THAT(err(all), Catch::Contains("SM 8 does not exist on h100 (8 SMs)"));
}
