// SmPool: which SM a block goes to (round-robin, breadth-first over the SMs) and when an SM is
// full (threads, registers, shared memory, block slots, a kernel's own per-SM limit).
#include <catch2/catch.hpp>

#include "sim/core/sm_pool.hpp"
#include "tests/sim/core/sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

// Places `n` blocks of kernel 0 one after another; the SMs they went to.
std::vector<std::int64_t> place(SmPool& pool, const BlockCost& c, int n) {
  std::vector<std::int64_t> placed;
  for (int i = 0; i < n; ++i) {
    const std::int64_t sm = pool.find(0, c);
    REQUIRE(sm >= 0);
    pool.take(static_cast<std::uint32_t>(sm), 0, c);
    placed.push_back(sm);
  }
  return placed;
}

}  // namespace

TEST_CASE("sm pool: blocks spread over the SMs first, then stack", "[sim]") {
  const ArchSpec arch = toy_arch(3);
  SmPool pool(arch, 1);
  const std::vector<std::int64_t> placed = place(pool, BlockCost{256, 256 * 32, 0, 4}, 7);
  // Breadth-first: 0, 1, 2, then round again.
  CHECK(placed == std::vector<std::int64_t>{0, 1, 2, 0, 1, 2, 0});
  CHECK(pool.resident(0) == 3);
  CHECK(pool.resident(1) == 2);
  CHECK(pool.resident(2) == 2);
}

TEST_CASE("sm pool: a kernel's per-SM limit and the SM's resources both bound it", "[sim]") {
  const ArchSpec arch = toy_arch(1);  // 2048 threads, 65536 registers, 228 KiB shared memory, 32 blocks
  SECTION("the kernel's own limit") {
    SmPool pool(arch, 2);
    const BlockCost two{128, 128 * 32, 0, 2};
    pool.take(0, 0, two);
    pool.take(0, 0, two);
    CHECK(pool.find(0, two) == -1);  // kernel 0 has its two
    CHECK(pool.find(1, two) == 0);   // another kernel still fits beside them
  }
  SECTION("shared memory") {
    SmPool pool(arch, 2);
    const BlockCost big{128, 128 * 32, 200000, 8};
    pool.take(0, 0, big);
    CHECK(pool.find(0, big) == -1);
    CHECK(pool.find(1, big) == -1);  // across kernels too: the SM's memory is shared
    pool.release(0, 0, big);
    CHECK(pool.find(1, big) == 0);   // released, it fits again
  }
  SECTION("threads and registers") {
    SmPool pool(arch, 1);
    const BlockCost wide{1024, 1024 * 32, 0, 8};
    pool.take(0, 0, wide);
    pool.take(0, 0, wide);
    CHECK(pool.find(0, wide) == -1);  // 2048 threads taken
    const BlockCost heavy{128, 65536, 0, 8};
    SmPool regs(arch, 1);
    regs.take(0, 0, heavy);
    CHECK(regs.find(0, heavy) == -1);  // every register taken
  }
}

TEST_CASE("sm pool: placement by GPC takes GPCs in turn, empty SMs first, first SMs of TPC pairs first", "[sim]") {
  ArchSpec arch = toy_arch(7);
  arch.sm.gpcs = {{0, 1, 2, 3}, {4, 5}};  // SM 6 in no GPC: a group of its own
  arch.sm.placement = SmSpec::Placement::gpc;
  SmPool pool(arch, 1);
  const std::vector<std::int64_t> placed = place(pool, BlockCost{256, 256 * 32, 0, 4}, 10);
  // Turns over the groups {0,2,1,3}, {4,5}, {6}: an empty SM from each while any has one
  // (0, 4, 6, 2, 5, then 1 and 3: the second GPC has none left), then the least occupied SM
  // of the next GPC in turn (the first GPC's order breaks ties: 0; then 4, 6, 2).
  CHECK(placed == std::vector<std::int64_t>{0, 4, 6, 2, 5, 1, 3, 4, 6, 0});
}

TEST_CASE("sm pool: round-robin placement is the default", "[sim]") {
  ArchSpec arch = toy_arch(4);
  arch.sm.gpcs = {{0, 1}, {2, 3}};
  SmPool pool(arch, 1);
  CHECK(place(pool, BlockCost{256, 256 * 32, 0, 4}, 4) == std::vector<std::int64_t>{0, 1, 2, 3});
}

TEST_CASE("sm pool: gpc_fill places round-robin over the SMs GPC after GPC, unlisted SMs last", "[sim]") {
  ArchSpec arch = toy_arch(7);
  arch.sm.gpcs = {{4, 5}, {0, 2, 1, 3}};  // SM 6 in no GPC: after the listed ones
  arch.sm.placement = SmSpec::Placement::gpc_fill;
  SmPool pool(arch, 1);
  // Two blocks per SM: a first pass over the sequence 4 5 0 2 1 3 6, then a second.
  const std::vector<std::int64_t> placed = place(pool, BlockCost{256, 256 * 32, 0, 2}, 14);
  CHECK(placed == std::vector<std::int64_t>{4, 5, 0, 2, 1, 3, 6, 4, 5, 0, 2, 1, 3, 6});
  // A freed slot is the only room left: the next block takes it, wherever the cursor is.
  pool.release(2, 0, BlockCost{256, 256 * 32, 0, 2});
  CHECK(pool.find(0, BlockCost{256, 256 * 32, 0, 2}) == 2);
}
