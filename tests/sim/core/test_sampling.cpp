// Sampled mode (sim/core/sampling.hpp): the period found in dispatch sequences of known
// structure, the kernels it refuses, and a sampled run against the exact one.
#include <catch2/catch.hpp>

#include "sim/config/experiment.hpp"
#include "sim/core/sampling.hpp"
#include "sim/core/simulator.hpp"

using namespace tilesim;

namespace {

// Eight SMs, two blocks each (a window of 16), an L2 of 2 MiB, no power cap: small enough
// that a kernel of a few hundred blocks has tens of periods. Without the waiting blocks' hold on
// the pipe (waiting_holds, 2026-12-01): with it this kernel's spans no longer agree within the
// tolerance and nothing is skipped, the exact-repeat detection's weakness issue 15 names; these
// tests are of the skipping itself. Likewise with the coalescer of the presets before 2026-12-02
// (a 20 ns window grown by the crossbar's queue): with the presets' 400 ns window, whose merges
// follow the blocks' phases over more of each step, no span of this kernel agrees either.
const char* kSmallArch =
    "arch: h100\n"
    "arch_overrides: {sm: {count: 8, l2_port_fast_sms: [], gpcs: [], partition_map: interleaved},\n"
    "                 l2: {bytes: 2097152, request_coalescing_ns: 20, request_coalescing_queue: true}, power: {cap_w: 0},\n"
    "                 compute: {mainloops: {wgmma_cp_async: {waiting_holds: 0}}}}\n";

ExperimentPoint point(const std::string& workload, const std::string& order, const std::string& sim = "") {
  const std::string text = std::string(kSmallArch) + "workload: " + workload + "\norder: " + order + "\n" +
                           (sim.empty() ? "" : "sim: " + sim + "\n");
  return load_experiment_text(text, "exp.yaml", ".", {}).points.at(0);
}

const std::string kGemm = "{kind: gemm, m: 16384, n: 512, k: 512, dtype: fp16, tile: [128, 128, 64], stages: 3}";
const std::string kSquare = "{kind: gemm, m: 2048, n: 2048, k: 512, dtype: fp16, tile: [128, 128, 64], stages: 3}";
const std::string kSmallSquare = "{kind: gemm, m: 1024, n: 1024, k: 512, dtype: fp16, tile: [128, 128, 64], stages: 3}";

detail::KernelPeriod period_of(const std::string& workload, const std::string& order, std::uint32_t kernel = 0) {
  const ExperimentPoint p = point(workload, order);
  return detail::find_period(*p.workload, kernel, 16);
}

}  // namespace

TEST_CASE("sampling: the period of row, column and grouped orders is a row, a column, a group", "[sim][sampling]") {
  // The grid is 128 x 4 tiles: a row of tiles is 4 positions, a column 128, a group of 8 rows 32.
  CHECK(period_of(kGemm, "{kind: row}").period == 4);
  CHECK(period_of(kGemm, "{kind: row}").periodic == 512);
  CHECK(period_of(kGemm, "{kind: grouped, group_m: 8}").period == 32);
  CHECK_FALSE(period_of(kGemm, "{kind: row}").statistical);
  // Column order: down the first column each position moves A by a row of tiles and keeps B, but
  // the next column breaks the pattern; 128 periodic positions are too few to judge six spans of
  // a window (16) and keep a drain, and the whole-grid period (128) leaves no room either. Its
  // 32 windows are judged by their rates instead: boundaries every window.
  const detail::KernelPeriod column = period_of(kGemm, "{kind: column}");
  CHECK(column.statistical);
  CHECK(column.period == 16);
  CHECK(column.periodic == 512);
  CHECK(column.why_not.empty());
}


TEST_CASE("sampling: a Hilbert order has no period, and semaphores are refused", "[sim][sampling]") {
  // On a square grid the curve never repeats by a translation: 16 windows are judged by rates,
  // 4 windows (64 blocks) are too few for that and run whole.
  const detail::KernelPeriod hilbert = period_of(kSquare, "{kind: hilbert}");
  CHECK(hilbert.statistical);
  CHECK(hilbert.period == 16);
  const detail::KernelPeriod small = period_of(kSmallSquare, "{kind: hilbert}");
  CHECK(small.period == 0);
  CHECK_FALSE(small.statistical);
  CHECK_THAT(small.why_not, Catch::Contains("no period"));
  const std::string ffn = "{kind: ffn, d: 1024, f: 2048, m: 4096, gemm0: {tile: [128, 128, 64]}, gemm1: {tile: [128, 128, 64]}}";
  const ExperimentPoint p = point(ffn, "{kind: row}", "");
  const std::string rowsync = std::string(kSmallArch) + "workload: " + ffn + "\norder: {kind: row}\nsync: {kind: rowsync}\n";
  const ExperimentPoint synced = load_experiment_text(rowsync, "exp.yaml", ".", {}).points.at(0);
  bool refused = false;
  for (std::uint32_t k = 0; k < synced.workload->kernels.size(); ++k) {
    const detail::KernelPeriod kp = detail::find_period(*synced.workload, k, 16);
    if (kp.why_not.find("semaphores") != std::string::npos) refused = true;
  }
  CHECK(refused);
  // Stream order: both kernels of the plain FFN are periodic GEMMs.
  CHECK(detail::find_period(*p.workload, 0, 16).period > 0);
}

TEST_CASE("sampling: a sampled run skips steady periods and stays within 3% of the exact run", "[sim][sampling]") {
  const ExperimentPoint exact = point(kGemm, "{kind: row}");
  const ExperimentPoint sampled = point(kGemm, "{kind: row}", "{mode: sampled}");
  REQUIRE(sampled.options.mode == SimOptions::Mode::sampled);
  const SimResult e = simulate(*exact.workload, exact.arch, exact.options);
  const SimResult s = simulate(*sampled.workload, sampled.arch, sampled.options);
  CHECK_FALSE(e.sampled_mode);
  CHECK(e.kernels[0].sampling.skipped_blocks == 0);
  REQUIRE(s.sampled_mode);
  const SamplingStats& ss = s.kernels[0].sampling;
  CHECK(ss.period_blocks == 4);
  // At least 24 of the 512 blocks: 32 with sets filled page by page (the h100 preset's page_mix
  // hash, 2026-11-27); 48 before it, with the shared step noise, whose spans agree within the
  // tolerance less often than under per-block noise alone (64 and more). Issue 15 says why the
  // sampled mode needs a statistical redesign rather than exact-repeat detection.
  CHECK(ss.skipped_blocks >= 24);
  CHECK(ss.skipped_blocks % 4 == 0);
  CHECK(ss.skipped_ps > 0);
  // Fewer blocks simulated: their records, one per simulated block.
  CHECK(s.blocks.size() == 512 - ss.skipped_blocks);
  CHECK(static_cast<double>(s.duration) == Approx(static_cast<double>(e.duration)).epsilon(0.03));
  const auto dram = [](const SimResult& r) { return static_cast<double>(r.total.dram_read_bytes + r.total.dram_write_bytes); };
  CHECK(dram(s) == Approx(dram(e)).epsilon(0.03));
  // Looked-up sectors exclude the coalescer's merges, which follow the blocks' phases; with the
  // SMs' own speeds (coresident_rate_sd) a skipped period's merges are an estimate like its time.
  CHECK(static_cast<double>(s.total.read_sectors) == Approx(static_cast<double>(e.total.read_sectors)).epsilon(0.03));
  CHECK(s.total.hit_rate() == Approx(e.total.hit_rate()).margin(0.01));
}

TEST_CASE("sampling: a kernel without an exact period skips windows judged by their rates, within 3%", "[sim][sampling]") {
  // Column order of the 128 x 4 grid: no exact period leaves room, its 32 windows of 16 do.
  const ExperimentPoint exact = point(kGemm, "{kind: column}");
  const ExperimentPoint sampled = point(kGemm, "{kind: column}", "{mode: sampled}");
  const SimResult e = simulate(*exact.workload, exact.arch, exact.options);
  const SimResult s = simulate(*sampled.workload, sampled.arch, sampled.options);
  const SamplingStats& ss = s.kernels[0].sampling;
  CHECK(ss.by_rates);
  CHECK(ss.period_blocks == 16);
  CHECK(ss.skipped_blocks >= 16);
  CHECK(ss.skipped_blocks % 16 == 0);  // whole windows
  CHECK(s.blocks.size() == 512 - ss.skipped_blocks);
  CHECK(static_cast<double>(s.duration) == Approx(static_cast<double>(e.duration)).epsilon(0.03));
  const auto dram = [](const SimResult& r) { return static_cast<double>(r.total.dram_read_bytes + r.total.dram_write_bytes); };
  CHECK(dram(s) == Approx(dram(e)).epsilon(0.03));
  CHECK(s.total.hit_rate() == Approx(e.total.hit_rate()).margin(0.01));
}

TEST_CASE("sampling: a kernel without a period runs exactly as in exact mode", "[sim][sampling]") {
  const ExperimentPoint exact = point(kSmallSquare, "{kind: hilbert}");
  const ExperimentPoint sampled = point(kSmallSquare, "{kind: hilbert}", "{mode: sampled}");
  const SimResult e = simulate(*exact.workload, exact.arch, exact.options);
  const SimResult s = simulate(*sampled.workload, sampled.arch, sampled.options);
  CHECK(s.kernels[0].sampling.skipped_blocks == 0);
  CHECK_THAT(s.kernels[0].sampling.why_whole, Catch::Contains("no period"));
  CHECK(s.duration == e.duration);
  CHECK(s.total == e.total);
}

TEST_CASE("sampling: sim.mode and sim.sampling_tolerance are checked", "[sim][sampling]") {
  CHECK_THROWS_WITH(point(kGemm, "{kind: row}", "{mode: fast}"),
                    Catch::Contains("sim.mode") && Catch::Contains("exact") && Catch::Contains("sampled"));
  CHECK_THROWS_WITH(point(kGemm, "{kind: row}", "{sampling_tolerance: 2}"), Catch::Contains("sim.sampling_tolerance"));
}
