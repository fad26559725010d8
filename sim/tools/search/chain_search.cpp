// Order search over a chained pair of GEMMs (chain_search.hpp, docs/orders.md "Chained pair").
#include "sim/tools/search/chain_search.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <ostream>
#include <stdexcept>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "sim/tools/search/branch_and_bound.hpp"
#include "workloads/orders/order.hpp"

namespace tilesim {

namespace {

using search_detail::Child;
using search_detail::Lru;
using search_detail::VectorLru;

// Tile ids: producer (m, n) is m * N + n; consumer (m, j) is M * N + m * N1 + j.
// Panel ids: A_m is m, W0_n is M + n, H_m is M + N + m, W1_j is 2M + N + j.
struct ChainIds {
  std::uint32_t gm, gn, gj;

  explicit ChainIds(const ChainModel& model) : gm(model.grid_m), gn(model.grid_n), gj(model.consumer_n) {}
  std::uint32_t producers() const { return gm * gn; }
  std::uint32_t tiles() const { return gm * gn + gm * gj; }
  std::uint32_t panels() const { return 2 * gm + gn + gj; }
  bool is_consumer(std::uint32_t t) const { return t >= producers(); }
  std::uint32_t id(const ChainTile& c) const {
    return c.stage == ChainStage::producer ? c.m * gn + c.n : producers() + c.m * gj + c.n;
  }
  ChainTile tile(std::uint32_t t) const {
    if (!is_consumer(t)) return {ChainStage::producer, t / gn, t % gn};
    t -= producers();
    return {ChainStage::consumer, t / gj, t % gj};
  }
  /// The two panels tile t reads, in order, and the panel it writes (none for a consumer).
  std::uint32_t first_read(std::uint32_t t) const {
    return is_consumer(t) ? gm + gn + (t - producers()) / gj : t / gn;
  }
  std::uint32_t second_read(std::uint32_t t) const {
    return is_consumer(t) ? 2 * gm + gn + (t - producers()) % gj : gm + t % gn;
  }
  std::uint32_t written(std::uint32_t t) const { return gm + gn + t / gn; }  // producers only
};

std::uint32_t effective_capacity(const ChainModel& model) {
  return std::min(model.capacity, ChainIds(model).panels());
}

void check_model(const ChainModel& model) {
  if (model.grid_m == 0 || model.grid_n == 0 || model.consumer_n == 0)
    throw std::invalid_argument("chain search: empty tile grid");
  if (model.capacity < 2) throw std::invalid_argument("chain search: cache capacity below 2 panels");
}

/// Tile ids of a valid prefix: in range, distinct, no consumer tile before its producer row.
std::vector<std::uint32_t> prefix_ids(const ChainModel& model, const std::vector<ChainTile>& prefix) {
  const ChainIds ids(model);
  std::vector<bool> seen(ids.tiles(), false);
  std::vector<std::uint32_t> row_done(model.grid_m, 0), out;
  for (const ChainTile& c : prefix) {
    const bool producer = c.stage == ChainStage::producer;
    if (c.m >= model.grid_m || c.n >= (producer ? model.grid_n : model.consumer_n))
      throw std::invalid_argument("chain search: tile outside its grid");
    const std::uint32_t t = ids.id(c);
    if (seen[t]) throw std::invalid_argument("chain search: repeated tile");
    if (!producer && row_done[c.m] != model.grid_n)
      throw std::invalid_argument("chain search: consumer tile before its producer row is done");
    seen[t] = true;
    if (producer) ++row_done[c.m];
    out.push_back(t);
  }
  return out;
}

/// Loads of a valid sequence of tile ids (no validation).
std::uint64_t id_loads(const ChainModel& model, const std::vector<std::uint32_t>& tiles) {
  const ChainIds ids(model);
  VectorLru cache(effective_capacity(model));
  std::uint64_t loads = 0;
  for (const std::uint32_t t : tiles) {
    loads += cache.access(ids.first_read(t));
    loads += cache.access(ids.second_read(t));
    if (!ids.is_consumer(t)) cache.access(ids.written(t));  // write-allocate: no load
  }
  return loads;
}

/// Runs tile t on an exact-search cache; returns its loads.
std::uint32_t run_tile(const ChainIds& ids, std::uint32_t t, Lru& cache, std::uint32_t cap) {
  std::uint32_t loads = cache.access(static_cast<std::uint8_t>(ids.first_read(t)), cap);
  loads += cache.access(static_cast<std::uint8_t>(ids.second_read(t)), cap);
  if (!ids.is_consumer(t)) cache.access(static_cast<std::uint8_t>(ids.written(t)), cap);
  return loads;
}

/// The chain as a branch-and-bound problem (branch_and_bound.hpp).
class ChainProblem {
 public:
  explicit ChainProblem(const ChainModel& model) : ids_(model), cap_(effective_capacity(model)) {
    full_ = (1u << ids_.tiles()) - 1;  // tiles <= 24
    producer_mask_ = (1u << ids_.producers()) - 1;
    for (std::uint32_t t = 0; t < ids_.tiles(); ++t) {
      const ChainTile c = ids_.tile(t);
      if (c.stage == ChainStage::producer) {
        prod_row_[c.m] |= 1u << t;
        prod_col_[c.n] |= 1u << t;
      } else {
        cons_row_[c.m] |= 1u << t;
        cons_col_[c.n] |= 1u << t;
      }
    }
  }

  std::uint32_t full() const { return full_; }

  /// A lower bound on the loads of every completion: loads of A and W0 panels plus loads of
  /// H and W1 panels, each bounded separately as for one grid (order_search.cpp, bound()):
  /// - A/W0: each A or W0 panel an undone producer tile reads and the cache lacks is loaded;
  ///   and only a load of an A or W0 panel can bring a producer tile's two panels into the
  ///   cache together (an H write or an H/W1 load only evicts), at most C - 1 new pairs each.
  /// - H/W1: each W1 panel an undone consumer tile reads and the cache lacks is loaded, and
  ///   so is H_m when its producer row is complete (no write will bring it back) and some
  ///   consumer tile of row m is undone. A consumer tile becomes runnable with both panels
  ///   cached either now (`ready`), or at a load of H_m or W1_j (at most C - 1 new tiles
  ///   each), or at the write of the last producer tile of its row (at most C - 1, and at
  ///   most the row's consumer tiles, for each row whose producer row is unfinished).
  /// With C <= 3, LRU fixes the cache after each tile, which gives a per-tile count as for
  /// one grid (`ready` = undone runnable tiles whose two read panels are cached now; phi =
  /// 1 if there is one, else 0; every state the search meets is reachable):
  /// - C = 2: after a producer tile (m, n) the cache is [H_m W0_n] (the write evicts A_m),
  ///   after a consumer tile (m, j) [W1_j H_m]. So no A panel is cached when a producer
  ///   tile starts, and its A load evicts the older entry, keeping the newer one, H or W1,
  ///   never a W0: every producer tile loads both its panels. A consumer tile with both
  ///   panels cached would be the tile just run. So a completion loads at least
  ///   2 * producers + consumers (ready is 0 here; subtracting it keeps the bound safe).
  /// - C = 3: a completion loads at least tiles - phi, and tiles + 1 from an empty cache,
  ///   by loads(tile) >= 1 - phi(before) + phi(after) for each tile. After a producer tile
  ///   (m, n) the cache is exactly [H_m W0_n A_m]: nothing is ready then, and a producer
  ///   tile is never ready (the cache holds one A or W0 panel at most besides those of the
  ///   producer tile just run), so producer tiles load >= 1 and leave phi = 0. After a
  ///   consumer tile (m, j) the cache is [W1_j H_m X]; a consumer tile (m, j) run
  ///   * after a producer tile of row m' loads W1_j, and H_m too unless m = m', in which
  ///     case X ends W0: phi(after) = 0;
  ///   * after a consumer tile (m', j') with third panel Y: if m = m', X ends W1_j'; if
  ///     j = j', X ends H_m': the only candidate is (m', j'), done, so phi(after) = 0
  ///     (this covers a free tile, which is one of these two cases). Otherwise W1_j is
  ///     loaded, and H_m too unless Y = H_m; with one load X ends W1_j', candidate (m, j'),
  ///     whose panels H_m = Y and W1_j' were both cached before: phi(after) <= phi(before).
  std::uint32_t bound(std::uint32_t done, const Lru& cache) const {
    const std::uint32_t todo = full_ & ~done;
    if (!todo) return 0;
    const std::uint32_t cached = cache.mask();
    const std::uint32_t per_load = cap_ - 1;
    std::uint32_t need_p = 0, need_c = 0, a_tiles = 0, w0_tiles = 0, h_tiles = 0, w1_tiles = 0, by_writes = 0;
    for (std::uint32_t m = 0; m < ids_.gm; ++m) {
      if (todo & prod_row_[m]) {
        if (cached >> m & 1u) a_tiles |= prod_row_[m];
        else ++need_p;
        by_writes += std::min<std::uint32_t>(per_load, std::popcount(todo & cons_row_[m]));
      } else if (todo & cons_row_[m]) {
        if (cached >> (ids_.gm + ids_.gn + m) & 1u) h_tiles |= cons_row_[m];
        else ++need_c;
      }
    }
    for (std::uint32_t n = 0; n < ids_.gn; ++n) {
      if (!(todo & prod_col_[n])) continue;
      if (cached >> (ids_.gm + n) & 1u) w0_tiles |= prod_col_[n];
      else ++need_p;
    }
    for (std::uint32_t j = 0; j < ids_.gj; ++j) {
      if (!(todo & cons_col_[j])) continue;
      if (cached >> (2 * ids_.gm + ids_.gn + j) & 1u) w1_tiles |= cons_col_[j];
      else ++need_c;
    }
    const std::uint32_t prod_todo = todo & producer_mask_, cons_todo = todo & ~producer_mask_;
    const auto prod_left = static_cast<std::uint32_t>(std::popcount(prod_todo) - std::popcount(prod_todo & a_tiles & w0_tiles));
    const auto cons_unready = static_cast<std::uint32_t>(std::popcount(cons_todo) - std::popcount(cons_todo & h_tiles & w1_tiles));
    const std::uint32_t cons_left = cons_unready > by_writes ? cons_unready - by_writes : 0;
    const std::uint32_t by_panels = std::max(need_p, (prod_left + per_load - 1) / per_load) +
                                    std::max(need_c, (cons_left + per_load - 1) / per_load);
    if (cap_ > 3) return by_panels;
    const auto prods = static_cast<std::uint32_t>(std::popcount(prod_todo));
    const auto conses = static_cast<std::uint32_t>(std::popcount(cons_todo));
    const std::uint32_t ready = std::min(1u, (prods - prod_left) + (conses - cons_unready));
    const std::uint32_t by_tiles = cap_ == 2 ? 2 * prods + conses - ready
                                   : cache.size == 0 ? prods + conses + 1
                                                     : prods + conses - ready;
    return std::max(by_panels, by_tiles);
  }

  /// The next tiles worth trying: producer tiles, and consumer tiles of finished producer
  /// rows. Symmetry, as for one grid: a row no done tile touches (no producer tile of it has
  /// run, so no consumer tile either; A_m was never read, H_m never written) is like any
  /// other such row once both its producer and consumer rows are relabelled together, so
  /// only the lowest is tried; likewise the lowest W0 column no producer tile has read, and
  /// the lowest W1 column no consumer tile has read.
  std::uint32_t expand(std::uint32_t done, const Lru& cache, Child* out) const {
    std::uint32_t fresh_row = ids_.gm, fresh_w0 = ids_.gn, fresh_w1 = ids_.gj;
    for (std::uint32_t m = 0; m < ids_.gm && fresh_row == ids_.gm; ++m)
      if (!(done & prod_row_[m])) fresh_row = m;
    for (std::uint32_t n = 0; n < ids_.gn && fresh_w0 == ids_.gn; ++n)
      if (!(done & prod_col_[n])) fresh_w0 = n;
    for (std::uint32_t j = 0; j < ids_.gj && fresh_w1 == ids_.gj; ++j)
      if (!(done & cons_col_[j])) fresh_w1 = j;
    std::uint32_t count = 0;
    const auto add = [&](std::uint32_t t) {
      Child& ch = out[count++];
      ch.tile = t;
      ch.cache = cache;
      ch.step = run_tile(ids_, t, ch.cache, cap_);
      ch.h = bound(done | 1u << t, ch.cache);
    };
    for (std::uint32_t m = 0; m < ids_.gm; ++m) {
      const std::uint32_t row_done = done & prod_row_[m];
      if (!row_done && m != fresh_row) continue;
      if (row_done != prod_row_[m]) {
        for (std::uint32_t n = 0; n < ids_.gn; ++n) {
          const std::uint32_t t = m * ids_.gn + n;
          if (done >> t & 1u) continue;
          if (!(done & prod_col_[n]) && n != fresh_w0) continue;
          add(t);
        }
        continue;
      }
      for (std::uint32_t j = 0; j < ids_.gj; ++j) {
        const std::uint32_t t = ids_.producers() + m * ids_.gj + j;
        if (done >> t & 1u) continue;
        if (!(done & cons_col_[j]) && j != fresh_w1) continue;
        add(t);
      }
    }
    return count;
  }

 private:
  ChainIds ids_;
  std::uint32_t cap_, full_ = 0, producer_mask_ = 0;
  std::array<std::uint32_t, 16> prod_row_{}, prod_col_{}, cons_row_{}, cons_col_{};
};

Lru replay(const ChainModel& model, const std::vector<std::uint32_t>& tiles) {
  const ChainIds ids(model);
  Lru cache;
  for (const std::uint32_t t : tiles) run_tile(ids, t, cache, effective_capacity(model));
  return cache;
}

std::vector<ChainTile> grid_sequence(const char* yaml, std::uint32_t gm, std::uint32_t gn, ChainStage stage) {
  const ConfigNode node(load_yaml_text(yaml, "ORDER"), "ORDER", "order");
  std::vector<ChainTile> out;
  for (const TileCoord& t : make_order(node, ".")->sequence(gm, gn))
    if (is_tile(t)) out.push_back({stage, t.m, t.n});
  return out;
}

/// Every valid completion from (done, cache): the fewest loads (tests' brute force).
std::uint64_t enumerate(const ChainIds& ids, std::uint32_t cap, std::uint32_t done, const Lru& cache,
                        const std::vector<std::uint32_t>& row_mask) {
  const std::uint32_t full = (1u << ids.tiles()) - 1;
  if (done == full) return 0;
  std::uint64_t best = ~0ull;
  for (std::uint32_t t = 0; t < ids.tiles(); ++t) {
    if (done >> t & 1u) continue;
    if (ids.is_consumer(t)) {
      const std::uint32_t m = ids.tile(t).m;
      if ((done & row_mask[m]) != row_mask[m]) continue;
    }
    Lru next = cache;
    const std::uint32_t step = run_tile(ids, t, next, cap);
    best = std::min(best, step + enumerate(ids, cap, done | 1u << t, next, row_mask));
  }
  return best;
}

}  // namespace

void check_chain_limits(const ChainModel& model) {
  const ChainIds ids(model);
  if (ids.tiles() > kChainMaxTiles || ids.panels() > kChainMaxPanels)
    throw InputError("--grid/--chain: the chained exact search takes at most " + std::to_string(kChainMaxTiles) +
                     " tiles (M*N + M*N1) and " + std::to_string(kChainMaxPanels) +
                     " panels (2M + N + N1); got " + std::to_string(model.grid_m) + "x" +
                     std::to_string(model.grid_n) + " then " + std::to_string(model.grid_m) + "x" +
                     std::to_string(model.consumer_n) + ": " + std::to_string(ids.tiles()) + " tiles, " +
                     std::to_string(ids.panels()) + " panels");
}

std::uint64_t chain_order_loads(const ChainModel& model, const std::vector<ChainTile>& order) {
  check_model(model);
  const auto tiles = prefix_ids(model, order);
  if (tiles.size() != ChainIds(model).tiles()) throw std::invalid_argument("chain search: missing tiles");
  return id_loads(model, tiles);
}

std::uint64_t chain_compulsory_loads(const ChainModel& model) {
  return model.grid_m + model.grid_n + model.consumer_n;
}

std::vector<ChainBaseline> chain_baselines(const ChainModel& model) {
  check_model(model);
  const std::uint32_t gm = model.grid_m, gn = model.grid_n, gj = model.consumer_n;
  std::vector<ChainBaseline> out;
  for (const auto& [name, yaml] : {std::pair{"stream (row)", "{kind: row}"}, std::pair{"stream (column)", "{kind: column}"},
                                   std::pair{"stream (hilbert)", "{kind: hilbert}"}}) {
    std::vector<ChainTile> order = grid_sequence(yaml, gm, gn, ChainStage::producer);
    const auto consumers = grid_sequence(yaml, gm, gj, ChainStage::consumer);
    order.insert(order.end(), consumers.begin(), consumers.end());
    out.push_back({name, std::move(order)});
  }
  for (const bool serpentine : {false, true}) {
    std::vector<ChainTile> order;
    for (std::uint32_t m = 0; m < gm; ++m) {
      const bool back = serpentine && m % 2 == 1;
      for (std::uint32_t k = 0; k < gn; ++k) order.push_back({ChainStage::producer, m, back ? gn - 1 - k : k});
      for (std::uint32_t k = 0; k < gj; ++k) order.push_back({ChainStage::consumer, m, back ? gj - 1 - k : k});
    }
    out.push_back({serpentine ? "row-sync (serpentine)" : "row-sync (row)", std::move(order)});
  }
  return out;
}

ChainSearchResult exact_chain_search(const ChainModel& model, const std::vector<ChainTile>& upper) {
  check_model(model);
  check_chain_limits(model);
  const auto upper_loads = static_cast<std::uint32_t>(chain_order_loads(model, upper));
  const ChainIds ids(model);
  const ChainProblem problem(model);
  search_detail::BranchAndBound<ChainProblem> search(problem);
  // Budget upper + 1: an order as good as the known one is still found, and proven optimal.
  const std::uint32_t best = search.solve(0, Lru{}, upper_loads + 1);
  ChainSearchResult r;
  r.loads = best;
  for (const std::uint32_t t : search.rebuild(best)) r.order.push_back(ids.tile(t));
  r.examined = search.examined();
  r.memo_states = search.states();
  if (chain_order_loads(model, r.order) != best)
    throw std::logic_error("chain search: rebuilt order's cost differs from the optimum");
  return r;
}

std::uint64_t exact_chain_bound(const ChainModel& model, const std::vector<ChainTile>& prefix) {
  check_model(model);
  check_chain_limits(model);
  const auto tiles = prefix_ids(model, prefix);
  std::uint32_t done = 0;
  for (const std::uint32_t t : tiles) done |= 1u << t;
  return ChainProblem(model).bound(done, replay(model, tiles));
}

std::uint64_t brute_force_chain_min_loads(const ChainModel& model, const std::vector<ChainTile>& prefix) {
  check_model(model);
  const ChainIds ids(model);
  if (ids.tiles() > 10) throw std::invalid_argument("brute force: chain over 10 tiles");
  const auto tiles = prefix_ids(model, prefix);
  std::uint32_t done = 0;
  for (const std::uint32_t t : tiles) done |= 1u << t;
  std::vector<std::uint32_t> row_mask(model.grid_m, 0);
  for (std::uint32_t t = 0; t < ids.producers(); ++t) row_mask[t / model.grid_n] |= 1u << t;
  return enumerate(ids, effective_capacity(model), done, replay(model, tiles), row_mask);
}

void write_chain_order(const std::vector<ChainTile>& order, const ChainModel& model, std::ostream& out) {
  // Every tile once, in its grid: a caller bug otherwise, as the reader would refuse the file. A
  // consumer tile may precede its producer row (dataflow makes its k-steps wait), as the
  // simulator-backed search's `after: half_row` seed does.
  check_model(model);
  const ChainIds ids(model);
  std::vector<bool> seen(ids.tiles(), false);
  for (const ChainTile& c : order) {
    if (c.m >= model.grid_m || c.n >= (c.stage == ChainStage::producer ? model.grid_n : model.consumer_n) || seen[ids.id(c)])
      throw std::invalid_argument("write_chain_order: a tile outside its grid or repeated");
    seen[ids.id(c)] = true;
  }
  if (order.size() != ids.tiles()) throw std::invalid_argument("write_chain_order: missing tiles");
  out << "# tilesim chain order (docs/orders.md, \"Chain order files\"): producer GEMM " << model.grid_m << "x"
      << model.grid_n << " tiles ('p m n'), consumer GEMM " << model.grid_m << "x" << model.consumer_n
      << " tiles ('c m j', after producer row m), one tile per line in dispatch order\n";
  out << "chain " << model.grid_m << " " << model.grid_n << " " << model.consumer_n << "\n";
  for (const ChainTile& c : order) out << (c.stage == ChainStage::producer ? "p " : "c ") << c.m << " " << c.n << "\n";
}

}  // namespace tilesim
