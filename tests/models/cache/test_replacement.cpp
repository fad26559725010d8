// Replacement policies driven directly on one set's metadata words (one uint32 per way), the
// way the L2's access loop calls them. Every expected victim below is worked out by hand in the
// comments; ways are filled in order (A -> way 0, B -> way 1, ...), as the cache fills free ways.
#include <catch2/catch.hpp>

#include <array>
#include <set>
#include <vector>

#include "models/cache/replacement/fifo.hpp"
#include "models/cache/replacement/lru.hpp"
#include "models/cache/replacement/random.hpp"
#include "models/cache/replacement/replacement.hpp"
#include "models/cache/replacement/srrip.hpp"

using namespace tilesim;

TEST_CASE("LRU evicts the least recently touched way", "[cache]") {
  LruPolicy p;
  std::array<std::uint32_t, 4> m{};  // the cache starts LRU metadata at 0
  // Fill A B C D: stamps 1 2 3 4 (clock starts at 1).
  for (std::uint32_t w = 0; w < 4; ++w) p.on_fill(m.data(), w);
  CHECK(m == std::array<std::uint32_t, 4>{1, 2, 3, 4});
  // Hit A: stamp 5 -> A is now the most recent, B (stamp 2) the oldest.
  p.on_hit(m.data(), 0);
  CHECK(p.victim(m.data(), 4) == 1);  // B
  // Replace B with E (stamp 6): stamps A5 E6 C3 D4 -> C is the oldest.
  p.on_fill(m.data(), 1);
  CHECK(p.victim(m.data(), 4) == 2);  // C
  // Hit D (7), replace C with F (8): A5 E6 F8 D7 -> A is the oldest now.
  p.on_hit(m.data(), 3);
  p.on_fill(m.data(), 2);
  CHECK(p.victim(m.data(), 4) == 0);  // A
  // Invalidating a way resets its stamp to 0, which makes it the first candidate.
  p.on_invalidate(m.data(), 3);
  CHECK(p.victim(m.data(), 4) == 3);
}

TEST_CASE("FIFO evicts in fill order and ignores hits", "[cache]") {
  FifoPolicy p;
  std::array<std::uint32_t, 4> m{};
  // Fill A B C D: stamps 1 2 3 4. The hit on A changes nothing, so A (the first in) goes.
  for (std::uint32_t w = 0; w < 4; ++w) p.on_fill(m.data(), w);
  p.on_hit(m.data(), 0);
  CHECK(m == std::array<std::uint32_t, 4>{1, 2, 3, 4});
  CHECK(p.victim(m.data(), 4) == 0);  // A
  // Replace A with E (stamp 5); hit B: B is still the oldest fill (2).
  p.on_fill(m.data(), 0);
  p.on_hit(m.data(), 1);
  CHECK(p.victim(m.data(), 4) == 1);  // B
  // Replace B with F (6): E5 F6 C3 D4 -> C, then (after C -> G 7) D.
  p.on_fill(m.data(), 1);
  CHECK(p.victim(m.data(), 4) == 2);  // C
  p.on_fill(m.data(), 2);
  CHECK(p.victim(m.data(), 4) == 3);  // D
}

TEST_CASE("SRRIP (Jaleel et al. ISCA 2010): fill at 2, hit to 0, victim the first way at 3 after ageing",
          "[cache]") {
  SrripPolicy p;
  // The cache initialises SRRIP metadata to 3 (RRPV of an empty way = "distant").
  std::array<std::uint32_t, 4> m{3, 3, 3, 3};
  using A4 = std::array<std::uint32_t, 4>;
  // Fill A B C D: RRPV 2 2 2 2 ("long" re-reference prediction).
  for (std::uint32_t w = 0; w < 4; ++w) p.on_fill(m.data(), w);
  CHECK(m == A4{2, 2, 2, 2});
  // Hit A -> 0: 0 2 2 2.
  p.on_hit(m.data(), 0);
  CHECK(m == A4{0, 2, 2, 2});
  // Victim: no way at 3, age all by one -> 1 3 3 3; the first way at 3 is way 1 (B).
  CHECK(p.victim(m.data(), 4) == 1);
  CHECK(m == A4{1, 3, 3, 3});
  // Fill E into way 1 -> 1 2 3 3. Victim: way 2 (C) is already at 3, no ageing.
  p.on_fill(m.data(), 1);
  CHECK(p.victim(m.data(), 4) == 2);
  CHECK(m == A4{1, 2, 3, 3});
  // Fill F into way 2 -> 1 2 2 3; hit E -> 1 0 2 3. Victim: way 3 (D), no ageing.
  p.on_fill(m.data(), 2);
  p.on_hit(m.data(), 1);
  CHECK(p.victim(m.data(), 4) == 3);
  CHECK(m == A4{1, 0, 2, 3});
  // Fill G into way 3 -> 1 0 2 2. Victim: age once -> 2 1 3 3, first at 3 is way 2 (F).
  p.on_fill(m.data(), 3);
  CHECK(p.victim(m.data(), 4) == 2);
  CHECK(m == A4{2, 1, 3, 3});
  // Fill H into way 2 -> 2 1 2 3. Victim: way 3 (G, filled and never re-referenced).
  p.on_fill(m.data(), 2);
  CHECK(p.victim(m.data(), 4) == 3);
  // Fill I into way 3 -> 2 1 2 2. Victim: age once -> 3 2 3 3, the first at 3 is way 0 (A):
  // A's single hit bought it three more evictions than C, D and F.
  p.on_fill(m.data(), 3);
  CHECK(p.victim(m.data(), 4) == 0);
  CHECK(m == A4{3, 2, 3, 3});
  // Two rounds of ageing: 0 0 1 0 -> 1 1 2 1 -> 2 2 3 2, the first (only) way at 3 is way 2.
  A4 hot{0, 0, 1, 0};
  CHECK(p.victim(hot.data(), 4) == 2);
  CHECK(hot == A4{2, 2, 3, 2});
  // Invalidation makes the way the next victim immediately.
  p.on_invalidate(hot.data(), 1);
  CHECK(p.victim(hot.data(), 4) == 1);
}

TEST_CASE("SRRIP resists a scan that LRU does not", "[cache]") {
  // 4 ways: a hot line H, re-referenced once, then a scan of one-use lines. Under LRU, H would
  // be the oldest stamp and the first victim of the scan; under SRRIP, H sits at RRPV 0 while
  // scan lines enter at 2 and are the ones aged to 3 and evicted:
  // 0 2 2 2 -> age 1 3 3 3 (way 1) -> fill 1 2 3 3 (way 2) -> 1 2 2 3 (way 3) -> 1 2 2 2 -> age
  // 2 3 3 3 (way 1).
  SrripPolicy p;
  std::array<std::uint32_t, 4> m{3, 3, 3, 3};
  p.on_fill(m.data(), 0);  // H
  p.on_hit(m.data(), 0);   // H re-referenced: 0
  for (std::uint32_t w = 1; w < 4; ++w) p.on_fill(m.data(), w);  // 0 2 2 2
  // Four scan lines arrive; each evicts a scan line, never H: the first victim ages to 1 3 3 3.
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t v = p.victim(m.data(), 4);
    CHECK(v != 0);
    p.on_fill(m.data(), v);
  }
}

TEST_CASE("Random replacement is reproducible, in range and reaches every way", "[cache]") {
  constexpr std::uint32_t kWays = 16;
  std::array<std::uint32_t, kWays> m{};
  RandomPolicy a(42), b(42), c(43);
  std::vector<std::uint32_t> va, vb, vc;
  for (int i = 0; i < 2000; ++i) {
    va.push_back(a.victim(m.data(), kWays));
    vb.push_back(b.victim(m.data(), kWays));
    vc.push_back(c.victim(m.data(), kWays));
  }
  CHECK(va == vb);  // same seed, same sequence
  CHECK(va != vc);  // another seed, another sequence
  std::set<std::uint32_t> seen;
  std::array<int, kWays> count{};
  for (std::uint32_t v : va) {
    REQUIRE(v < kWays);
    seen.insert(v);
    ++count[v];
  }
  CHECK(seen.size() == kWays);
  // 2000 draws over 16 ways: 125 expected each; a fair generator stays well inside 60..190.
  for (int n : count) {
    CHECK(n > 60);
    CHECK(n < 190);
  }
  // Odd way counts (not a power of two) are in range too.
  RandomPolicy d(7);
  std::set<std::uint32_t> seen3;
  for (int i = 0; i < 300; ++i) {
    const std::uint32_t v = d.victim(m.data(), 3);
    REQUIRE(v < 3);
    seen3.insert(v);
  }
  CHECK(seen3.size() == 3);
}

TEST_CASE("rebase_stamps replaces stamps by per-set ranks and keeps each set's order", "[cache]") {
  // Two sets of 4 ways. Set 0: stamps 100 50 300 200 -> ranks 1 0 3 2.
  // Set 1: stamps 7 9 8 1 -> ranks 1 3 2 0. The clock restarts at `ways` (4), above every rank.
  std::vector<std::uint32_t> meta{100, 50, 300, 200, 7, 9, 8, 1};
  std::uint32_t clock = 0xf0000005u;
  rebase_stamps(meta.data(), 2, 4, clock);
  CHECK(meta == std::vector<std::uint32_t>{1, 0, 3, 2, 1, 3, 2, 0});
  CHECK(clock == 4);

  // Through LruPolicy: near the end of the clock the policy asks for a rebase; the cache then
  // calls rebase_stamps on each set and resets the policy's clock to `ways`. LRU order survives.
  LruPolicy p;
  std::vector<std::uint32_t> m(8, 0);
  p.clock = 0xf0000000u - 2;  // c
  CHECK_FALSE(p.needs_rebase());
  for (std::uint32_t w = 0; w < 4; ++w) p.on_fill(m.data(), w);         // set 0: stamps c..c+3
  for (std::uint32_t w : {3u, 1u, 0u, 2u}) p.on_fill(m.data() + 4, w);  // set 1: c+4 c+5 c+6 c+7 to ways 3 1 0 2
  p.on_hit(m.data(), 0);  // set 0 way 0 -> c+8; set 0 oldest first: ways 1 2 3 0
  REQUIRE(p.needs_rebase());  // clock c+9 > 0xf0000000
  for (std::uint32_t set = 0; set < 2; ++set) {
    std::uint32_t clk = p.clock_value();
    rebase_stamps(m.data() + 4 * set, 1, 4, clk);
  }
  p.reset_clock(4);
  CHECK_FALSE(p.needs_rebase());
  // Set 0 ranks: way1 0, way2 1, way3 2, way0 3. Set 1 (c+6 c+5 c+7 c+4): 2 1 3 0.
  CHECK(m == std::vector<std::uint32_t>{3, 0, 1, 2, 2, 1, 3, 0});
  // Victims after the rebase: set 0 way 1, set 1 way 3; new stamps (4, 5, ...) are the newest.
  CHECK(p.victim(m.data(), 4) == 1);
  CHECK(p.victim(m.data() + 4, 4) == 3);
  p.on_hit(m.data() + 4, 3);  // stamp 4 > every rank
  CHECK(p.victim(m.data() + 4, 4) == 1);
  // FIFO shares the mechanism: stamps 0xf0000010 0xf0000001 0xf0000003 0xf0000002 -> ranks 3 0 2 1.
  FifoPolicy f;
  std::vector<std::uint32_t> m3{0xf0000010u, 0xf0000001u, 0xf0000003u, 0xf0000002u};
  f.clock = 0xf0000011u;
  REQUIRE(f.needs_rebase());
  std::uint32_t clk = f.clock_value();
  rebase_stamps(m3.data(), 1, 4, clk);
  CHECK(clk == 4);
  f.reset_clock(4);
  CHECK(m3 == std::vector<std::uint32_t>{3, 0, 2, 1});
  CHECK(f.victim(m3.data(), 4) == 1);
  // Policies without a clock never ask.
  CHECK_FALSE(SrripPolicy{}.needs_rebase());
  CHECK_FALSE(RandomPolicy{}.needs_rebase());
}

TEST_CASE("replacement names resolve", "[cache]") {
  ReplacementKind k;
  CHECK(replacement_from_name("lru", k));
  CHECK(k == ReplacementKind::lru);
  CHECK(replacement_from_name("srrip", k));
  CHECK(k == ReplacementKind::srrip);
  CHECK_FALSE(replacement_from_name("plru", k));
  CHECK(replacement_names().size() == 4);
}
