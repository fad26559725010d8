// When a stage's loads issue (mainloop `prefetch`): as soon as its buffer is free (Triton's
// software pipeline, TMA producers) or only once the step stages - 1 earlier has its data and
// starts (CUTLASS 2's multistage loop and the project's kernels wait, then copy).
#include <catch2/catch.hpp>

#include "sim/core/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

Time three_misses(bool after_wait, std::uint32_t stages) {
  ArchSpec arch = toy_arch();
  arch.compute.mainloops[static_cast<int>(MainLoop::mma_sync)].prefetch_after_wait = after_wait;
  Kernel k = toy_kernel(stages);
  add_block(k, {0, 64, 128}, 10000);  // three steps, each missing its own line; 10 ns of MMA each
  return simulate(one_kernel(k), arch, SimOptions{}).kernels[0].duration();
}

}  // namespace

TEST_CASE("worked example: prefetch when_free keeps stages loads in flight, after_wait one fewer", "[sim]") {
  // A miss: DRAM sends the line in 1 ns, then 200 + 100 ns of latency.
  // when_free, 2 stages: steps 0 and 1 issue at 0 (data at 301 and 302 ns); step 0 computes
  // 301-311, which frees its buffer: step 2 issues at 311 (data 612), computes 612-622.
  CHECK(three_misses(false, 2) == 622000);
  // after_wait, 2 stages: only step 0 issues at 0; step 1 issues when step 0 starts (301 ns,
  // data 602), step 2 when step 1 starts (602, data 903), computing 903-913: nothing overlaps
  // but the MMA.
  CHECK(three_misses(true, 2) == 913000);
  // With 3 stages the first two loads go at once either way; after_wait issues the third when
  // step 0 starts (301 ns: data 602, MMA 602-612), when_free at 0 (data 303, MMA 321-331).
  CHECK(three_misses(true, 3) == 612000);
  CHECK(three_misses(false, 3) == 331000);
  // One stage: nothing to prefetch, the same under both rules (each load after the last MMA).
  CHECK(three_misses(true, 1) == three_misses(false, 1));
}
