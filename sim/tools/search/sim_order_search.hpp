#pragma once
// Order search backed by the simulator (`tilesim order-search --experiment EXP.yaml`, issue 18):
// the dispatch order of a GEMM's tile grid that minimises the simulator's own DRAM reads (or
// its duration) for that experiment, rather than loads in the panel model (order_search.hpp).
// The known policies are simulated first; simulated annealing then starts from the best of
// them. Each candidate is the experiment's workload with its kernel's dispatch sequence
// replaced, simulated exactly; the result is an order file `tilesim run` reproduces.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/experiment.hpp"
#include "sim/tools/search/sim_scorer.hpp"
#include "workloads/orders/order.hpp"

namespace tilesim {

struct SimSearchOptions {
  SimSearchObjective objective = SimSearchObjective::dram;
  std::uint64_t iterations = 200;  ///< annealing steps, each one simulation
  std::uint64_t seed = 1;
};

struct SimSearchPolicy {
  std::string name;  ///< the order's description ("grouped(group_m=8)")
  double cost = 0;   ///< DRAM read bytes or duration in ns
};

struct SimSearchResult {
  std::uint32_t grid_m = 0, grid_n = 0;
  std::vector<SimSearchPolicy> policies;  ///< the experiment's own order first, then the known ones
  std::size_t best_policy = 0;            ///< index into policies
  std::vector<TileCoord> order;           ///< the best order found (never worse than the best policy)
  double cost = 0;
  std::uint64_t simulated = 0;            ///< simulations run
};

/// Searches point 0 of `plan`, which must be one GEMM kernel with one block per tile (not
/// persistent, no split-K); InputError otherwise, naming what is not supported.
SimSearchResult sim_order_search(const ExperimentPlan& plan, const SimSearchOptions& options);

}  // namespace tilesim
