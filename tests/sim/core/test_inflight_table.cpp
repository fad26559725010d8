#include <catch2/catch.hpp>

#include <map>

#include "sim/core/inflight_table.hpp"

using namespace tilesim;

TEST_CASE("inflight table keeps the latest time per key, like a map", "[sim]") {
  InflightTable t;
  std::map<std::uint64_t, Time> ref;
  CHECK(t.find(42, -1) == -1);
  std::uint64_t x = 7;
  for (int i = 0; i < 20000; ++i) {  // enough inserts to grow several times
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const std::uint64_t key = (x >> 33) % 5000 + 1;
    const Time v = static_cast<Time>((x >> 7) % 100000);
    t.raise(key, v);
    ref[key] = std::max(ref.count(key) ? ref[key] : v, v);
  }
  for (const auto& [k, v] : ref) REQUIRE(t.find(k, -1) == v);
  CHECK(t.find(999999, -1) == -1);
  t.clear();
  CHECK(t.find(ref.begin()->first, -1) == -1);
}
