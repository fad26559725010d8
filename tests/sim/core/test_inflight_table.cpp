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
    t.raise(key, v, -1);  // nothing is in the past yet: every entry stays
    ref[key] = std::max(ref.count(key) ? ref[key] : v, v);
  }
  for (const auto& [k, v] : ref) REQUIRE(t.find(k, -1) == v);
  CHECK(t.find(999999, -1) == -1);
  t.clear();
  CHECK(t.find(ref.begin()->first, -1) == -1);
}

TEST_CASE("inflight table drops entries in the past when it would grow, and stays small", "[sim]") {
  // Keys raised at an advancing present, each to a time a little ahead of it: only the last few
  // are alive, so the table never grows past its first size, and every live key is found.
  InflightTable t;
  std::map<std::uint64_t, Time> live;
  for (Time now = 0; now < 100000; ++now) {
    t.raise(static_cast<std::uint64_t>(now) + 1, now + 10, now);
    live[static_cast<std::uint64_t>(now) + 1] = now + 10;
  }
  const Time now = 99999;
  for (const auto& [k, v] : live)
    if (v > now) REQUIRE(t.find(k, -1) == v);  // alive: kept
  // The dead ones answer either their old time (not yet pruned) or nothing: both at or before now.
  for (const auto& [k, v] : live)
    if (v <= now) REQUIRE(t.find(k, -1) <= now);
  CHECK(t.capacity() == 1024);
}

TEST_CASE("inflight table: set replaces a key's time and count, add_count counts, growth keeps both", "[sim]") {
  InflightTable t;
  CHECK(t.count(5) == 0);
  CHECK(t.add_count(5) == 0);  // no entry: nothing to count
  CHECK(t.count(5) == 0);
  t.set(5, 100, 1, 0);
  CHECK(t.add_count(5) == 2);
  CHECK(t.add_count(5) == 3);
  CHECK(t.count(5) == 3);
  t.set(5, 50, 1, 0);  // a new entry for the key: an earlier time is taken, not maxed
  CHECK(t.find(5, -1) == 50);
  CHECK(t.count(5) == 1);
  t.raise(5, 80, 0);  // raise keeps the count
  CHECK(t.count(5) == 1);
  for (std::uint64_t k = 10; k < 3000; ++k) t.set(k, 1000, static_cast<std::uint32_t>(k % 7), 0);  // grows
  CHECK(t.capacity() > 1024);
  for (std::uint64_t k = 10; k < 3000; ++k) REQUIRE(t.count(k) == k % 7);
  CHECK(t.count(5) == 1);
}
