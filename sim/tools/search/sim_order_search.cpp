// The simulator-backed order search (sim_order_search.hpp).
#include "sim/tools/search/sim_order_search.hpp"

#include <yaml-cpp/yaml.h>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "sim/tools/search/sim_anneal.hpp"

namespace tilesim {

namespace {

// The experiment's workload with its one kernel's dispatch set from tile orders.
class Candidate {
 public:
  Candidate(const ExperimentPlan& plan, SimSearchObjective objective)
      : scorer_(plan, objective, "order-search --experiment") {
    const Workload& work = scorer_.workload();
    if (work.kernels.size() != 1)
      throw InputError(plan.file + ": order-search --experiment searches one GEMM kernel; the workload has " +
                       std::to_string(work.kernels.size()) + " kernels");
    const Kernel& k = work.kernels[0];
    if (k.grid_z != 1 || k.blocks.size() != std::size_t{k.grid_m} * k.grid_n)
      throw InputError(plan.file + ": order-search --experiment needs one block per tile (not persistent, no split-K "
                       "or batch)");
    block_of_.assign(k.blocks.size(), 0);
    for (std::uint32_t b = 0; b < k.blocks.size(); ++b)
      block_of_[std::size_t{k.blocks[b].tile_m} * k.grid_n + k.blocks[b].tile_n] = b;
    for (std::uint32_t b : k.dispatch)
      if (b != kNoBlock) own_.push_back(k.blocks[b].tile_m * k.grid_n + k.blocks[b].tile_n);
  }
  /// The experiment's own order (tile indices), as built.
  const std::vector<std::uint32_t>& own_order() const { return own_; }
  std::uint32_t grid_m() const { return scorer_.workload().kernels[0].grid_m; }
  std::uint32_t grid_n() const { return scorer_.workload().kernels[0].grid_n; }

  /// The objective of dispatching tiles (as m * grid_n + n indices) in `order`.
  double cost(const std::vector<std::uint32_t>& order) {
    dispatch_.clear();
    for (std::uint32_t t : order) dispatch_.push_back(block_of_[t]);
    return scorer_.score(0, dispatch_);
  }
  std::uint64_t simulated() const { return scorer_.simulated(); }

 private:
  DispatchScorer scorer_;
  std::vector<std::uint32_t> block_of_, own_, dispatch_;
};

std::vector<std::uint32_t> indices(const std::vector<TileCoord>& seq, std::uint32_t grid_n) {
  std::vector<std::uint32_t> out;
  for (const TileCoord& t : seq)
    if (is_tile(t)) out.push_back(t.m * grid_n + t.n);
  return out;
}

}  // namespace

SimSearchResult sim_order_search(const ExperimentPlan& plan, const SimSearchOptions& options) {
  Candidate cand(plan, options.objective);
  SimSearchResult r;
  r.grid_m = cand.grid_m();
  r.grid_n = cand.grid_n();
  const std::size_t tiles = std::size_t{r.grid_m} * r.grid_n;
  // The policies: the experiment's own order, then the known ones that fit the grid.
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> seeds;
  seeds.emplace_back("the experiment's order", cand.own_order());
  for (const char* yaml : {"{kind: row}", "{kind: column}", "{kind: grouped, group_m: 4}", "{kind: grouped, group_m: 8}",
                           "{kind: grouped, group_m: 16}", "{kind: hilbert}"}) {
    const ConfigNode node(YAML::Load(yaml), "<policy>", "order");
    const auto order = make_order(node, ".");
    seeds.emplace_back(order->describe(), indices(order->sequence(r.grid_m, r.grid_n), r.grid_n));
  }
  std::vector<std::uint32_t> best;
  for (const auto& [name, seq] : seeds) {
    if (seq.size() != tiles) continue;  // a policy that pads or skips tiles
    const double c = cand.cost(seq);
    r.policies.push_back({name, c});
    if (best.empty() || c < r.cost) {
      r.cost = c;
      best = seq;
      r.best_policy = r.policies.size() - 1;
    }
  }
  const SimAnnealResult annealed = anneal_sequence(best, r.cost, {options.iterations, options.seed},
                                                   [&](const std::vector<std::uint32_t>& seq) { return cand.cost(seq); });
  best = annealed.order;
  r.cost = annealed.cost;
  for (std::uint32_t t : best) r.order.push_back({t / r.grid_n, t % r.grid_n});
  r.simulated = cand.simulated();
  return r;
}

}  // namespace tilesim
