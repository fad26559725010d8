// The L2's memo of rectangle set locations: a filled slot always holds its own rectangle's
// entries, however many rectangles compete for the slots.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "models/cache/rect_memo.hpp"

using namespace tilesim;

namespace {

// What the caller would store for line i of rectangle k: any function of both will do.
std::uint32_t value_for(const RectMemo::Key& k, std::uint32_t i) {
  return static_cast<std::uint32_t>(k.first_line * 31 + k.pitch_lines * 7 + k.per_row * 3 + k.rows + i * 1000003);
}

}  // namespace

TEST_CASE("RectMemo: a rectangle is unfilled once, then found with its own entries", "[cache]") {
  RectMemo memo;
  const RectMemo::Key a{1000, 128, 1, 128}, b{1000, 128, 2, 64}, c{1000, 64, 1, 128}, d{1001, 128, 1, 128};
  for (const auto& k : {a, b, c, d}) {
    bool filled = true;
    std::uint32_t* e = memo.find(k, filled);
    REQUIRE_FALSE(filled);  // same first line or same shape is not the same rectangle
    for (std::uint32_t i = 0; i < RectMemo::kLines; ++i) e[i] = value_for(k, i);
  }
  for (const auto& k : {a, b, c, d}) {
    bool filled = false;
    const std::uint32_t* e = memo.find(k, filled);
    if (!filled) continue;  // evicted by a colliding rectangle: allowed, never wrong
    for (std::uint32_t i = 0; i < RectMemo::kLines; ++i) REQUIRE(e[i] == value_for(k, i));
  }
}

TEST_CASE("RectMemo: under many more rectangles than slots, hits always hold the right entries", "[cache]") {
  RectMemo memo;
  std::mt19937_64 rng(7);
  std::vector<RectMemo::Key> keys;
  for (std::uint32_t i = 0; i < 3 * RectMemo::kSlots; ++i)
    keys.push_back({rng() % 100000, 1 + rng() % 512, 1 + static_cast<std::uint32_t>(rng() % 4),
                    1 + static_cast<std::uint32_t>(rng() % 32)});
  std::uint64_t hits = 0;
  for (int round = 0; round < 4; ++round) {
    for (std::size_t j = 0; j < keys.size(); j += 1 + round) {
      const RectMemo::Key& k = keys[(j * 2654435761u) % keys.size()];
      bool filled = false;
      std::uint32_t* e = memo.find(k, filled);
      const std::uint32_t n = k.per_row * k.rows < RectMemo::kLines ? k.per_row * k.rows : RectMemo::kLines;
      if (filled) {
        ++hits;
        for (std::uint32_t i = 0; i < n; ++i) REQUIRE(e[i] == value_for(k, i));
      } else {
        for (std::uint32_t i = 0; i < n; ++i) e[i] = value_for(k, i);
      }
    }
  }
  CHECK(hits > 0);
}
