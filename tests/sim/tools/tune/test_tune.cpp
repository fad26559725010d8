// `tilesim tune`: the heuristic's rules on hand-checked cases, the persistent cache (a second
// run simulates nothing), illegal points skipped, and -o writing an experiment `run` accepts.
#include <catch2/catch.hpp>

#include <cmath>

#include <nlohmann/json.hpp>
#include <regex>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/tools/tune/heuristic.hpp"
#include "sim/tools/tune/tune.hpp"
#include "tests/sim/cli_util.hpp"

using namespace tilesim;
using namespace tilesim::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

ExperimentPoint build_one(const std::string& yaml) {
  return load_plan_text(yaml, "<test>", ".", {}).build(0);
}

// 1024^3 fp16, 128x128 tiles: an 8x8 grid of 64 blocks.
const char* kSmall = R"(arch: h100
workload: {kind: gemm, m: 1024, n: 1024, k: 1024, dtype: fp16, tile: [128, 128, 64], stages: 3, blocks_per_sm: 1}
)";

const char* kTune = R"(name: tune-test
arch: h100
workload: {kind: gemm, m: 1024, n: 1024, k: 512, dtype: fp16, tile: [128, 128, 64], stages: 3}
order: {kind: row}
tune:
  workload.tile: [[128, 128, 64], [64, 128, 64], [256, 256, 128]]
  workload.stages: [2, 4]
  order: [{kind: row}, {kind: grouped, group_m: 4}]
)";

double number_after(const std::string& text, const std::string& what) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("(\\d+) " + what))) return -1;
  return std::stod(m[1]);
}

}  // namespace

TEST_CASE("tune heuristic: waves, tail, compute and DRAM of a hand-checked GEMM", "[tune]") {
  // At the preset's clock (its latency-bound estimate would draw more than the cap: 450 TFLOP/s
  // and 7 TB/s of L2 for 5 us; the capped estimate is the next test's).
  const std::string uncapped = std::string(kSmall) + "arch_overrides: {power: {cap_w: 0}}\n";
  const ExperimentPoint p = build_one(uncapped);
  const tune::Estimate e = tune::estimate(*p.workload, p.arch);
  const double slots = p.arch.sm.count;  // blocks_per_sm 1
  CHECK(e.blocks_per_sm == 1);
  CHECK(e.waves == 1);  // 64 blocks on 132 SMs
  CHECK(e.last_wave_utilization == Approx(64.0 / slots));
  // One wave of one block per SM: a block's 2*128*128*1024 FLOP at one SM's MMA rate, plus the
  // main loop's fixed cost for each of its 1024/bk k-steps; or, if longer, its pipeline's waits:
  // a round trip (L2 latency and load-to-use time) per 3 (stages) k-steps, with the MMA.
  const MainLoopSpec& ml = p.arch.compute.mainloop(p.arch.compute.default_mainloop);
  const double clock_hz = p.arch.sm.clock_mhz * 1e6;
  // The kernel's tile (128 x 128 with the default 8 warps) has a measured ceiling.
  const double rate = p.arch.flops_per_cycle(Dtype::fp16) * clock_hz * ml.efficiency_for(128, 128, 8);
  CHECK(ml.efficiency_for(128, 128, 8) != ml.efficiency);
  const double ksteps = 1024.0 / 64;  // K / bk
  const double block_ns = 2.0 * 128 * 128 * 1024 / rate * 1e9 + ksteps * ml.step_overhead_cycles / clock_hz * 1e9;
  const double latency_ns = (ksteps * (ml.load_use_ns + p.arch.l2.hit_latency_ns) + block_ns) / 3;
  CHECK(e.compute_ns == Approx(std::max(block_ns, latency_ns)));
  // A main loop whose stage waits 5 us after its data arrives: the lone block's waits bind.
  const std::string slow = std::string(kSmall) +
                           "arch_overrides: {power: {cap_w: 0}, compute: {mainloops: {wgmma_cp_async: {efficiency: 0.855, "
                           "tile_efficiency: [], saturating_warps: 4, arbitration: fair, step_overhead_cycles: 220, "
                           "load_use_ns: 5000}}}}\n";
  const ExperimentPoint q = build_one(slow);
  const double slow_rate = q.arch.flops_per_cycle(Dtype::fp16) * clock_hz * 0.855;
  const double slow_block_ns = 2.0 * 128 * 128 * 1024 / slow_rate * 1e9 + ksteps * 220 / clock_hz * 1e9;
  const double waits_ns = (ksteps * (5000 + q.arch.l2.hit_latency_ns) + slow_block_ns) / 3;
  REQUIRE(waits_ns > slow_block_ns);
  CHECK(tune::estimate(*q.workload, q.arch).compute_ns == Approx(waits_ns));
  // A and B (2 MiB each) fit in half of L2: read once; C (2 MiB) written once.
  CHECK(e.dram_bytes == Approx(6.0 * 1024 * 1024));
  CHECK(e.time_ns == Approx(std::max({e.compute_ns, e.dram_ns, e.l2_ns})));
}

TEST_CASE("tune heuristic: a GEMM that would draw more than the power cap is estimated at a lower clock", "[tune][power]") {
  const std::string big = "arch: h100\nworkload: {kind: gemm, m: 8192, n: 8192, k: 8192, dtype: fp16, tile: [128, 128, 64], "
                          "stages: 3, blocks_per_sm: 2}\n";
  const ExperimentPoint capped = build_one(big);
  const ExperimentPoint free = build_one(big + "arch_overrides: {power: {cap_w: 0}}\n");
  const tune::Estimate ec = tune::estimate(*capped.workload, capped.arch);
  const tune::Estimate ef = tune::estimate(*free.workload, free.arch);
  // Compute-bound at the boost clock; under the cap its compute time grows by the clock's fall.
  CHECK(ef.compute_ns >= ef.dram_ns);
  CHECK(ec.compute_ns > 1.15 * ef.compute_ns);
  CHECK(ec.dram_bytes == Approx(ef.dram_bytes));
  // A decode GEMM (DRAM-bound: 3 TB/s of weights, little tensor work) draws far less than the
  // cap: the boost clock stays.
  const std::string decode = "arch: h100\nworkload: {kind: gemm, m: 16, n: 8192, k: 8192, dtype: fp16, "
                             "tile: [64, 64, 64], stages: 4}\n";
  const ExperimentPoint small = build_one(decode);
  const ExperimentPoint small_free = build_one(decode + "arch_overrides: {power: {cap_w: 0}}\n");
  CHECK(tune::estimate(*small.workload, small.arch).compute_ns ==
        tune::estimate(*small_free.workload, small_free.arch).compute_ns);
}

TEST_CASE("tune heuristic: the dispatch window of row and grouped orders", "[tune]") {
  const ExperimentPoint row = build_one(kSmall);
  const tune::Window w = tune::dispatch_window(row.workload->kernels[0], 16);
  CHECK(w.rows == 2);  // 16 tiles of an 8-wide grid in row order: two rows, all 8 columns
  CHECK(w.cols == 8);
  const ExperimentPoint grouped = build_one(std::string(kSmall) + "order: {kind: grouped, group_m: 4}\n");
  const tune::Window g = tune::dispatch_window(grouped.workload->kernels[0], 16);
  CHECK(g.rows == 4);  // groups of 4 rows: 16 tiles cover 4 rows x 4 columns
  CHECK(g.cols == 4);
}

TEST_CASE("tune heuristic: split-K adds partial-sum traffic and more blocks", "[tune]") {
  const ExperimentPoint one = build_one(kSmall);
  const std::string split = R"(arch: h100
workload: {kind: gemm, m: 1024, n: 1024, k: 1024, dtype: fp16, tile: [128, 128, 64], stages: 3, blocks_per_sm: 1, split_k: 4}
)";
  const ExperimentPoint s = build_one(split);
  const tune::Estimate a = tune::estimate(*one.workload, one.arch), b = tune::estimate(*s.workload, s.arch);
  CHECK(b.waves == 2);  // 256 blocks on 132 slots
  CHECK(b.dram_bytes == Approx(4.0 * 1024 * 1024 + 2.0 * 1024 * 1024 * 7));  // C: once + 3 slices read and written
  CHECK(b.dram_bytes > a.dram_bytes);
}

TEST_CASE("tune heuristic: an overlapped chain reads its intermediate from L2 and loses one tail", "[tune]") {
  // An ungated FFN (d 1024, f 4096, M 512): GEMM0 writes H [512 x 4096] fp16 = 4 MiB, GEMM1
  // reads it. Under stream order the kernels are scored one after the other, as two groups;
  // under rowsync they run concurrently (two streams): one group, whose DRAM lacks H's reads
  // and whose compute keeps only GEMM1's tail wave.
  const std::string base = "arch: h100\nworkload: {kind: ffn, d: 1024, f: 4096, m: 512, gated: false}\n";
  const ExperimentPoint stream = build_one(base + "sync: {kind: stream}\n");
  const ExperimentPoint rowsync = build_one(base + "sync: {kind: rowsync}\n");
  const tune::Estimate es = tune::estimate(*stream.workload, stream.arch);
  const tune::Estimate er = tune::estimate(*rowsync.workload, rowsync.arch);
  double h_bytes = 0;
  for (const Tensor& t : rowsync.workload->tensors)
    if (t.name == "H") h_bytes = double(t.footprint());
  REQUIRE(h_bytes == 512.0 * 4096 * 2);
  CHECK(er.dram_bytes == Approx(es.dram_bytes - h_bytes));
  CHECK(er.compute_ns <= es.compute_ns);
  CHECK(er.time_ns < es.time_ns);
}

TEST_CASE("tune plans: tune becomes the sweep, the base is the experiment as written", "[tune]") {
  const tune::TunePlans plans = tune::load_tune_plans_text(kTune, "<tune>", ".", {});
  CHECK(plans.search.size() == 12);
  CHECK(plans.base.size() == 1);
  CHECK(plans.base.label(0).empty());
  // `run` accepts a tune experiment and simulates it as written.
  CHECK(load_plan_text(kTune, "<tune>", ".", {}).size() == 1);
  CHECK_THROWS_WITH(tune::load_tune_plans_text("workload: {kind: gemm}\n", "x.yaml", ".", {}), Contains("tune:"));
  CHECK_THROWS_WITH(tune::load_tune_plans_text(std::string(kTune) + "sweep: {stages: [1]}\n", "x.yaml", ".", {}),
                    Contains("sweep"));
}

TEST_CASE("tune: illegal points skipped, the cache makes a second run free, -o runs", "[tune][cli]") {
  const fs::path dir = scratch_dir() / "tune";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "t.yaml") << kTune;
  const std::string common = (dir / "t.yaml").string() + " -j 2 --cache-dir " + (dir / "cache").string();

  const CliRun first = run_tilesim("tune " + common + " --strategy exhaustive -o " + (dir / "best.yaml").string());
  INFO(first.out);
  REQUIRE(first.code == 0);
  // [256,256,128] with 2 or 4 stages exceeds h100's shared memory: 4 points, 8 legal.
  CHECK(number_after(first.out, "legal") == 8);
  CHECK(number_after(first.out, "illegal") == 4);
  CHECK(number_after(first.out, "simulated") == 9);  // 8 legal points and the base
  CHECK_THAT(first.out, Contains("gap to the exhaustive best (all legal points cached): 0.00%"));

  const CliRun again = run_tilesim("tune " + common + " --strategy exhaustive");
  INFO(again.out);
  REQUIRE(again.code == 0);
  CHECK(number_after(again.out, "simulated") == 0);
  CHECK(number_after(again.out, "from cache") == 9);

  const CliRun heur = run_tilesim("tune " + common + " --strategy heuristic --top-fraction 0.25");
  INFO(heur.out);
  REQUIRE(heur.code == 0);
  CHECK(number_after(heur.out, "simulated") == 0);
  CHECK_THAT(heur.out, Contains("gap to the exhaustive best (all legal points cached)"));
  const CliRun greedy = run_tilesim("tune " + common + " --strategy greedy");
  INFO(greedy.out);
  CHECK(greedy.code == 0);

  // The best point's time in the tune table is the time `run` reports for best.yaml.
  std::smatch m;
  REQUIRE(std::regex_search(first.out, m, std::regex("\\n +1  .*?\\s{2,}([0-9.]+)\\s")));
  const double tuned_us = std::stod(m[1]);
  const CliRun run = run_tilesim("run " + (dir / "best.yaml").string() + " --json " + (dir / "best.json").string());
  INFO(run.out);
  REQUIRE(run.code == 0);
  const double run_ns = run_json_total(dir / "best.json").at("duration_ns").get<double>();
  CHECK(run_ns / 1e3 == Approx(tuned_us).margin(0.06));
}

TEST_CASE("tune: bad options name what was expected", "[tune][cli]") {
  CHECK_THROWS_AS(tune::parse_strategy("random"), InputError);
  CHECK_THROWS_WITH(tune::parse_objective("energy"), Contains("duration or dram"));
}

TEST_CASE("tune: a mistake in the experiment names the file's own line", "[tune][cli]") {
  const fs::path dir = scratch_dir() / "tune_typo";
  fs::create_directories(dir);
  // Line 3 holds the typo; the tune section comes after it.
  std::ofstream(dir / "t.yaml") << "name: t\narch: h100\n"
                                   "workload: {kind: gemm, m: 1024, n: 1024, k: 512, typo: 1, dtype: fp16, tile: [128, 128, 64]}\n"
                                   "tune:\n  workload.stages: [2, 3]\n";
  const CliRun r = run_tilesim("tune " + (dir / "t.yaml").string() + " --cache-dir ''");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("workload.typo (line 3): unknown key"));
  CHECK_THAT(r.out, !Contains("none of the"));
}
