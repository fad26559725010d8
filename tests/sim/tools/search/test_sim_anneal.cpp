// The simulator-backed searches' annealer (sim/tools/search/sim_anneal.hpp), on a cost that
// needs no simulation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "sim/tools/search/sim_anneal.hpp"

using namespace tilesim;

namespace {

// Inversions of a sequence plus one: 1 when sorted.
double inversions(const std::vector<std::uint32_t>& s) {
  double n = 1;
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = i + 1; j < s.size(); ++j) n += s[i] > s[j];
  return n;
}

}  // namespace

TEST_CASE("sim anneal: never worse than the start, deterministic, legal throughout", "[order-search][sim]") {
  std::vector<std::uint32_t> start(24);
  std::iota(start.begin(), start.end(), 0);
  std::reverse(start.begin(), start.end());
  std::uint64_t calls = 0;
  const auto cost = [&](const std::vector<std::uint32_t>& s) {
    ++calls;
    return inversions(s);
  };
  const SimAnnealResult free = anneal_sequence(start, inversions(start), {300, 5}, cost);
  CHECK(free.cost < inversions(start));
  CHECK(free.cost == inversions(free.order));
  CHECK(calls <= 300);
  CHECK(anneal_sequence(start, inversions(start), {300, 5}, cost).order == free.order);
  // A legality test: 23 must stay ahead of 0 and 1 (as a producer row ahead of its consumers).
  const auto legal = [](const std::vector<std::uint32_t>& s) {
    const auto at = [&](std::uint32_t v) { return std::find(s.begin(), s.end(), v) - s.begin(); };
    return at(23) < at(0) && at(23) < at(1);
  };
  calls = 0;
  const SimAnnealResult held = anneal_sequence(start, inversions(start), {300, 5}, cost, legal);
  CHECK(legal(held.order));
  CHECK(held.cost <= inversions(start));
  CHECK(held.cost == inversions(held.order));
  CHECK(calls > 250);  // illegal proposals are redrawn, not lost
  std::vector<std::uint32_t> sorted = held.order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint32_t> all(24);
  std::iota(all.begin(), all.end(), 0);
  CHECK(sorted == all);
  // No steps, or a start that cannot move: the start itself.
  CHECK(anneal_sequence(start, 7.0, {0, 1}, cost).order == start);
  CHECK(anneal_sequence({3}, 1.0, {50, 1}, cost).cost == 1.0);
}
