// Set-index hashes: FastMod against `%`, and how modulo and xor_fold spread the rows of a
// GEMM operand tile of a row-major matrix over an H100-like L2 (2 halves x 12800 sets x 16 ways).
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
  CHECK(hash_names() == std::vector<std::string>{"modulo", "xor_fold"});
  // The explorer numbers hashes by their position in the family: the variant built from a
  // position holds that hash.
  const CacheGeometry g{2, 64, 16, 7, 5, 4, 0xf};
  CHECK(std::holds_alternative<XorFoldHash>(HashPolicies::make(1, g)));
  for (const NamedPolicy& p : hash_policies()) CHECK_FALSE(p.description.empty());
}

TEST_CASE("the h100 preset has 12800 sets per half", "[cache]") {
  // 50 MiB / (128 B x 16 ways x 2 halves) = 12800 sets per half, xor_fold hash.
  const ArchSpec a = load_arch("h100", YAML::Node(), "test");
  L2Cache c(a.l2, 1);
  CHECK(c.geometry().sets == 12800);
  CHECK(c.geometry().partitions == 2);
  CHECK(c.geometry().ways == 16);
  CHECK(a.l2.hash == "xor_fold");
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
