// A warp-level MMA loop's rate from its tile: the shared-memory ceiling and the block share by
// accumulator elements (sim/core/step_timing.hpp, models/compute/mainloop.hpp).
#include <catch2/catch.hpp>

#include <string>

#include "sim/config/experiment.hpp"
#include "sim/core/step_timing.hpp"

using namespace tilesim;

namespace {

ExperimentPoint build(const std::string& tile, int threads, const std::string& mainloop_overrides) {
  const std::string yaml = "arch: h100\narch_overrides: {compute: {mainloops: {mma_sync: {" + mainloop_overrides +
                           "}}}}\nworkload: {kind: gemm, m: 1024, n: 1024, k: 1024, dtype: fp16, tile: " + tile +
                           ", stages: 3, threads: " + std::to_string(threads) + ", mainloop: mma_sync}\n";
  return load_plan_text(yaml, "<test>", ".", {}).build(0);
}

}  // namespace

TEST_CASE("step timing: the shared-memory ceiling scales mma_sync's efficiency by the warp tile", "[sim]") {
  const std::string smem = "smem_bytes_per_clk: 128, efficiency: 0.7";
  // 128x128 with 4 warps (64x64 warp tiles): 2/3 of the peak at most; with 8 (64x32): half.
  const ExperimentPoint four = build("[128, 128, 32]", 128, smem);
  const ExperimentPoint eight = build("[128, 128, 32]", 256, smem);
  CHECK(kernel_efficiency(four.arch, four.workload->kernels[0]) == Approx(0.7 * 2.0 / 3.0));
  CHECK(kernel_efficiency(eight.arch, eight.workload->kernels[0]) == Approx(0.7 * 0.5));
  // Without smem_bytes_per_clk: `efficiency` alone, whatever the warps.
  const ExperimentPoint plain = build("[128, 128, 32]", 128, "efficiency: 0.7, smem_bytes_per_clk: 0");
  CHECK(kernel_efficiency(plain.arch, plain.workload->kernels[0]) == Approx(0.7));
}

TEST_CASE("step timing: a block's share by accumulator elements, measured against the slowed pipe", "[sim]") {
  const std::string rule = "smem_bytes_per_clk: 128, efficiency: 0.7, saturating_elements: 28672";
  // 64x128 with 8 warps: 8192 / 28672 of 0.7 x the peak alone; its pipe runs at 0.7 x 0.364, so
  // the block keeps 0.286 / 0.364 of it busy.
  const ExperimentPoint small = build("[64, 128, 32]", 256, rule);
  const double ceiling = 128.0 / (4096 * 1408.0 / 16384);
  CHECK(kernel_block_share(small.arch, small.workload->kernels[0]) == Approx(8192.0 / 28672 / ceiling));
  // 128x128: 0.571 alone, above the ceiling of half the peak: the block fills its pipe.
  const ExperimentPoint large = build("[128, 128, 32]", 256, rule);
  CHECK(kernel_block_share(large.arch, large.workload->kernels[0]) == 1.0);
  // Without saturating_elements the warps count: 4 of saturating_warps 14.
  const ExperimentPoint warps = build("[64, 128, 32]", 128, "efficiency: 0.7, smem_bytes_per_clk: 0, saturating_warps: 14");
  CHECK(kernel_block_share(warps.arch, warps.workload->kernels[0]) == Approx(4.0 / 14));
}

TEST_CASE("step timing: an mma_sync loop that loads no fragments ahead has its own figures", "[sim]") {
  // The presets: CUTLASS 2's loop (fragments ahead) over the shared-memory ceiling, the
  // project's kernels (fragments: single) at their fitted efficiency and warp share.
  const auto kernel_of = [](const std::string& mainloop) {
    const std::string yaml = "arch: h100\nworkload: {kind: gemm, m: 1024, n: 1024, k: 1024, dtype: fp16, tile: "
                             "[128, 128, 32], stages: 3, threads: 256, mainloop: " + mainloop + "}\n";
    return load_plan_text(yaml, "<test>", ".", {}).build(0);
  };
  const ExperimentPoint ahead = kernel_of("mma_sync"), single = kernel_of("{kind: mma_sync, fragments: single}");
  const MainLoopSpec& ml = ahead.arch.compute.mainloop(MainLoop::mma_sync);
  REQUIRE(ml.single_fragment_efficiency > 0);
  // 8 warps of 64x32 warp tiles: half the peak through shared memory, times the kind's efficiency.
  CHECK(kernel_efficiency(ahead.arch, ahead.workload->kernels[0]) == Approx(ml.efficiency * 0.5));
  CHECK(kernel_block_share(ahead.arch, ahead.workload->kernels[0]) == 1.0);
  CHECK(kernel_efficiency(single.arch, single.workload->kernels[0]) == Approx(ml.single_fragment_efficiency));
  CHECK(kernel_block_share(single.arch, single.workload->kernels[0]) == Approx(8.0 / ml.single_fragment_saturating_warps));
  // Only a warp-level loop loads fragments itself.
  REQUIRE_THROWS_WITH(kernel_of("{kind: wgmma_cp_async, fragments: single}"), Catch::Contains("fragments"));
}
