// The simulator-backed chain order search (sim_chain_search.hpp).
#include "sim/tools/search/sim_chain_search.hpp"

#include <algorithm>
#include <limits>

#include "common/error.hpp"
#include "sim/tools/search/sim_anneal.hpp"

namespace tilesim {

namespace {

// The experiment's workload with its fused dataflow kernel's tickets set from chain orders.
// Tile ids: producer (m, n) is m * N + n, consumer (m, j) is M * N + m * N1 + j.
class ChainCandidate {
 public:
  ChainCandidate(const ExperimentPlan& plan, SimSearchObjective objective)
      : scorer_(plan, objective, "order-search --chain --cost sim") {
    const Workload& work = scorer_.workload();
    kernel_ = work.kernels.size();
    for (std::size_t k = 0; k < work.kernels.size(); ++k)
      if (work.kernels[k].name == "dataflow") kernel_ = k;
    if (kernel_ == work.kernels.size())
      throw InputError(plan.file + ": order-search --chain --cost sim searches the fused kernel of an ffn under "
                       "`sync: {kind: dataflow}`; this workload has none");
    map_tiles(plan.file);
  }
  const ChainModel& model() const { return model_; }
  ChainTile tile(std::uint32_t id) const {
    const std::uint32_t np = model_.grid_m * model_.grid_n;
    if (id < np) return {ChainStage::producer, id / model_.grid_n, id % model_.grid_n};
    return {ChainStage::consumer, (id - np) / model_.consumer_n, (id - np) % model_.consumer_n};
  }
  std::uint32_t id(const ChainTile& t) const {
    return t.stage == ChainStage::producer ? t.m * model_.grid_n + t.n
                                           : model_.grid_m * model_.grid_n + t.m * model_.consumer_n + t.n;
  }
  /// The experiment's own interleaving: each tile where its first block is dispatched.
  const std::vector<std::uint32_t>& own_order() const { return own_; }

  /// The objective of handing out the fused kernel's tickets tile by tile in `order`; +inf when
  /// the order deadlocks (consumers waiting in every slot for producers not yet dispatched).
  double cost(const std::vector<std::uint32_t>& order) {
    dispatch_.clear();
    for (std::uint32_t t : order) dispatch_.insert(dispatch_.end(), blocks_of_[t].begin(), blocks_of_[t].end());
    return scorer_.score(kernel_, dispatch_);
  }
  std::uint64_t simulated() const { return scorer_.simulated(); }

 private:
  // Consumer blocks are those whose k-steps wait on a producer tile's semaphore (dataflow's
  // tile_waits), split-K slices of one tile kept together; producer blocks wait on nothing.
  void map_tiles(const std::string& file) {
    const Kernel& k = scorer_.workload().kernels[kernel_];
    const auto producer = [&](const Block& b) { return k.steps[b.first_step].wait_sem == kNoSem; };
    std::uint32_t gm = 0, gn = 0, gj = 0;
    for (const Block& b : k.blocks) {
      gm = std::max(gm, b.tile_m + 1);
      std::uint32_t& cols = producer(b) ? gn : gj;
      cols = std::max(cols, b.tile_n + 1);
    }
    const std::string not_a_chain = file + ": order-search --chain --cost sim: the fused kernel is not an M x N producer "
                                           "grid and an M x N1 consumer grid, one block per producer tile";
    if (gn == 0 || gj == 0) throw InputError(not_a_chain);
    model_ = ChainModel{gm, gn, gj, 2};
    blocks_of_.assign(std::size_t{gm} * gn + std::size_t{gm} * gj, {});
    for (std::uint32_t i = 0; i < k.blocks.size(); ++i)
      blocks_of_[id({producer(k.blocks[i]) ? ChainStage::producer : ChainStage::consumer, k.blocks[i].tile_m,
                     k.blocks[i].tile_n})]
          .push_back(i);
    for (std::uint32_t t = 0; t < blocks_of_.size(); ++t)
      if (blocks_of_[t].empty() || (t < gm * gn && blocks_of_[t].size() != 1)) throw InputError(not_a_chain);
    std::vector<bool> seen(blocks_of_.size(), false);
    std::vector<std::uint32_t> tile_of(k.blocks.size());
    for (std::uint32_t t = 0; t < blocks_of_.size(); ++t)
      for (std::uint32_t b : blocks_of_[t]) tile_of[b] = t;
    for (std::uint32_t b : k.dispatch)
      if (b != kNoBlock && !seen[tile_of[b]]) {
        seen[tile_of[b]] = true;
        own_.push_back(tile_of[b]);
      }
    model_.capacity = panel_capacity(k);
  }
  // The panel model's cache size for this chain: the L2 over the mean bytes of a panel (the
  // fused kernel's operand tensors spread over its 2M + N + N1 panels). A seed, not a model.
  std::uint32_t panel_capacity(const Kernel& k) const {
    const Workload& work = scorer_.workload();
    std::vector<bool> loaded(work.tensors.size(), false);
    for_each_access(k, [&](const TileAccess& a) {
      if (a.kind == AccessKind::load && a.tensor < loaded.size()) loaded[a.tensor] = true;
    });
    long double bytes = 0;
    for (std::size_t t = 0; t < loaded.size(); ++t)
      if (loaded[t]) bytes += static_cast<long double>(work.tensors[t].rows) * work.tensors[t].cols * work.tensors[t].elem_bits / 8;
    const std::uint32_t panels = 2 * model_.grid_m + model_.grid_n + model_.consumer_n;
    const long double mean = bytes / panels;
    const long double fit = mean > 0 ? static_cast<long double>(scorer_.arch().l2.bytes) / mean : panels;
    return static_cast<std::uint32_t>(std::clamp<long double>(fit, 2, panels));
  }

  DispatchScorer scorer_;
  std::size_t kernel_ = 0;  ///< the fused kernel's index
  ChainModel model_;
  std::vector<std::vector<std::uint32_t>> blocks_of_;
  std::vector<std::uint32_t> own_, dispatch_;
};

// Dataflow's interleavings (workloads/sync/dataflow.cpp) over a producer grid in row order, or
// with `grouped` in grouped(group_m = rows) order (the experiment's `order:` there): a row's
// consumer tiles after its last producer tile, after its ceil(N/2)-th (`half`), or a group of
// `rows` rows' consumer tiles, row by row, after the group's last producer tile.
std::vector<ChainTile> dataflow_interleaving(const ChainModel& c, std::uint32_t rows, bool half, bool grouped = false) {
  std::vector<ChainTile> out;
  std::vector<std::uint32_t> done(c.grid_m, 0);
  const auto place = [&](std::uint32_t m, std::uint32_t n) {
    out.push_back({ChainStage::producer, m, n});
    ++done[m];
    const std::uint32_t g0 = m / rows * rows, g1 = std::min(c.grid_m, g0 + rows);
    bool group_done = true;
    for (std::uint32_t r = g0; r < g1; ++r) group_done = group_done && done[r] == c.grid_n;
    const bool emit = half ? done[m] == (c.grid_n + 1) / 2 : group_done;
    for (std::uint32_t r = half ? m : g0; emit && r < (half ? m + 1 : g1); ++r)
      for (std::uint32_t j = 0; j < c.consumer_n; ++j) out.push_back({ChainStage::consumer, r, j});
  };
  for (std::uint32_t g0 = 0; g0 < c.grid_m; g0 += grouped ? rows : 1) {
    const std::uint32_t g1 = grouped ? std::min(c.grid_m, g0 + rows) : g0 + 1;
    for (std::uint32_t n = 0; n < c.grid_n; ++n)
      for (std::uint32_t m = g0; m < g1; ++m) place(m, n);
  }
  return out;
}

// Every interleaving the search starts from, named; the panel model's optimum where its exact
// search takes the chain.
std::vector<ChainBaseline> chain_seeds(const ChainModel& c, bool& panel_seed) {
  std::vector<ChainBaseline> seeds{{"dataflow (after: row)", dataflow_interleaving(c, 1, false)},
                                   {"dataflow (after: half_row)", dataflow_interleaving(c, 1, true)}};
  for (std::uint32_t r = 2; r < c.grid_m && r <= 8; r *= 2) {
    seeds.push_back({"dataflow (rows: " + std::to_string(r) + ")", dataflow_interleaving(c, r, false)});
    seeds.push_back({"dataflow (rows: " + std::to_string(r) + ", grouped)", dataflow_interleaving(c, r, false, true)});
  }
  const std::vector<ChainBaseline> panel = chain_baselines(c);
  seeds.insert(seeds.end(), panel.begin(), panel.end());
  const std::uint32_t tiles = c.grid_m * (c.grid_n + c.consumer_n), panels = 2 * c.grid_m + c.grid_n + c.consumer_n;
  panel_seed = tiles <= kChainMaxTiles && panels <= kChainMaxPanels;
  if (panel_seed) {
    const auto fewest = std::min_element(panel.begin(), panel.end(), [&](const ChainBaseline& a, const ChainBaseline& b) {
      return chain_order_loads(c, a.order) < chain_order_loads(c, b.order);
    });
    seeds.push_back({"panel model's optimum (C=" + std::to_string(c.capacity) + ")", exact_chain_search(c, fewest->order).order});
  }
  return seeds;
}

// For each row, the fewest of its producer tiles that precede one of its consumer tiles in
// `order`: the annealing keeps every consumer tile behind at least that many.
std::vector<std::uint32_t> producers_needed(const ChainCandidate& cand, const std::vector<std::uint32_t>& order) {
  const ChainModel& c = cand.model();
  std::vector<std::uint32_t> need(c.grid_m, c.grid_n), seen(c.grid_m, 0);
  for (std::uint32_t id : order) {
    const ChainTile t = cand.tile(id);
    if (t.stage == ChainStage::producer) ++seen[t.m];
    else need[t.m] = std::min(need[t.m], seen[t.m]);
  }
  return need;
}

bool keeps_needed(const ChainCandidate& cand, const std::vector<std::uint32_t>& need, const std::vector<std::uint32_t>& order) {
  std::vector<std::uint32_t> seen(need.size(), 0);
  for (std::uint32_t id : order) {
    const ChainTile t = cand.tile(id);
    if (t.stage == ChainStage::producer) ++seen[t.m];
    else if (seen[t.m] < need[t.m]) return false;
  }
  return true;
}

}  // namespace

SimChainSearchResult sim_chain_search(const ExperimentPlan& plan, const SimSearchOptions& options) {
  ChainCandidate cand(plan, options.objective);
  SimChainSearchResult r;
  r.model = cand.model();
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> seeds{{"the experiment's order", cand.own_order()}};
  for (const ChainBaseline& b : chain_seeds(r.model, r.panel_seed)) {
    std::vector<std::uint32_t> ids;
    for (const ChainTile& t : b.order) ids.push_back(cand.id(t));
    seeds.emplace_back(b.name, std::move(ids));
  }
  std::vector<std::uint32_t> best;
  r.cost = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    // A seed equal to an earlier one (after: row is row-sync (row)) costs what that one did.
    const auto same = std::find_if(seeds.begin(), seeds.begin() + i, [&](const auto& s) { return s.second == seeds[i].second; });
    const double c = same != seeds.begin() + i ? r.seeds[same - seeds.begin()].cost : cand.cost(seeds[i].second);
    r.seeds.push_back({seeds[i].first, c});
    if (c < r.cost) {
      r.cost = c;
      best = seeds[i].second;
      r.best_seed = r.seeds.size() - 1;
    }
  }
  if (best.empty()) throw InputError(plan.file + ": order-search --chain --cost sim: every seed order deadlocks");
  const std::vector<std::uint32_t> need = producers_needed(cand, best);
  const SimAnnealResult annealed = anneal_sequence(
      best, r.cost, {options.iterations, options.seed}, [&](const std::vector<std::uint32_t>& s) { return cand.cost(s); },
      [&](const std::vector<std::uint32_t>& s) { return keeps_needed(cand, need, s); });
  r.cost = annealed.cost;
  for (std::uint32_t id : annealed.order) r.order.push_back(cand.tile(id));
  r.simulated = cand.simulated();
  return r;
}

}  // namespace tilesim
