// A main loop that waits for each MMA instruction (ptxas serialised its wgmma): the waits idle
// the pipe unless the block's other warpgroups, or other blocks on the SM, fill them.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/core/simulator.hpp"
#include "sim/core/step_timing.hpp"
#include "sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

// The toy arch (1 FLOP per ps) with wgmma's geometry (m64, 32 bytes of K: 16 fp16) and 100
// clocks (100 ns) of wait per serialised instruction.
ArchSpec serial_arch(std::uint32_t sms = 1) {
  ArchSpec arch = toy_arch(sms);
  arch.compute.mma_m = 64;
  arch.compute.mma_k_bytes = 32;
  arch.compute.mainloops[static_cast<int>(MainLoop::mma_sync)].serialized_wait_cycles = 100;
  return arch;
}

// One instruction m64 n64 k16 is 131072 FLOP; a step of ten of them is 1.31 us of MMA.
constexpr std::uint64_t kInstrFlops = 2ull * 64 * 64 * 16;
constexpr std::uint64_t kStepFlops = 10 * kInstrFlops;

// `blocks` blocks of 20 steps re-reading one line (hits after the first), `threads` each.
Workload serial_blocks(std::uint32_t blocks, std::uint32_t per_sm, std::uint32_t threads, bool serialized) {
  Kernel k = toy_kernel(4);
  for (std::uint32_t b = 0; b < blocks; ++b) add_block(k, std::vector<std::uint32_t>(20, 0), kStepFlops);
  k.blocks_per_sm = per_sm;
  k.resources.threads = threads;
  k.serialized_mma_cols = serialized ? 64 : 0;
  return one_kernel(std::move(k));
}

Time makespan(const SimResult& r) {
  Time end = 0;
  for (const BlockRecord& b : r.blocks) end = std::max(end, b.end);
  return end;
}

}  // namespace

TEST_CASE("serialised MMA: a lone warpgroup's step leaves the pipe idle for its waits, two warpgroups fill them",
          "[sim]") {
  const ArchSpec arch = serial_arch();
  Step st;
  st.flops = kStepFlops;
  Kernel k = toy_kernel(4);
  k.serialized_mma_cols = 64;
  k.resources.threads = 128;  // one warpgroup: 1.31 us of MMA + 10 x 100 ns of waits
  const StepTiming one(arch, k);
  CHECK(one.duration(st) == static_cast<Time>(kStepFlops));
  CHECK(one.share(st, 1.0) == Approx(1310720.0 / 2310720.0));
  CHECK(one.share(st, 0.25) == 0.25);  // never above the block's own share
  k.resources.threads = 256;  // two warpgroups: (1.31 + 1.0) / 2 < 1.31, the pipe stays busy
  CHECK(StepTiming(arch, k).share(st, 1.0) == 1.0);
  k.resources.threads = 128;
  k.serialized_mma_cols = 0;  // pipelined
  CHECK(StepTiming(arch, k).share(st, 1.0) == 1.0);
  Step alu;  // a step without MMA waits for nothing
  alu.softmax_elems = 100;
  k.serialized_mma_cols = 64;
  CHECK(StepTiming(arch, k).share(alu, 1.0) == 1.0);
}

TEST_CASE("serialised MMA in the engine: one block per SM runs slower by its waits, a second block fills them",
          "[sim]") {
  const ArchSpec arch = serial_arch();
  const Time piped = makespan(simulate(serial_blocks(1, 1, 128, false), arch, SimOptions{}));
  const Time serial = makespan(simulate(serial_blocks(1, 1, 128, true), arch, SimOptions{}));
  // 20 steps, each 1.0 us longer.
  CHECK(static_cast<double>(serial - piped) == Approx(20 * 1.0e6).epsilon(0.03));
  // Two serialised blocks on the SM: each may use 0.57 of the pipe, so together they keep it
  // busy and finish in about 2 x 26.2 us, not 2 x 46.2 us.
  const Time pair = makespan(simulate(serial_blocks(2, 2, 128, true), arch, SimOptions{}));
  CHECK(pair < serial * 5 / 4);
  CHECK(pair > serial);
  // Eight warps (two warpgroups) alone: as fast as pipelined.
  const Time wide = makespan(simulate(serial_blocks(1, 1, 256, true), arch, SimOptions{}));
  CHECK(wide == piped);
}
