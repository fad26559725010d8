// The L2 against a brute-force reference model on random traces (see the comment below).
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
// A brute-force reference model (LRU or FIFO, modulo or xor_fold, 1 or 2 partitions, far_copy
// on/off), written from the header's semantics independently of l2.cpp (lists in recency or
// fill order instead of stamps, byte-by-byte sector masks), compared counter by counter on
// random traces of rectangles, reads and writes.

namespace {

struct RefLine {
  std::uint32_t line;
  std::uint8_t valid, dirty;
};

struct RefCache {
  std::uint32_t partitions, sets, ways;
  bool far_copy, fifo, xor_fold;
  std::vector<std::list<RefLine>> lists;  // per (partition, set): most recent (LRU) or newest fill (FIFO) first

  RefCache(std::uint32_t p, std::uint32_t s, std::uint32_t w, bool fc, bool fifo_, bool xf)
      : partitions(p), sets(s), ways(w), far_copy(fc && p == 2), fifo(fifo_), xor_fold(xf), lists(p * s) {}

  std::pair<std::uint32_t, std::uint32_t> slot(std::uint32_t line) const {
    if (!xor_fold) return {line % partitions, (line / partitions) % sets};
    const std::uint32_t part = partitions == 2 ? __builtin_popcount(line & 0xfffffu) % 2 : 0;
    return {part, (line ^ (line >> 11) ^ (line >> 19) ^ (line >> 27)) % sets};
  }
  std::uint8_t touch(std::uint32_t part, std::uint32_t set, std::uint32_t line, std::uint8_t mask, bool dirty,
                     L2AccessResult& r) {
    auto& l = lists[part * sets + set];
    for (auto it = l.begin(); it != l.end(); ++it) {
      if (it->line == line) {
        const std::uint8_t prev = it->valid & mask;
        it->valid |= mask;
        if (dirty) it->dirty |= mask;
        if (!fifo) l.splice(l.begin(), l, it);
        return prev;
      }
    }
    if (l.size() == ways) {
      r.dram_write_sectors += static_cast<std::uint64_t>(__builtin_popcount(l.back().dirty));
      l.pop_back();
    }
    l.push_front({line, mask, static_cast<std::uint8_t>(dirty ? mask : 0)});
    return 0;
  }
  void drop(std::uint32_t part, std::uint32_t set, std::uint32_t line) {
    auto& l = lists[part * sets + set];
    l.remove_if([&](const RefLine& x) { return x.line == line; });
  }
  void access_line(std::uint32_t line, std::uint8_t mask, std::uint32_t req, bool write, L2AccessResult& r) {
    const auto [home, set] = slot(line);
    const int n = __builtin_popcount(mask);
    r.sectors += n;
    if (write) {
      r.hit_sectors += __builtin_popcount(touch(home, set, line, mask, true, r));
      r.partition_sectors[home] += n;
      if (home != req) r.fabric_sectors += n;
      if (far_copy) drop(1 - home, set, line);
    } else if (home == req || !far_copy) {
      const int h = __builtin_popcount(touch(home, set, line, mask, false, r));
      r.hit_sectors += h;
      r.dram_read_sectors += n - h;
      r.partition_sectors[home] += n;
      if (home != req) r.fabric_sectors += n;
    } else {
      const std::uint8_t near = touch(req, set, line, mask, false, r);
      r.hit_sectors += __builtin_popcount(near);
      r.near_copy_hit_sectors += __builtin_popcount(near);
      r.partition_sectors[req] += n;
      const std::uint8_t rest = mask & ~near;
      if (rest) {
        const int h = __builtin_popcount(touch(home, set, line, rest, false, r));
        r.hit_sectors += h;
        r.dram_read_sectors += __builtin_popcount(rest) - h;
        r.fabric_sectors += __builtin_popcount(rest);
        r.partition_sectors[home] += __builtin_popcount(rest);
      }
    }
  }
  L2AccessResult access(const ByteRect& b, std::uint32_t req, bool write) {
    L2AccessResult r;
    req %= partitions;
    for (std::uint32_t row = 0; row < b.rows; ++row) {
      // Byte by byte: the slow, obviously right way to find the touched sectors.
      std::uint32_t cur_line = ~0u;
      std::uint8_t mask = 0;
      for (std::uint64_t a = b.start + row * b.pitch; a < b.start + row * b.pitch + b.row_bytes; ++a) {
        const auto line = static_cast<std::uint32_t>(a / 128);
        if (line != cur_line) {
          if (mask) access_line(cur_line, mask, req, write, r);
          cur_line = line;
          mask = 0;
        }
        mask |= static_cast<std::uint8_t>(1u << ((a % 128) / 32));
      }
      if (mask) access_line(cur_line, mask, req, write, r);
    }
    return r;
  }
  std::uint64_t flush() {
    std::uint64_t n = 0;
    for (auto& l : lists)
      for (auto& x : l) {
        n += static_cast<std::uint64_t>(__builtin_popcount(x.dirty));
        x.dirty = 0;
      }
    return n;
  }
  bool holds(std::uint32_t part, std::uint32_t line, std::uint8_t& valid, std::uint8_t& dirty) const {
    for (const auto& x : lists[part * sets + slot(line).second])
      if (x.line == line) {
        valid = x.valid;
        dirty = x.dirty;
        return true;
      }
    return false;
  }
};

/// One configuration of the L2 and its reference.
struct Cfg {
  std::uint32_t partitions, ways, sets;
  bool far_copy;
  const char* repl;
  const char* hash;
};

RefCache reference_of(const Cfg& cfg) {
  return RefCache(cfg.partitions, cfg.sets, cfg.ways, cfg.far_copy, std::string(cfg.repl) == "fifo",
                  std::string(cfg.hash) == "xor_fold");
}

/// Every counter of an access agrees with the reference's.
void require_same(const L2AccessResult& got, const L2AccessResult& want) {
  REQUIRE(got.sectors == want.sectors);
  REQUIRE(got.hit_sectors == want.hit_sectors);
  REQUIRE(got.near_copy_hit_sectors == want.near_copy_hit_sectors);
  REQUIRE(got.fabric_sectors == want.fabric_sectors);
  REQUIRE(got.dram_read_sectors == want.dram_read_sectors);
  REQUIRE(got.dram_write_sectors == want.dram_write_sectors);
  REQUIRE(got.partition_sectors == want.partition_sectors);
}

}  // namespace

TEST_CASE("L2 matches a brute-force LRU/FIFO reference on random traces", "[cache]") {
  const Cfg cfgs[] = {
      {1, 2, 4, true, "lru", "modulo"},     {1, 4, 3, true, "lru", "modulo"},    {2, 2, 4, true, "lru", "modulo"},
      {2, 4, 5, true, "lru", "modulo"},     {2, 2, 4, false, "lru", "modulo"},   {2, 3, 7, false, "lru", "modulo"},
      {1, 1, 5, true, "lru", "modulo"},     {2, 5, 3, true, "lru", "modulo"},    {2, 16, 6, true, "lru", "xor_fold"},
      {2, 4, 7, true, "fifo", "modulo"},    {1, 3, 4, true, "fifo", "xor_fold"}, {2, 2, 9, true, "lru", "xor_fold"},
      {2, 6, 5, false, "fifo", "xor_fold"}, {2, 64, 1, true, "lru", "modulo"},
  };
  for (const Cfg& cfg : cfgs) {
    CAPTURE(cfg.partitions, cfg.ways, cfg.sets, cfg.far_copy, cfg.repl, cfg.hash);
    L2Cache c(tiny_spec(cfg.partitions, cfg.ways, cfg.sets, cfg.repl, cfg.far_copy, cfg.hash), 1);
    RefCache ref = reference_of(cfg);
    std::mt19937_64 rng(cfg.partitions * 1000 + cfg.ways * 10 + cfg.sets);
    // A few hot regions far apart in the address space (so xor_fold's high bits matter), each
    // 96 lines long, plus large rectangles now and then (more lines than one lookup batch).
    std::vector<Addr> bases;
    for (int i = 0; i < 4; ++i) bases.push_back((rng() % (1u << 20)) * 4096);
    for (int i = 0; i < 3000; ++i) {
      CAPTURE(i);
      ByteRect b;
      b.start = bases[rng() % bases.size()] + rng() % (128 * 96);
      const bool big = rng() % 10 == 0;
      b.row_bytes = 1 + rng() % (big ? 2000 : 300);
      b.rows = 1 + static_cast<std::uint32_t>(rng() % (big ? 24 : 4));
      b.pitch = b.row_bytes + rng() % 700;
      const auto req = static_cast<std::uint32_t>(rng() % 3);
      const bool wr = rng() % 4 == 0;
      require_same(c.access(b, req, wr), ref.access(b, req, wr));
      if (i % 500 == 499) {
        // Same contents: every line of the last rectangle's rows, in both halves.
        for (std::uint32_t row = 0; row < b.rows; ++row)
          for (Addr a = b.start + row * b.pitch; a < b.start + row * b.pitch + b.row_bytes; a += 32)
            for (std::uint32_t p = 0; p < cfg.partitions; ++p) {
              std::uint8_t v = 0, d = 0;
              const bool held = ref.holds(p, static_cast<std::uint32_t>(a / 128), v, d);
              const LineProbe pr = c.probe(a, p);
              REQUIRE(pr.present == held);
              if (held) {
                REQUIRE(pr.valid == v);
                REQUIRE(pr.dirty == d);
              }
            }
        REQUIRE(c.flush_dirty() == ref.flush());
      }
    }
    CHECK(c.flush_dirty() == ref.flush());
  }
}


TEST_CASE("L2 matches the reference on reused whole-line rectangles (memoised set locations)", "[cache]") {
  // GEMM-like traffic: aligned tiles of whole lines, each read again and again from either
  // half, so the L2 locates their sets from its rectangle memo. Rectangles that share a first
  // line but differ in shape, pitch or row count must not share entries; rectangles of more
  // lines than a memo slot holds take the unmemoised path. 16 ways take the constant-layout path.
  const Cfg cfgs[] = {
      {2, 16, 12, true, "lru", "xor_fold"},  {2, 16, 7, false, "fifo", "xor_fold"}, {1, 16, 9, true, "lru", "modulo"},
      {2, 4, 11, true, "lru", "xor_fold"},   {2, 16, 5, true, "fifo", "modulo"},    {1, 8, 13, true, "fifo", "xor_fold"},
  };
  for (const Cfg& cfg : cfgs) {
    CAPTURE(cfg.partitions, cfg.ways, cfg.sets, cfg.far_copy, cfg.repl, cfg.hash);
    L2Cache c(tiny_spec(cfg.partitions, cfg.ways, cfg.sets, cfg.repl, cfg.far_copy, cfg.hash), 1);
    RefCache ref = reference_of(cfg);
    std::mt19937_64 rng(cfg.partitions * 7 + cfg.ways * 131 + cfg.sets);
    // A pool of tiles: bases far apart (xor_fold's high bits), line-aligned, 1..4 lines a row,
    // 1..80 rows (up to 320 lines), pitch 1..300 lines; every sixth is the one before with one
    // of its row count, row length or pitch changed.
    std::vector<ByteRect> pool;
    for (int i = 0; i < 48; ++i) {
      ByteRect b;
      b.start = (rng() % (1u << 22)) * 4096 + (rng() % 64) * 128;
      b.row_bytes = 128 * (1 + rng() % 4);
      b.rows = 1 + static_cast<std::uint32_t>(rng() % 80);
      b.pitch = 128 * (b.row_bytes / 128 + rng() % 300);
      if (i % 6 == 5) {
        const ByteRect prev = pool.back();
        const auto field = i / 6 % 3;
        b = prev;
        if (field == 0) b.rows = prev.rows % 80 + 1;
        if (field == 1) b.row_bytes = prev.row_bytes % 512 + 128;
        if (field == 2 || b.pitch < b.row_bytes) b.pitch = prev.pitch + 128 * (1 + rng() % 8);
      }
      pool.push_back(b);
    }
    for (int i = 0; i < 2000; ++i) {
      CAPTURE(i);
      const ByteRect& b = pool[rng() % pool.size()];
      const auto req = static_cast<std::uint32_t>(rng() % 2);
      const bool wr = rng() % 8 == 0;
      require_same(c.access(b, req, wr), ref.access(b, req, wr));
    }
    CHECK(c.flush_dirty() == ref.flush());
  }
}
