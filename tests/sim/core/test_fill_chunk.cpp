// A read narrower than the fill chunk fetches its neighbour's bytes: the neighbour's lookup
// hits them, and waits for them when the fill is still on its way (Engine::fill_chunk_key).
#include <catch2/catch.hpp>

#include "sim/core/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

// Two blocks on two SMs, dispatched together: block 0 reads columns 0-31 of a line (64 bytes)
// and computes 10 ns; block 1 reads columns 32-63, the line's other half, and computes 1 us.
SimResult two_halves(std::uint32_t prefetch_bytes) {
  const ArchSpec arch = toy_arch(2);
  Kernel k = toy_kernel(1);
  k.l2_prefetch_bytes = prefetch_bytes;
  for (std::uint32_t b = 0; b < 2; ++b) {
    Block blk;
    blk.first_step = static_cast<std::uint32_t>(k.steps.size());
    Step s;
    s.first_access = static_cast<std::uint32_t>(k.accesses.size());
    k.accesses.push_back({0, 0, 0, 32 * b, 1, 32, AccessKind::load});
    s.num_accesses = 1;
    s.flops = b == 0 ? 10000 : 1000000;
    k.steps.push_back(s);
    blk.num_steps = 1;
    blk.tile_n = b;
    k.blocks.push_back(blk);
  }
  return simulate(one_kernel(k), arch, SimOptions{});
}

}  // namespace

TEST_CASE("fill chunk: the other half of a prefetched line hits, and waits for the fill", "[sim]") {
  // No prefetch (the toy L2 fills one sector): each half is its own miss. A miss takes the
  // DRAM's 200 ns plus the L2's 100; block 1 then computes 1000 ns.
  const SimResult apart = two_halves(0);
  CHECK(apart.kernels[0].mem.read_hit_sectors == 0);
  CHECK(apart.kernels[0].mem.dram_read_bytes == 128);
  // cp.async.L2::128B: block 0's miss fetches the whole line; block 1's lookup, issued at the
  // same time, hits it, but its data comes with block 0's fill, not at the 100 ns of a hit.
  const SimResult whole = two_halves(128);
  CHECK(whole.kernels[0].mem.read_hit_sectors == 2);
  CHECK(whole.kernels[0].mem.dram_read_bytes == 128);
  CHECK(whole.kernels[0].duration() >= 1300000);
  CHECK(whole.kernels[0].duration() <= apart.kernels[0].duration() + 2000);
}
