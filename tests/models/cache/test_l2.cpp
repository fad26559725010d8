// The whole L2 on tiny geometries with the modulo hash, so every set index, hit and write-back
// below can be worked out by hand (each expectation carries its arithmetic in a comment).
//
// One partition:  sets = bytes / (128 x ways), set = line % sets.
// Two partitions: sets = bytes / (128 x ways x 2), home = line % 2, set = (line / 2) % sets.
// Line L starts at byte L * 128; its sectors are bytes [32 s, 32 s + 32) of the line.
#include <catch2/catch.hpp>

#include <list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "models/arch.hpp"
#include "models/cache/l2.hpp"
#include "l2_test_util.hpp"

using namespace tilesim;
using namespace tilesim::test;

// ---------------------------------------------------------------------------------------------
// One partition, 2 ways x 4 sets (1 KiB): lines 0, 4, 8, 12, ... share set 0.

TEST_CASE("L2 geometry from L2Spec and bad specs", "[cache]") {
  L2Cache c(tiny_spec(1, 2, 4), 1);
  CHECK(c.geometry().sets == 4);  // 1024 / (128 x 2)
  CHECK(c.geometry().ways == 2);
  CHECK(c.geometry().sectors_per_line == 4);
  CHECK(c.geometry().full_mask == 0xf);
  L2Cache c2(tiny_spec(2, 4, 3), 1);
  CHECK(c2.geometry().sets == 3);  // 128 x 4 x 3 x 2 = 3072 bytes
  CHECK_THROWS_AS(L2Cache(tiny_spec(1, 2, 4, "plru"), 1), InputError);
  CHECK_THROWS_AS(L2Cache(tiny_spec(1, 2, 4, "lru", true, "crc32"), 1), InputError);
  L2Spec small = tiny_spec(1, 2, 4);
  small.bytes = 128;  // one line, two ways: zero sets
  CHECK_THROWS_AS(L2Cache(small, 1), InputError);
  for (const char* r : {"lru", "fifo", "srrip", "random"})
    for (const char* h : {"modulo", "xor_fold"}) CHECK_NOTHROW(L2Cache(tiny_spec(2, 2, 4, r, true, h), 1));
}

TEST_CASE("L2 sector-granular fills", "[cache]") {
  L2Cache c(tiny_spec(1, 2, 4), 1);
  // 32 bytes at byte 32 = sector 1 of line 0: one sector, a miss, read from DRAM.
  auto r = read(c, 32, 32);
  CHECK(r.sectors == 1);
  CHECK(r.hit_sectors == 0);
  CHECK(r.dram_read_sectors == 1);
  CHECK(r.partition_sectors[0] == 1);
  CHECK(r.fabric_sectors == 0);
  CHECK(r.dram_write_sectors == 0);
  CHECK(c.probe(0, 0).present);
  CHECK(c.probe(0, 0).valid == 0x2);
  CHECK(c.probe(0, 0).dirty == 0);
  // 64 bytes at byte 0 = sectors 0-1: sector 1 is held (hit), sector 0 is fetched.
  r = read(c, 0, 64);
  CHECK(r.sectors == 2);
  CHECK(r.hit_sectors == 1);
  CHECK(r.dram_read_sectors == 1);
  CHECK(c.probe(0, 0).valid == 0x3);
  // The full line: sectors 0-1 hit, 2-3 miss.
  r = read(c, 0, 128);
  CHECK(r.sectors == 4);
  CHECK(r.hit_sectors == 2);
  CHECK(r.dram_read_sectors == 2);
  CHECK(c.probe(0, 0).valid == 0xf);
  // Re-read: all four sectors hit, nothing from DRAM.
  r = read(c, 0, 128);
  CHECK(r.sectors == 4);
  CHECK(r.hit_sectors == 4);
  CHECK(r.dram_read_sectors == 0);
  CHECK(r.partition_sectors[0] == 4);
  // access_line with mask 0b1010 (sectors 1 and 3) on a new line 1: 2 sectors, both miss,
  // and only those two become valid.
  r = c.access_line(line_addr(1) + 100, 0b1010, 0, false);  // any address inside the line
  CHECK(r.sectors == 2);
  CHECK(r.dram_read_sectors == 2);
  CHECK(c.probe(line_addr(1), 0).valid == 0xa);
  r = c.access_line(line_addr(1), 0xf, 0, false);
  CHECK(r.sectors == 4);
  CHECK(r.hit_sectors == 2);
  CHECK(r.dram_read_sectors == 2);
}

TEST_CASE("L2 ByteRect to sectors, unaligned starts and ends", "[cache]") {
  L2Cache c(tiny_spec(1, 2, 4), 1);
  // Bytes 40..139: line 0 bytes 40..127 = sectors 1, 2, 3 (32..127); line 1 bytes 128..139 =
  // sector 0 of line 1. 4 sectors in all.
  auto r = read(c, 40, 100);
  CHECK(r.sectors == 4);
  CHECK(r.dram_read_sectors == 4);
  CHECK(c.probe(line_addr(0), 0).valid == 0xe);
  CHECK(c.probe(line_addr(1), 0).valid == 0x1);
  c.invalidate_all();

  // 3 rows of 100 bytes, pitch 320 bytes (2.5 lines), from byte 40:
  //   row 0: bytes  40..139 -> line 0 sectors 1-3 (0xe), line 1 sector 0 (0x1)           4 sectors
  //   row 1: bytes 360..459 -> line 2 (256..383) sector 3 (360-256 = 104 -> 3) (0x8),
  //                            line 3 (384..511) bytes 0..75 -> sectors 0-2 (0x7)        4 sectors
  //   row 2: bytes 680..779 -> line 5 (640..767) 40..127 -> sectors 1-3 (0xe),
  //                            line 6 (768..895) 0..11 -> sector 0 (0x1)                 4 sectors
  // Lines 0,1,2,3,5,6 -> sets 0,1,2,3,1,2: at most two per set, nothing evicted.
  const ByteRect rect{40, 320, 100, 3};
  r = c.access(rect, 0, false);
  CHECK(r.sectors == 12);
  CHECK(r.hit_sectors == 0);
  CHECK(r.dram_read_sectors == 12);
  CHECK(c.probe(line_addr(0), 0).valid == 0xe);
  CHECK(c.probe(line_addr(1), 0).valid == 0x1);
  CHECK(c.probe(line_addr(2), 0).valid == 0x8);
  CHECK(c.probe(line_addr(3), 0).valid == 0x7);
  CHECK_FALSE(c.probe(line_addr(4), 0).present);
  CHECK(c.probe(line_addr(5), 0).valid == 0xe);
  CHECK(c.probe(line_addr(6), 0).valid == 0x1);
  r = c.access(rect, 0, false);
  CHECK(r.sectors == 12);
  CHECK(r.hit_sectors == 12);
  CHECK(r.dram_read_sectors == 0);

  struct Case {
    Addr start;
    std::uint64_t bytes;
    std::uint64_t sectors;
  };
  // Each on a cold cache:
  //   0 + 256          -> two whole lines                                         8
  //   33 + 10          -> bytes 33..42, inside sector 1                           1
  //   127 + 2          -> byte 127 (line 0 sector 3) and byte 128 (line 1 s. 0)   2
  //   96 + 33          -> sector 3 of line 0 and byte 128 (sector 0 of line 1)    2
  //   100 + 300        -> bytes 100..399: line 0 s3 (1) + line 1 (4) + line 2 (4)
  //                       + line 3 bytes 384..399 s0 (1)                          10
  //   64 + 1           -> one byte                                                1
  for (const Case& k : {Case{0, 256, 8}, Case{33, 10, 1}, Case{127, 2, 2}, Case{96, 33, 2}, Case{100, 300, 10},
                        Case{64, 1, 1}}) {
    CAPTURE(k.start, k.bytes);
    c.invalidate_all();
    r = read(c, k.start, k.bytes);
    CHECK(r.sectors == k.sectors);
    CHECK(r.dram_read_sectors == k.sectors);
  }
  // Empty rectangles do nothing.
  CHECK(c.access(ByteRect{0, 128, 0, 4}, 0, false).sectors == 0);
  CHECK(c.access(ByteRect{0, 128, 128, 0}, 0, false).sectors == 0);
}

TEST_CASE("L2 LRU conflict eviction in a 2-way set", "[cache]") {
  L2Cache c(tiny_spec(1, 2, 4), 1);
  // Lines 0, 4, 8 all map to set 0 (line % 4 == 0); line 1 to set 1.
  read_line(c, 1);
  CHECK(read_line(c, 0).dram_read_sectors == 4);
  CHECK(read_line(c, 4).dram_read_sectors == 4);
  auto r = read_line(c, 8);  // set 0 full: evicts line 0, the least recently used
  CHECK(r.dram_read_sectors == 4);
  CHECK(r.dram_write_sectors == 0);  // it was clean
  CHECK_FALSE(c.probe(line_addr(0), 0).present);
  CHECK(c.probe(line_addr(4), 0).present);
  CHECK(c.probe(line_addr(8), 0).present);
  CHECK(c.probe(line_addr(1), 0).present);  // other sets untouched
  // Line 0 misses again and now evicts line 4 (older than 8).
  r = read_line(c, 0);
  CHECK(r.hit_sectors == 0);
  CHECK(r.dram_read_sectors == 4);
  CHECK_FALSE(c.probe(line_addr(4), 0).present);
  CHECK(c.probe(line_addr(8), 0).present);

  // A hit refreshes recency: 0, 4, hit 0, then 8 evicts 4 (not 0).
  c.invalidate_all();
  read_line(c, 0);
  read_line(c, 4);
  CHECK(read_line(c, 0).hit_sectors == 4);
  read_line(c, 8);
  CHECK(c.probe(line_addr(0), 0).present);
  CHECK_FALSE(c.probe(line_addr(4), 0).present);
}

TEST_CASE("L2 FIFO and SRRIP victims through the whole cache", "[cache]") {
  SECTION("fifo: the hit on line 0 does not save it") {
    L2Cache c(tiny_spec(1, 2, 4, "fifo"), 1);
    read_line(c, 0);
    read_line(c, 4);
    CHECK(read_line(c, 0).hit_sectors == 4);
    read_line(c, 8);  // evicts the first filled: line 0
    CHECK_FALSE(c.probe(line_addr(0), 0).present);
    CHECK(c.probe(line_addr(4), 0).present);
  }
  SECTION("srrip: a re-referenced line outlives two one-use lines (LRU would lose it)") {
    // RRPVs of set 0 (ways: line 0, line 4): fill 2 2; hit line 0 -> 0 2.
    // Line 8: no way at 3, age -> 1 3, evict line 4 -> 1 2 (line 8 in way 1).
    // Line 12: no way at 3, age -> 2 3, evict line 8 -> 2 2 (line 12 in way 1). Line 0 survives.
    L2Cache c(tiny_spec(1, 2, 4, "srrip"), 1);
    read_line(c, 0);
    read_line(c, 4);
    read_line(c, 0);
    read_line(c, 8);
    CHECK(c.probe(line_addr(0), 0).present);
    CHECK_FALSE(c.probe(line_addr(4), 0).present);
    read_line(c, 12);
    CHECK(c.probe(line_addr(0), 0).present);
    CHECK_FALSE(c.probe(line_addr(8), 0).present);
    CHECK(c.probe(line_addr(12), 0).present);
    // The same sequence under LRU: 8 evicts 4, then 12 evicts 0 (older than 8).
    L2Cache l(tiny_spec(1, 2, 4, "lru"), 1);
    for (int line : {0, 4, 0, 8, 12}) read_line(l, line);
    CHECK_FALSE(l.probe(line_addr(0), 0).present);
    CHECK(l.probe(line_addr(8), 0).present);
  }
  SECTION("random: same seed, same evictions") {
    L2Cache a(tiny_spec(1, 2, 4, "random"), 7), b(tiny_spec(1, 2, 4, "random"), 7);
    std::mt19937 rng(3);
    for (int i = 0; i < 2000; ++i) {
      const std::uint64_t line = rng() % 64;
      const auto ra = read_line(a, line), rb = read_line(b, line);
      REQUIRE(ra.hit_sectors == rb.hit_sectors);
      REQUIRE(ra.hit_sectors + ra.dram_read_sectors == 4);
    }
  }
}

TEST_CASE("L2 dirty write-back on eviction, attributed to regions", "[cache]") {
  L2Cache c(tiny_spec(1, 2, 4), 1);
  // Region 0 = [0, 4096), region 1 = [4096, ...); slot 2 would take addresses below 0 (none).
  c.set_regions({0, 4096});
  REQUIRE(c.writeback_sectors_by_region() == std::vector<std::uint64_t>{0, 0, 0});
  // Write the whole of line 0: write-allocate without reading DRAM.
  auto r = write(c, 0, 128);
  CHECK(r.sectors == 4);
  CHECK(r.hit_sectors == 0);
  CHECK(r.dram_read_sectors == 0);
  CHECK(r.dram_write_sectors == 0);
  CHECK(r.partition_sectors[0] == 4);
  CHECK(c.probe(0, 0).valid == 0xf);
  CHECK(c.probe(0, 0).dirty == 0xf);
  // Lines 4 and 8 (set 0) push line 0 out: its 4 dirty sectors are written back by the access
  // that evicts it (the read of line 8), and counted in region 0.
  r = read_line(c, 4);
  CHECK(r.dram_write_sectors == 0);
  r = read_line(c, 8);
  CHECK(r.dram_write_sectors == 4);
  CHECK(r.dram_read_sectors == 4);
  CHECK(c.writeback_sectors_by_region() == std::vector<std::uint64_t>{4, 0, 0});
  // A one-sector write to line 32 (byte 4096 + 64 = sector 2; 32 % 4 = set 0). Set 0 holds 4
  // (older) and 8: line 4 is evicted, clean, nothing written back.
  r = write(c, 4096 + 64, 32);
  CHECK(r.sectors == 1);
  CHECK(r.dram_read_sectors == 0);
  CHECK(r.dram_write_sectors == 0);
  CHECK(c.probe(4096, 0).valid == 0x4);
  CHECK(c.probe(4096, 0).dirty == 0x4);
  // Line 0 evicts line 8 (clean); line 4 then evicts line 32: exactly 1 dirty sector, region 1.
  CHECK(read_line(c, 0).dram_write_sectors == 0);
  r = read_line(c, 4);
  CHECK(r.dram_write_sectors == 1);
  CHECK(c.writeback_sectors_by_region() == std::vector<std::uint64_t>{4, 1, 0});

  // A partial write, then a read of the whole line: the written sector hits, the other three
  // come from DRAM; only the written sector stays dirty and is written back.
  r = write(c, line_addr(2), 32);  // line 2, sector 0 (set 2)
  CHECK(r.dram_read_sectors == 0);
  r = read_line(c, 2);
  CHECK(r.hit_sectors == 1);
  CHECK(r.dram_read_sectors == 3);
  CHECK(c.probe(line_addr(2), 0).valid == 0xf);
  CHECK(c.probe(line_addr(2), 0).dirty == 0x1);
  read_line(c, 6);
  r = read_line(c, 10);  // set 2: evicts line 2
  CHECK(r.dram_write_sectors == 1);
  CHECK(c.writeback_sectors_by_region() == std::vector<std::uint64_t>{5, 1, 0});
  // A write over a clean valid sector counts as a hit and makes it dirty.
  r = write(c, line_addr(10) + 32, 64);  // sectors 1-2 of line 10
  CHECK(r.hit_sectors == 2);
  CHECK(c.probe(line_addr(10), 0).dirty == 0x6);
}

TEST_CASE("L2 region attribution: addresses below the first region go to the last slot", "[cache]") {
  L2Cache c(tiny_spec(1, 2, 4), 1);
  c.set_regions({1024, 8192});  // region 0 = [1024, 8192), region 1 = [8192, ...), slot 2 = below 1024
  write(c, line_addr(0), 128);   // byte 0: below 1024 -> slot 2
  write(c, line_addr(8), 64);    // byte 1024: region 0, 2 sectors
  write(c, line_addr(64), 32);   // byte 8192: region 1, 1 sector (64 % 4 = set 0)
  // Set 0 held 0 and 8; line 64 evicted line 0 (4 sectors, slot 2).
  CHECK(c.writeback_sectors_by_region() == std::vector<std::uint64_t>{0, 0, 4});
  CHECK(c.flush_dirty() == 3);
  CHECK(c.writeback_sectors_by_region() == std::vector<std::uint64_t>{2, 1, 4});
}

TEST_CASE("L2 flush_dirty writes back what is dirty and leaves lines valid and clean", "[cache]") {
  L2Cache c(tiny_spec(1, 2, 4), 1);
  c.set_regions({0, 4096});
  write(c, line_addr(1), 64);        // line 1 sectors 0-1: 2 dirty
  write(c, line_addr(2), 128);       // line 2: 4 dirty
  write(c, 4096 + 128 + 96, 32);     // line 33 (set 1) sector 3: 1 dirty, region 1
  read_line(c, 3);                   // clean
  // 2 + 4 + 1 = 7 sectors; region 0 gets 6 (lines 1, 2), region 1 gets 1 (line 33).
  CHECK(c.flush_dirty() == 7);
  CHECK(c.writeback_sectors_by_region() == std::vector<std::uint64_t>{6, 1, 0});
  CHECK(c.probe(line_addr(1), 0).valid == 0x3);
  CHECK(c.probe(line_addr(1), 0).dirty == 0);
  CHECK(c.probe(line_addr(2), 0).valid == 0xf);
  CHECK(c.probe(line_addr(2), 0).dirty == 0);
  CHECK(c.probe(4096 + 128, 0).valid == 0x8);
  CHECK(c.probe(4096 + 128, 0).dirty == 0);
  CHECK(c.probe(line_addr(3), 0).present);
  CHECK(c.flush_dirty() == 0);  // nothing left
  // The flushed lines still hit, and evicting them writes nothing back.
  CHECK(read(c, line_addr(1), 64).hit_sectors == 2);
  read_line(c, 5);
  const auto r = read_line(c, 9);  // set 1 held 1 and 33: both evicted by 5 and 9
  CHECK(r.dram_write_sectors == 0);
  CHECK_FALSE(c.probe(line_addr(1), 0).present);
  CHECK_FALSE(c.probe(4096 + 128, 0).present);
  CHECK(c.writeback_sectors_by_region() == std::vector<std::uint64_t>{6, 1, 0});
}

TEST_CASE("L2 invalidate_all empties the cache", "[cache]") {
  L2Cache c(tiny_spec(1, 2, 4), 1);
  for (std::uint64_t l = 0; l < 8; ++l) read_line(c, l);
  write(c, line_addr(3), 128);
  c.invalidate_all();
  for (std::uint64_t l = 0; l < 8; ++l) CHECK_FALSE(c.probe(line_addr(l), 0).present);
  CHECK(c.flush_dirty() == 0);  // dirty data is dropped, not written back
  // Everything misses again; the 8 lines refill the 4 sets x 2 ways with no evictions.
  for (std::uint64_t l = 0; l < 8; ++l) {
    const auto r = read_line(c, l);
    CHECK(r.hit_sectors == 0);
    CHECK(r.dram_read_sectors == 4);
    CHECK(r.dram_write_sectors == 0);
  }
  for (std::uint64_t l = 0; l < 8; ++l) CHECK(read_line(c, l).hit_sectors == 4);
}

// ---------------------------------------------------------------------------------------------
// Two partitions, 2 ways x 4 sets each (2 KiB): home = line % 2, set = (line / 2) % 4.
// Line 1: home 1, set 0. Line 0: home 0, set 0. Line 8: home 0, set 0 (8 / 2 = 4 -> 0).

TEST_CASE("L2 two partitions with far_copy", "[cache]") {
  L2Cache c(tiny_spec(2, 2, 4), 1);
  REQUIRE(c.geometry().sets == 4);
  CHECK(c.home_partition(line_addr(1)) == 1);
  CHECK(c.home_partition(line_addr(0)) == 0);
  CHECK(c.home_partition(line_addr(7)) == 1);

  // Requester 0 reads line 1 (home 1): near miss, home miss -> 4 sectors from DRAM, all 4 cross
  // the fabric; both halves move 4 sectors (near copy filled, home served); copies in both.
  auto r = read_line(c, 1, 0);
  CHECK(r.sectors == 4);
  CHECK(r.hit_sectors == 0);
  CHECK(r.near_copy_hit_sectors == 0);
  CHECK(r.dram_read_sectors == 4);
  CHECK(r.fabric_sectors == 4);
  CHECK(r.partition_sectors[0] == 4);
  CHECK(r.partition_sectors[1] == 4);
  CHECK(c.probe(line_addr(1), 0).present);
  CHECK(c.probe(line_addr(1), 0).valid == 0xf);
  CHECK(c.probe(line_addr(1), 1).present);
  CHECK(c.probe(line_addr(1), 1).valid == 0xf);

  // Again from requester 0: the near copy serves all 4; no fabric, home untouched.
  r = read_line(c, 1, 0);
  CHECK(r.hit_sectors == 4);
  CHECK(r.near_copy_hit_sectors == 4);
  CHECK(r.fabric_sectors == 0);
  CHECK(r.dram_read_sectors == 0);
  CHECK(r.partition_sectors[0] == 4);
  CHECK(r.partition_sectors[1] == 0);

  // From requester 1 (the home side): a home hit, no copy involved.
  r = read_line(c, 1, 1);
  CHECK(r.hit_sectors == 4);
  CHECK(r.near_copy_hit_sectors == 0);
  CHECK(r.fabric_sectors == 0);
  CHECK(r.partition_sectors[0] == 0);
  CHECK(r.partition_sectors[1] == 4);

  // Requester 1 writes sector 1 of line 1: goes to home (already valid -> 1 hit sector), made
  // dirty there, and the copy in partition 0 is invalidated.
  r = write(c, line_addr(1) + 32, 32, 1);
  CHECK(r.sectors == 1);
  CHECK(r.hit_sectors == 1);
  CHECK(r.fabric_sectors == 0);
  CHECK(r.dram_read_sectors == 0);
  CHECK(r.partition_sectors[1] == 1);
  CHECK(r.partition_sectors[0] == 0);
  CHECK_FALSE(c.probe(line_addr(1), 0).present);
  CHECK(c.probe(line_addr(1), 1).dirty == 0x2);

  // Requester 0 reads it again: near miss, home hit (4 sectors over the fabric, none from
  // DRAM), and the copy is made again.
  r = read_line(c, 1, 0);
  CHECK(r.hit_sectors == 4);
  CHECK(r.near_copy_hit_sectors == 0);
  CHECK(r.fabric_sectors == 4);
  CHECK(r.dram_read_sectors == 0);
  CHECK(r.partition_sectors[0] == 4);
  CHECK(r.partition_sectors[1] == 4);
  CHECK(c.probe(line_addr(1), 0).present);
  CHECK(c.probe(line_addr(1), 0).dirty == 0);  // copies are never dirty

  // Requester 0 writes the far line: the write crosses the fabric to home, and the (own, near)
  // copy is invalidated as well.
  r = write(c, line_addr(1), 128, 0);
  CHECK(r.sectors == 4);
  CHECK(r.hit_sectors == 4);
  CHECK(r.fabric_sectors == 4);
  CHECK(r.partition_sectors[0] == 0);
  CHECK(r.partition_sectors[1] == 4);
  CHECK_FALSE(c.probe(line_addr(1), 0).present);
  CHECK(c.probe(line_addr(1), 1).dirty == 0xf);
  // Only the home copy is dirty: the flush writes back 4 sectors, not 8.
  CHECK(c.flush_dirty() == 4);

  // A requester index beyond the partitions wraps around (2 -> 0): near copy again.
  read_line(c, 1, 0);
  CHECK(read_line(c, 1, 2).near_copy_hit_sectors == 4);
}

TEST_CASE("L2 two partitions: partial near copies", "[cache]") {
  L2Cache c(tiny_spec(2, 2, 4), 1);
  // Requester 0 reads sector 0 of line 1: copy (sector 0) near, sector 0 at home.
  auto r = read(c, line_addr(1), 32, 0);
  CHECK(r.dram_read_sectors == 1);
  CHECK(r.fabric_sectors == 1);
  // Then the whole line: sector 0 from the near copy; sectors 1-3 not near, not at home either
  // (home held only sector 0) -> 3 from DRAM over the fabric. Half 0 moves 4, half 1 moves 3.
  r = read_line(c, 1, 0);
  CHECK(r.sectors == 4);
  CHECK(r.hit_sectors == 1);
  CHECK(r.near_copy_hit_sectors == 1);
  CHECK(r.dram_read_sectors == 3);
  CHECK(r.fabric_sectors == 3);
  CHECK(r.partition_sectors[0] == 4);
  CHECK(r.partition_sectors[1] == 3);
  CHECK(c.probe(line_addr(1), 0).valid == 0xf);
  CHECK(c.probe(line_addr(1), 1).valid == 0xf);
}

TEST_CASE("L2 two partitions: near copies compete with home lines and can evict dirty ones", "[cache]") {
  L2Cache c(tiny_spec(2, 2, 4), 1);
  // Half 0, set 0: line 0 (written, dirty) and line 8 (read). The copy of line 1 (home 1,
  // set 0) also goes to half 0's set 0: it evicts the LRU line 0 -> 4 sectors written back.
  CHECK(write(c, line_addr(0), 128, 0).fabric_sectors == 0);
  read_line(c, 8, 0);
  const auto r = read_line(c, 1, 0);
  CHECK(r.dram_write_sectors == 4);
  CHECK(r.dram_read_sectors == 4);
  CHECK_FALSE(c.probe(line_addr(0), 0).present);
  CHECK(c.probe(line_addr(8), 0).present);
  CHECK(c.probe(line_addr(1), 0).present);
}

TEST_CASE("L2 two partitions without far_copy", "[cache]") {
  L2Cache c(tiny_spec(2, 2, 4, "lru", false), 1);
  // Requester 0 reads line 1 (home 1): home miss; 4 sectors over the fabric; no near copy.
  auto r = read_line(c, 1, 0);
  CHECK(r.dram_read_sectors == 4);
  CHECK(r.fabric_sectors == 4);
  CHECK(r.partition_sectors[0] == 0);
  CHECK(r.partition_sectors[1] == 4);
  CHECK_FALSE(c.probe(line_addr(1), 0).present);
  CHECK(c.probe(line_addr(1), 1).valid == 0xf);
  // Again: a home hit, and again all 4 sectors cross the fabric.
  r = read_line(c, 1, 0);
  CHECK(r.hit_sectors == 4);
  CHECK(r.near_copy_hit_sectors == 0);
  CHECK(r.fabric_sectors == 4);
  CHECK(r.dram_read_sectors == 0);
  CHECK(r.partition_sectors[0] == 0);
  CHECK(r.partition_sectors[1] == 4);
  // Requester 1 (home side) reads: no fabric.
  r = read_line(c, 1, 1);
  CHECK(r.hit_sectors == 4);
  CHECK(r.fabric_sectors == 0);
  // A near line (line 0 from requester 0): no fabric either.
  r = read_line(c, 0, 0);
  CHECK(r.fabric_sectors == 0);
  CHECK(r.partition_sectors[0] == 4);
  CHECK(r.partition_sectors[1] == 0);
}

TEST_CASE("L2 partition_sectors over a rectangle", "[cache]") {
  L2Cache c(tiny_spec(2, 2, 4), 1);
  // Lines 0..3 (512 contiguous bytes) from requester 1: lines 1, 3 are near (home 1), lines 0, 2
  // are far (home 0) and get copies in half 1. Half 1 moves 4 x 4 = 16 sectors (2 home lines +
  // 2 copies), half 0 moves 8 (its 2 home lines), 8 cross the fabric, all 16 from DRAM.
  auto r = c.access(ByteRect{0, 0, 512, 1}, 1, false);
  CHECK(r.sectors == 16);
  CHECK(r.dram_read_sectors == 16);
  CHECK(r.fabric_sectors == 8);
  CHECK(r.partition_sectors[0] == 8);
  CHECK(r.partition_sectors[1] == 16);
  // Again: everything hits in half 1 (two lines home, two as copies).
  r = c.access(ByteRect{0, 0, 512, 1}, 1, false);
  CHECK(r.hit_sectors == 16);
  CHECK(r.near_copy_hit_sectors == 8);
  CHECK(r.fabric_sectors == 0);
  CHECK(r.partition_sectors[0] == 0);
  CHECK(r.partition_sectors[1] == 16);
}


TEST_CASE("L2 write_flush leaves the stream's lines, a fraction of them dirty", "[cache]") {
  // Two partitions x 4 ways x 64 sets: 512 lines, 2048 sectors. A 1 MiB write stream (8192
  // lines) fills every way; each line past the first 512 evicts a dirty one: (8192 - 512) x 4
  // write-backs, counted in the stream's region.
  const auto run = [](double fraction) {
    L2Cache c(tiny_spec(2, 4, 64), 1);
    const Addr base = Addr{1} << 30;
    c.set_regions({0, base});
    c.write_flush(base, 1 << 20, fraction);
    CHECK(c.writeback_sectors_by_region()[1] == (8192 - 512) * 4);
    CHECK(read_line(c, base / 128 + 8191).hit_sectors == 4);  // the stream's last line is there
    CHECK(read_line(c, 0).hit_sectors == 0);
    return c.flush_dirty();  // the dirty sectors it left
  };
  // Every line dirty but two: the stream's last line is homed in partition 1 (odd), so reading
  // it from partition 0 fills a near copy there, and line 0's miss fills another line; each
  // evicts a dirty line and writes it back.
  CHECK(run(1.0) == 2048 - 8);
  CHECK(run(0.0) == 0);
  // Chosen by a hash of the line: close to the fraction (512 lines: 2 sigma is about 22 lines).
  const std::uint64_t half = run(0.5);
  CHECK(half >= 4 * (256 - 30));
  CHECK(half <= 4 * (256 + 30));
}
