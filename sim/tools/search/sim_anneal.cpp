// The simulator-backed searches' annealer (sim_anneal.hpp).
#include "sim/tools/search/sim_anneal.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/hash.hpp"

namespace tilesim {

SimAnnealResult anneal_sequence(const std::vector<std::uint32_t>& start, double start_cost, const SimAnnealOptions& options,
                                const std::function<double(const std::vector<std::uint32_t>&)>& cost,
                                const std::function<bool(const std::vector<std::uint32_t>&)>& legal) {
  SimAnnealResult r{start, start_cost};
  const std::size_t n = start.size();
  std::vector<std::uint32_t> current = start, next;
  double current_cost = start_cost;
  std::mt19937_64 rng(options.seed);
  const auto below = [&](std::size_t k) { return static_cast<std::size_t>(rng() % k); };
  const auto unit = [&] { return unit_interval(rng()); };
  // Annealing on relative cost: a step a few percent worse is taken early on, none at the end.
  const double t_start = 0.02, t_end = 0.0005;
  // Without a legality test one draw per step, as the single-GEMM search always did (its
  // results stay as documented); with one, illegal proposals are redrawn rather than wasting
  // the step, up to a limit so that a sequence with no legal neighbour cannot hang.
  const int draws = legal ? 64 : 1;
  for (std::uint64_t it = 0; it < options.iterations && n >= 2; ++it) {
    const double temp = t_start * std::pow(t_end / t_start, static_cast<double>(it) / static_cast<double>(options.iterations));
    bool proposed = false;
    for (int d = 0; d < draws && !proposed; ++d) {
      std::size_t a = below(n), b = below(n);
      if (a == b) continue;
      if (a > b) std::swap(a, b);
      next = current;
      switch (below(3)) {
        case 0: std::swap(next[a], next[b]); break;
        case 1: std::reverse(next.begin() + a, next.begin() + b + 1); break;
        default: std::rotate(next.begin() + a, next.begin() + a + 1, next.begin() + b + 1);
      }
      proposed = !legal || legal(next);
    }
    if (!proposed) continue;
    const double c = cost(next);
    const double rel = current_cost > 0 ? (c - current_cost) / current_cost : 0;
    if (rel <= 0 || unit() < std::exp(-rel / temp)) {
      current.swap(next);
      current_cost = c;
      if (current_cost < r.cost) {
        r.cost = current_cost;
        r.order = current;
      }
    }
  }
  return r;
}

}  // namespace tilesim
