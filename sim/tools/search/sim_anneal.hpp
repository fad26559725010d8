#pragma once
// Simulated annealing over dispatch sequences scored by the simulator (sim_order_search for one
// GEMM's tiles, sim_chain_search for a fused producer/consumer pair). Each candidate costs one
// exact simulation, so the schedule is short and its temperatures are relative to the cost.
#include <cstdint>
#include <functional>
#include <vector>

namespace tilesim {

struct SimAnnealOptions {
  std::uint64_t iterations = 200;  ///< steps, each at most one simulation
  std::uint64_t seed = 1;
};

struct SimAnnealResult {
  std::vector<std::uint32_t> order;  ///< the best sequence seen (the start when nothing beat it)
  double cost = 0;
};

/// Anneals from `start` (whose cost is `start_cost`). A step exchanges two entries, reverses the
/// run between them or moves one entry to the other's place, each chosen uniformly; a step
/// `rel` = (new - current) / current worse is taken with probability exp(-rel / T), T falling
/// geometrically from 2% to 0.05%. With `legal`, a step is redrawn (up to 64 times, then the
/// step is skipped) until `legal` accepts the new sequence; without it, every distinct pair is a
/// step. Deterministic for a seed (std::mt19937_64, reduced by hand). Never costs more than the
/// start.
SimAnnealResult anneal_sequence(const std::vector<std::uint32_t>& start, double start_cost, const SimAnnealOptions& options,
                                const std::function<double(const std::vector<std::uint32_t>&)>& cost,
                                const std::function<bool(const std::vector<std::uint32_t>&)>& legal = {});

}  // namespace tilesim
