// What a read miss fetches: the aligned chunk of l2.fill_bytes around each missed sector, or of
// the load's prefetch size where larger (calibration/measurements/h100/l2_prefetch: 64 bytes
// without a hint, the whole line under cp.async.L2::128B).
#include <catch2/catch.hpp>

#include "l2_test_util.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

L2Spec with_fill(L2Spec s, std::uint32_t fill_bytes) {
  s.fill_bytes = fill_bytes;
  return s;
}

}  // namespace

TEST_CASE("L2 fill: a 32-byte miss fetches its 64-byte half, whose other sector then hits", "[cache]") {
  L2Cache c(with_fill(tiny_spec(1, 2, 4), 64), 1);
  auto r = read(c, 0, 32);  // sector 0 of line 0
  CHECK(r.sectors == 1);    // one sector looked up ...
  CHECK(r.hit_sectors == 0);
  CHECK(r.dram_read_sectors == 2);  // ... two fetched
  CHECK(c.probe(0, 0).valid == 0x3);
  r = read(c, 32, 32);  // sector 1: fetched with sector 0
  CHECK(r.hit_sectors == 1);
  CHECK(r.dram_read_sectors == 0);
  r = read(c, 96, 32);  // sector 3: its own half (sectors 2-3)
  CHECK(r.dram_read_sectors == 2);
  CHECK(c.probe(0, 0).valid == 0xf);
  // 64 aligned bytes are the chunk itself: nothing more (line 1).
  r = read(c, line_addr(1) + 64, 64);
  CHECK(r.dram_read_sectors == 2);
  CHECK(c.probe(line_addr(1), 0).valid == 0xc);
}

TEST_CASE("L2 fill: the load's prefetch size widens the chunk to the line", "[cache]") {
  L2Cache c(with_fill(tiny_spec(1, 2, 4), 64), 1);
  // A 64-byte half under .L2::128B: four sectors from DRAM, the other half hits next.
  auto r = c.access(ByteRect{0, 0, 64, 1}, 0, false, 128);
  CHECK(r.sectors == 2);
  CHECK(r.dram_read_sectors == 4);
  r = c.access(ByteRect{64, 0, 64, 1}, 0, false, 128);
  CHECK(r.hit_sectors == 2);
  CHECK(r.dram_read_sectors == 0);
  // Without the hint (a smaller prefetch size than the cache's fill changes nothing) the two
  // halves of line 1 are fetched one by one.
  r = c.access(ByteRect{line_addr(1), 0, 64, 1}, 0, false, 32);
  CHECK(r.dram_read_sectors == 2);
  r = read(c, line_addr(1) + 64, 64);
  CHECK(r.hit_sectors == 0);
  CHECK(r.dram_read_sectors == 2);
}

TEST_CASE("L2 fill: hits fetch nothing, partial hits fetch only the chunks they miss in", "[cache]") {
  L2Cache c(tiny_spec(1, 2, 4), 1);  // fill 0: one sector
  read(c, 0, 32);                    // sector 0 alone
  CHECK(c.probe(0, 0).valid == 0x1);
  // Under a whole-line prefetch: sector 0 hits, so no fetch at all.
  auto r = c.access(ByteRect{0, 0, 32, 1}, 0, false, 128);
  CHECK(r.hit_sectors == 1);
  CHECK(r.dram_read_sectors == 0);
  CHECK(c.probe(0, 0).valid == 0x1);
  // Sectors 0-1 under a 64-byte prefetch: sector 1 misses; its chunk is sectors 0-1, of which
  // only sector 1 is missing.
  r = c.access(ByteRect{0, 0, 64, 1}, 0, false, 64);
  CHECK(r.hit_sectors == 1);
  CHECK(r.dram_read_sectors == 1);
  CHECK(c.probe(0, 0).valid == 0x3);
  // A write fetches nothing beyond what it writes.
  r = c.access(ByteRect{line_addr(1), 0, 32, 1}, 0, true, 128);
  CHECK(r.dram_read_sectors == 0);
  CHECK(c.probe(line_addr(1), 0).valid == 0x1);
}

TEST_CASE("L2 fill: a far line's fill crosses the fabric whole and the near copy keeps it", "[cache]") {
  // Measured: the far half's lookups count the fetched sectors, and a second pass over the
  // line's other half hits in the requester's half.
  L2Cache c(with_fill(tiny_spec(2, 2, 4), 64), 1);
  REQUIRE(c.home_partition(line_addr(1)) == 1);
  auto r = read(c, line_addr(1), 32, 0);  // requester 0, home 1
  CHECK(r.sectors == 1);
  CHECK(r.fabric_sectors == 2);
  CHECK(r.dram_read_sectors == 2);
  CHECK(c.probe(line_addr(1), 0).valid == 0x3);
  CHECK(c.probe(line_addr(1), 1).valid == 0x3);
  r = read(c, line_addr(1) + 32, 32, 0);
  CHECK(r.near_copy_hit_sectors == 1);
  CHECK(r.fabric_sectors == 0);
  // The whole line under a 128-byte prefetch from the home side's neighbour half.
  r = c.access(ByteRect{line_addr(3), 0, 64, 1}, 0, false, 128);
  CHECK(r.sectors == 2);
  CHECK(r.fabric_sectors == 4);
  CHECK(r.dram_read_sectors == 4);
  CHECK(c.probe(line_addr(3), 0).valid == 0xf);
}

TEST_CASE("L2 fill: whole-line rectangles are unchanged by any fill", "[cache]") {
  L2Cache plain(tiny_spec(2, 2, 4), 1), wide(with_fill(tiny_spec(2, 2, 4), 128), 1);
  for (std::uint64_t line = 0; line < 24; line += 3) {
    const ByteRect rect{line_addr(line), 128 * 5, 128, 2};
    const L2AccessResult a = plain.access(rect, line % 2, false), b = wide.access(rect, line % 2, false, 128);
    CHECK(a.sectors == b.sectors);
    CHECK(a.hit_sectors == b.hit_sectors);
    CHECK(a.dram_read_sectors == b.dram_read_sectors);
    CHECK(a.fabric_sectors == b.fabric_sectors);
  }
}
