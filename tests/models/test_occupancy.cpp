#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "models/occupancy.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {
ArchSpec small_arch() {
  ArchSpec a;
  a.name = "toy";
  a.sm.count = 4;
  a.sm.max_threads = 2048;
  a.sm.max_blocks = 32;
  a.sm.registers = 65536;
  a.sm.max_registers_per_thread = 255;
  a.sm.register_alloc_unit = 256;
  a.sm.shared_memory_bytes = 233472;
  a.sm.max_shared_memory_per_block = 232448;
  a.sm.reserved_shared_memory_per_block = 1024;
  return a;
}
}  // namespace

TEST_CASE("occupancy: the smallest of the four limits binds", "[occupancy]") {
  const ArchSpec a = small_arch();
  // 256 threads x 128 regs = 32768 regs -> 2 blocks; smem 96 KiB + 1 KiB reserved -> 233472/99328 = 2;
  // threads 2048/256 = 8. Ties are reported in the order shared_memory, registers, threads.
  Occupancy o = compute_occupancy(a, {256, 128, 98304}, 0, "k");
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.limit == "shared_memory");
  CHECK(o.by_registers == 2);
  CHECK(o.by_threads == 8);
  // Small blocks: 128 threads x 32 regs, no smem -> threads allow 16, registers 16 (4096 per block), blocks 32.
  o = compute_occupancy(a, {128, 32, 0}, 0, "k");
  CHECK(o.blocks_per_sm == 16);
  CHECK(o.by_registers == 16);
  // Registers round up per warp to the allocation unit: 33 regs x 32 = 1056 -> 1280 per warp.
  o = compute_occupancy(a, {1024, 33, 0}, 0, "k");
  CHECK(o.by_registers == 65536 / (1280 * 32));
  CHECK(o.limit == "registers");
}

TEST_CASE("occupancy: explicit blocks_per_sm is checked against the resources", "[occupancy]") {
  const ArchSpec a = small_arch();
  CHECK(compute_occupancy(a, {256, 128, 98304}, 1, "k").blocks_per_sm == 1);
  CHECK(compute_occupancy(a, {256, 128, 98304}, 1, "k").limit == "set");
  REQUIRE_THROWS_WITH(compute_occupancy(a, {256, 128, 98304}, 3, "k"), Contains("blocks_per_sm 3 exceeds"));
  REQUIRE_THROWS_WITH(compute_occupancy(a, {256, 128, 240000}, 0, "k"), Contains("shared memory per block"));
}
