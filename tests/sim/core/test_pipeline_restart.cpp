// A step with nothing to do marks a new software pipeline (a second loop after the first has
// drained, as Triton's causal attention runs its masked tiles): the loads after it wait.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/core/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

Time makespan(const SimResult& r) {
  Time end = 0;
  for (const BlockRecord& b : r.blocks) end = std::max(end, b.end);
  return end;
}

}  // namespace

TEST_CASE("a pipeline restart marker: the next step's loads wait until every earlier step has computed", "[sim]") {
  const ArchSpec arch = toy_arch();
  // Four steps of 1 us MMA each reading its own line; stages 4 issues all loads at once.
  const auto run = [&](bool marker) {
    Kernel k = toy_kernel(4);
    add_block(k, {0, 64, 128, 192}, 1000000);
    if (marker) {  // an empty step before the third: the last two loads wait for the first two MMAs
      Step empty;
      empty.first_access = k.steps[2].first_access;
      k.steps.insert(k.steps.begin() + 2, empty);
      k.blocks[0].num_steps = 5;
    }
    return makespan(simulate(one_kernel(std::move(k)), arch, SimOptions{}));
  };
  const Time pipelined = run(false), restarted = run(true);
  // The restart exposes one more load (DRAM: 300 ns plus the line) before the third step.
  CHECK(restarted > pipelined + 250000);
  CHECK(restarted < pipelined + 1000000);
}
