#pragma once
// Chain order search backed by the simulator (`tilesim order-search --chain --cost sim
// --experiment EXP.yaml`, issue 18): the interleaving of a fused producer -> consumer pair (an
// ffn under `sync: {kind: dataflow}`) that minimises the simulator's own DRAM reads (or its
// duration) for that experiment, rather than loads in the panel model (chain_search.hpp).
// Seeds: the experiment's own interleaving, dataflow's `after: row`, `after: half_row` and
// `rows: r`, the panel model's baselines and, on chains small enough for it, the panel model's
// optimum. Simulated annealing (sim_anneal.hpp) starts from the best seed with moves that keep
// every consumer tile behind as many producer tiles of its row as the start had (all of them,
// unless the start is `after: half_row`). Each candidate is the experiment's workload with the
// fused kernel's tickets replaced, simulated exactly; the result is a chain order file that
// `tilesim run` reproduces.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/experiment.hpp"
#include "sim/tools/search/chain_search.hpp"
#include "sim/tools/search/sim_order_search.hpp"

namespace tilesim {

struct SimChainSearchResult {
  /// The chain's grids (producer M x N, consumer M x N1) and the panel count the panel model's
  /// seed assumed: the L2 over the mean panel's bytes.
  ChainModel model;
  /// The experiment's interleaving first; cost +inf: deadlocked. A seed equal to an earlier
  /// one is listed with its cost, not simulated again.
  std::vector<SimSearchPolicy> seeds;
  std::size_t best_seed = 0;           ///< index into seeds: the annealing's start
  bool panel_seed = false;             ///< whether the panel model's optimum was among the seeds
  std::vector<ChainTile> order;        ///< the best order found (never worse than the best seed)
  double cost = 0;                     ///< DRAM read bytes or duration in ns
  std::uint64_t simulated = 0;         ///< simulations run
};

/// Searches point 0 of `plan`, whose workload must hold one fused dataflow kernel; InputError
/// otherwise, naming what is missing.
SimChainSearchResult sim_chain_search(const ExperimentPlan& plan, const SimSearchOptions& options);

}  // namespace tilesim
