// Set-index hashes: FastMod against `%`, how modulo and xor_fold spread the rows of a GEMM
// operand tile of a row-major matrix over an H100-like L2 (2 halves x 12800 sets x 16 ways), and
// how page_mix fills the sets: page by page, against lines placed at random.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "models/arch.hpp"
#include "models/cache/geometry.hpp"
#include "models/cache/hash/family.hpp"
#include "models/cache/hash/hash.hpp"
#include "models/cache/hash/modulo.hpp"
#include "models/cache/hash/page_mix.hpp"
#include "models/cache/hash/xor_fold.hpp"
#include "models/cache/l2.hpp"

using namespace tilesim;

namespace {

CacheGeometry h100_like() {
  CacheGeometry g;
  g.partitions = 2;
  g.sets = 12800;  // 50 MiB / (128 B x 16 ways x 2 halves)
  g.ways = 16;
  return g;
}

// Lines of the rows [row0, row0 + rows) at line column `col` of a row-major 8192-column fp16
// matrix at address 0: a row is 16 KiB = 128 lines, so row r's line is r * 128 + col.
struct Spread {
  std::array<std::uint32_t, 2> per_partition{};
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> per_slot;  // (partition, set) -> lines
  std::uint32_t max_per_slot() const {
    std::uint32_t m = 0;
    for (const auto& [k, v] : per_slot) m = std::max(m, v);
    return m;
  }
};

template <class Hash>
Spread spread(const Hash& h, std::uint32_t row0, std::uint32_t rows, std::uint32_t col) {
  Spread s;
  for (std::uint32_t r = row0; r < row0 + rows; ++r) {
    const SetSlot slot = h.slot(r * 128 + col);
    REQUIRE(slot.partition < 2);
    REQUIRE(slot.set < 12800);
    ++s.per_partition[slot.partition];
    ++s.per_slot[{slot.partition, slot.set}];
  }
  return s;
}

}  // namespace

TEST_CASE("FastMod equals % for random values and divisors", "[cache]") {
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<std::uint32_t> any;
  const std::uint32_t fixed[] = {1, 2, 3, 7, 12800, 25600, 1u << 16, (1u << 31) - 1, 1u << 31, 0xffffffffu};
  const std::uint32_t edge_values[] = {0, 1, 12799, 12800, 12801, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
  for (std::uint32_t d : fixed) {
    const FastMod fm(d);
    CHECK(fm.divisor() == d);
    for (std::uint32_t a : edge_values) REQUIRE(fm(a) == a % d);
    for (int i = 0; i < 20000; ++i) {
      const std::uint32_t a = any(rng);
      REQUIRE(fm(a) == a % d);
    }
  }
  for (int j = 0; j < 2000; ++j) {
    // Divisors of every magnitude: a random bit width, then a random value of that width.
    const std::uint32_t bits = 1 + static_cast<std::uint32_t>(rng() % 32);
    std::uint32_t d = static_cast<std::uint32_t>(rng() >> (64 - bits));
    if (d == 0) d = 1;
    const FastMod fm(d);
    for (int i = 0; i < 200; ++i) {
      const std::uint32_t a = any(rng);
      REQUIRE(fm(a) == a % d);
    }
    for (std::uint32_t a : {d - 1, d, d + 1, 2 * d - 1, 2 * d}) REQUIRE(fm(a) == a % d);
  }
}

TEST_CASE("hash names resolve", "[cache]") {
  CHECK(HashPolicies::index_of("modulo") == 0);
  CHECK(HashPolicies::index_of("xor_fold") == 1);
  CHECK(HashPolicies::index_of("crc") == HashPolicies::size);
  CHECK(HashPolicies::index_of("page_mix") == 2);
  CHECK(hash_names() == std::vector<std::string>{"modulo", "xor_fold", "page_mix"});
  // The explorer numbers hashes by their position in the family: the variant built from a
  // position holds that hash.
  const CacheGeometry g{2, 64, 16, 7, 5, 4, 0xf};
  CHECK(std::holds_alternative<XorFoldHash>(HashPolicies::make(1, g)));
  for (const NamedPolicy& p : hash_policies()) CHECK_FALSE(p.description.empty());
}

TEST_CASE("the h100 preset has 12800 sets per half", "[cache]") {
  // 50 MiB / (128 B x 16 ways x 2 halves) = 12800 sets per half, page_mix hash.
  const ArchSpec a = load_arch("h100", YAML::Node(), "test");
  L2Cache c(a.l2, 1);
  CHECK(c.geometry().sets == 12800);
  CHECK(c.geometry().partitions == 2);
  CHECK(c.geometry().ways == 16);
  CHECK(a.l2.hash == "page_mix");
}

TEST_CASE("modulo hash: hand-computed slots", "[cache]") {
  // 1 partition: set = line % sets. 2 partitions: home = line % 2, set = (line / 2) % sets.
  CacheGeometry g1;
  g1.partitions = 1;
  g1.sets = 12800;
  const ModuloHash m1(g1);
  CHECK(m1.slot(12805).partition == 0);
  CHECK(m1.slot(12805).set == 5);
  const ModuloHash m2(h100_like());
  CHECK(m2.slot(25603).partition == 1);  // odd
  CHECK(m2.slot(25603).set == 1);        // 25603 / 2 = 12801 -> 1
  CHECK(m2.slot(40).partition == 0);
  CHECK(m2.slot(40).set == 20);
}

TEST_CASE("xor_fold spreads a 128x64 fp16 tile over both halves but modulo does not", "[cache]") {
  // Tile 128 rows x 64 fp16 = 128 B per row = one line per row; rows 16 KiB = 128 lines apart.
  const CacheGeometry g = h100_like();
  const ModuloHash mod(g);
  const XorFoldHash xf(g);
  for (std::uint32_t row0 : {0u, 128u, 4096u, 8064u}) {
    for (std::uint32_t col : {0u, 1u, 5u, 127u}) {
      CAPTURE(row0, col);
      const auto x = spread(xf, row0, 128, col);
      const auto m = spread(mod, row0, 128, col);
      // xor_fold: home = parity of the line's low 20 bits. Line = r * 128 + col, so the parity is
      // parity(col) ^ parity(r) over 128 consecutive rows (aligned to 128): exactly 64 / 64.
      CHECK(x.per_partition[0] >= 128 * 40 / 100);
      CHECK(x.per_partition[0] <= 128 * 60 / 100);
      CHECK(x.per_partition[1] >= 128 * 40 / 100);
      CHECK(x.per_partition[1] <= 128 * 60 / 100);
      CHECK(x.per_partition[0] == 64);
      // Every row has its own (partition, set): 128 distinct slots, no two rows in one set.
      CHECK(x.per_slot.size() == 128);
      // modulo: home = line % 2 = col % 2 (128 * r is even): the whole tile in one half.
      CHECK(m.per_partition[col % 2] == 128);
      CHECK(m.per_partition[1 - col % 2] == 0);
      // set = (line / 2) % 12800 = (64 r + col / 2) % 12800: 128 rows span 64 * 128 = 8192 < 12800
      // sets, so they are still distinct, 64 sets apart.
      CHECK(m.per_slot.size() == 128);
    }
  }
}

TEST_CASE("a full 8192-row column of lines: modulo folds it onto 200 sets, xor_fold onto 8192", "[cache]") {
  // The K-loop of a GEMM walks a whole operand column panel: rows 0..8191 at one line column.
  const CacheGeometry g = h100_like();
  const ModuloHash mod(g);
  const XorFoldHash xf(g);
  for (std::uint32_t col : {0u, 3u}) {
    CAPTURE(col);
    const auto m = spread(mod, 0, 8192, col);
    // set = (64 r + col / 2) % 12800: 64 r mod 12800 takes 12800 / gcd(64, 12800) = 200 values,
    // all in one half: 8192 lines on 200 sets x 16 ways = 3200 lines of room -> conflict misses.
    CHECK(m.per_slot.size() == 200);
    CHECK(m.per_partition[col % 2] == 8192);
    CHECK(m.max_per_slot() == 41);  // ceil(8192 / 200)
    const auto x = spread(xf, 0, 8192, col);
    // xor_fold: halves exactly even (parity argument above, over 64 aligned blocks of 128 rows)
    // and every line in its own slot: no conflicts at all for this panel.
    CHECK(x.per_partition[0] == 4096);
    CHECK(x.per_partition[1] == 4096);
    CHECK(x.per_slot.size() == 8192);
    CHECK(x.max_per_slot() <= g.ways);
  }
}

TEST_CASE("xor_fold with one partition keeps everything in partition 0", "[cache]") {
  CacheGeometry g;
  g.partitions = 1;
  g.sets = 96;
  const XorFoldHash xf(g);
  std::set<std::uint32_t> sets;
  for (std::uint32_t line = 0; line < 100000; line += 37) {
    const SetSlot s = xf.slot(line);
    REQUIRE(s.partition == 0);
    REQUIRE(s.set < 96);
    sets.insert(s.set);
  }
  CHECK(sets.size() == 96);
}

namespace {

// Lines per (partition, set) for the lines [first, first + count) taken `chunk` at a time every
// `stride` lines, and how many slots hold more than `ways` of them.
template <class Hash>
std::pair<std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t>, std::uint32_t> fill(
    const Hash& h, std::uint32_t first, std::uint32_t count, std::uint32_t chunk, std::uint32_t stride,
    std::uint32_t ways) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> per_slot;
  std::uint32_t taken = 0;
  for (std::uint32_t base = first; taken < count; base += stride)
    for (std::uint32_t j = 0; j < chunk && taken < count; ++j, ++taken) {
      const SetSlot s = h.slot(base + j);
      REQUIRE(s.partition < 2);
      REQUIRE(s.set < 12800);
      ++per_slot[{s.partition, s.set}];
    }
  std::uint32_t over = 0;
  for (const auto& [k, v] : per_slot) over += v > ways ? 1 : 0;
  return {per_slot, over};
}

// The reference for "at random": every line on a slot drawn by a bit mixer of its index.
struct RandomSlots {
  explicit RandomSlots(const CacheGeometry& g) : set_mod(g.sets) {}
  FastMod set_mod;
  SetSlot slot(std::uint32_t line) const {
    const std::uint64_t x = mix_bits(line);
    return {static_cast<std::uint32_t>(x & 1u), set_mod(static_cast<std::uint32_t>(x >> 32))};
  }
};

}  // namespace

TEST_CASE("lines on random slots overflow some sets before the cache is full, xor_fold none", "[cache]") {
  // 90% of an H100-like L2 (2 x 12800 x 16 = 409600 lines) as one contiguous range. xor_fold
  // puts 14 or 15 lines in every set, as evenly as possible; random slots hold a Poisson-like
  // number (mean 14.4, sd 3.8), so about a quarter of them overflow 16 ways.
  const CacheGeometry g = h100_like();
  const std::uint32_t lines = 409600 * 9 / 10;
  CHECK(fill(XorFoldHash(g), 0, lines, lines, lines, 16).second == 0);
  const auto [rnd, rnd_over] = fill(RandomSlots(g), 0, lines, lines, lines, 16);
  CHECK(rnd_over > 25600 / 5);
  CHECK(rnd_over < 25600 / 3);
}

TEST_CASE("page_mix: a whole page takes distinct slots, and pages land apart", "[cache]") {
  const CacheGeometry g = h100_like();  // 7-bit lines: a 2 MiB page is 16384 lines
  const PageMixHash pm(g);
  for (std::uint32_t page : {0u, 1u, 77u, 4000u}) {
    CAPTURE(page);
    const auto [slots, over] = fill(pm, page * 16384u, 16384, 16384, 16384, 16);
    CHECK(slots.size() == 16384);  // one line per slot: the page's map is one-to-one
    CHECK(over == 0);
  }
  // Two pages start at unrelated slots: their overlap is what two random runs of 16384 out of
  // 25600 slots share (between 7168 and 16384), not all or nothing.
  std::set<std::pair<std::uint32_t, std::uint32_t>> a;
  for (std::uint32_t l = 0; l < 16384; ++l) a.insert({pm.slot(l).partition, pm.slot(l).set});
  std::uint32_t shared = 0;
  for (std::uint32_t l = 16384; l < 32768; ++l) shared += a.count({pm.slot(l).partition, pm.slot(l).set});
  CHECK(shared >= 7168);
  CHECK(shared < 16384);
}

TEST_CASE("page_mix spreads a contiguous footprint more evenly than random slots, and chunks alike", "[cache]") {
  // 90% of the L2 again. Contiguous: whole pages, each an even run, so fewer slots overflow
  // than with lines at random. The same number of lines as 4 KiB chunks (32 lines) every
  // 32 KiB: each page holds 64 scattered chunks, and slots overflow about as often as at random.
  const CacheGeometry g = h100_like();
  const std::uint32_t lines = 409600 * 9 / 10;
  const std::uint32_t mix_over = fill(RandomSlots(g), 0, lines, lines, lines, 16).second;
  const std::uint32_t page_over = fill(PageMixHash(g), 0, lines, lines, lines, 16).second;
  const std::uint32_t chunk_over = fill(PageMixHash(g), 0, lines, 32, 256, 16).second;
  CAPTURE(mix_over, page_over, chunk_over);
  CHECK(page_over < mix_over * 3 / 4);
  CHECK(chunk_over > mix_over * 3 / 4);
  CHECK(chunk_over < mix_over * 5 / 4);
}
