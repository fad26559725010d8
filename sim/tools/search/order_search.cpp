// Order search under the panel LRU model (order_search.hpp, docs/orders.md "Order search").
#include "sim/tools/search/order_search.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "sim/tools/search/branch_and_bound.hpp"

namespace tilesim {

namespace {

// Panel ids: A row panel m is m, B column panel n is grid_m + n.

using search_detail::VectorLru;

std::uint32_t effective_capacity(const PanelModel& model) {
  return std::min(model.capacity, model.grid_m + model.grid_n);
}

void check_model(const PanelModel& model) {
  if (model.grid_m == 0 || model.grid_n == 0) throw std::invalid_argument("order search: empty tile grid");
  if (model.capacity < 2) throw std::invalid_argument("order search: cache capacity below 2 panels");
}

/// Loads of a permutation given as tile indices m * grid_n + n (no validation).
std::uint64_t index_loads(const PanelModel& model, const std::vector<std::uint32_t>& tiles) {
  VectorLru cache(effective_capacity(model));
  std::uint64_t loads = 0;
  for (const std::uint32_t t : tiles) {
    loads += cache.access(t / model.grid_n);
    loads += cache.access(model.grid_m + t % model.grid_n);
  }
  return loads;
}

/// Tile indices of a prefix: distinct tiles of the grid, kEarlyExit skipped.
std::vector<std::uint32_t> prefix_indices(const PanelModel& model, const std::vector<TileCoord>& prefix) {
  std::vector<std::uint32_t> tiles;
  std::vector<bool> seen(static_cast<std::size_t>(model.grid_m) * model.grid_n, false);
  for (const TileCoord& t : prefix) {
    if (!is_tile(t)) continue;
    if (t.m >= model.grid_m || t.n >= model.grid_n) throw std::invalid_argument("order search: tile outside the grid");
    const std::uint32_t i = t.m * model.grid_n + t.n;
    if (seen[i]) throw std::invalid_argument("order search: repeated tile");
    seen[i] = true;
    tiles.push_back(i);
  }
  return tiles;
}

/// A whole order's tile indices: every tile of the grid exactly once.
std::vector<std::uint32_t> to_indices(const PanelModel& model, const std::vector<TileCoord>& order) {
  std::vector<std::uint32_t> tiles = prefix_indices(model, order);
  if (tiles.size() != static_cast<std::size_t>(model.grid_m) * model.grid_n)
    throw std::invalid_argument("order search: missing tiles");
  return tiles;
}

std::vector<TileCoord> to_coords(const PanelModel& model, const std::vector<std::uint32_t>& tiles) {
  std::vector<TileCoord> order;
  order.reserve(tiles.size());
  for (const std::uint32_t t : tiles) order.push_back({t / model.grid_n, t % model.grid_n});
  return order;
}

// ---- exact search ---------------------------------------------------------------------

using search_detail::Child;
using search_detail::Lru;

/// The single grid as a branch-and-bound problem (branch_and_bound.hpp): tile t = m * grid_n
/// + n reads panel m, then panel grid_m + n.
class GridProblem {
 public:
  explicit GridProblem(const PanelModel& model)
      : gm_(model.grid_m), gn_(model.grid_n), cap_(effective_capacity(model)), tiles_(gm_ * gn_) {
    full_ = tiles_ == 32 ? 0xffffffffu : (1u << tiles_) - 1;
    for (std::uint32_t m = 0; m < gm_; ++m)
      for (std::uint32_t n = 0; n < gn_; ++n) {
        row_bits_[m] |= 1u << (m * gn_ + n);
        col_bits_[n] |= 1u << (m * gn_ + n);
      }
  }

  std::uint32_t full() const { return full_; }

  /// A lower bound on the loads of every completion from (done, cache): the larger of two.
  ///
  /// Panels: every panel an undone tile reads and the cache lacks is loaded at least once.
  ///
  /// Pairs. Call an undone tile ready when both its panels are cached now (`ready` of them),
  /// and a tile free when it runs without a load, i.e. both its panels are cached when it
  /// starts (reading the first cannot evict the second: a hit evicts nothing).
  /// - Any replacement, capacity C >= 2: the cache's contents change only on a load (a hit
  ///   reorders), and a tile runs while its two panels are both cached. Charge each undone
  ///   tile to the first moment its two panels are cached together: now (a ready tile) or a
  ///   load, and then it pairs the loaded panel with one of the at most C - 1 others. So
  ///   tiles <= ready + (C - 1) * loads, loads >= ceil((tiles - ready) / (C - 1)).
  /// - LRU with C <= 3 is much tighter: a completion loads at least tiles - phi panels,
  ///   and tiles + 1 from an empty cache, where phi = 1 if some tile is ready, else 0.
  ///   After a tile (m, n) the cache is [B_n A_m] plus, for C = 3 once full, one older
  ///   panel X; the only tiles it can hold both panels of are (m, n), done, and (m, X) or
  ///   (X, n). Claim: loads(tile) >= 1 - phi(before) + phi(after); summing telescopes.
  ///   C = 2: only (m, n) is ever cached whole, so phi = 0 and every tile loads >= 1.
  ///   C = 3, a tile (m, n) run after (b, a), the cache before being [B_a A_b Y]:
  ///   * no load (free): it was ready, so phi(before) = 1; it is (b, Y) or (Y, a), and
  ///     reading it leaves X = B_a or A_b, whose candidate is (b, a), done: phi(after) = 0.
  ///   * one load: if m = b, B_n's load leaves X = B_a, candidate (b, a); if n = a, A_m's
  ///     load leaves X = A_b, candidate (b, a): phi(after) = 0. Otherwise B_n is loaded
  ///     (it is not B_a, and if it were Y, loading A_m would evict it) so A_m hit: Y = A_m,
  ///     and X ends B_a, candidate (m, a), whose panels A_m = Y and B_a were both cached
  ///     before: phi(after) <= phi(before).
  ///   * two loads: phi(after) <= 1.
  ///   While the cache fills (the second tile of an order) the same cases hold without Y;
  ///   an empty cache's first tile loads two panels and leaves phi = 0.
  /// Both are checked against brute force on every reachable state of small grids
  /// (tests/sim/tools/search/test_order_search.cpp).
  std::uint32_t bound(std::uint32_t done, const Lru& cache) const {
    const std::uint32_t todo = full_ & ~done;
    if (!todo) return 0;
    const std::uint32_t cached = cache.mask();
    std::uint32_t need = 0, cached_row_tiles = 0, cached_col_tiles = 0;
    for (std::uint32_t m = 0; m < gm_; ++m) {
      if (!(todo & row_bits_[m])) continue;
      if (cached >> m & 1u) cached_row_tiles |= row_bits_[m];
      else ++need;
    }
    for (std::uint32_t n = 0; n < gn_; ++n) {
      if (!(todo & col_bits_[n])) continue;
      if (cached >> (gm_ + n) & 1u) cached_col_tiles |= col_bits_[n];
      else ++need;
    }
    const auto tiles = static_cast<std::uint32_t>(std::popcount(todo));
    const auto ready = static_cast<std::uint32_t>(std::popcount(todo & cached_row_tiles & cached_col_tiles));
    std::uint32_t pairs;
    if (cap_ <= 3) pairs = cache.size == 0 ? tiles + 1 : tiles - std::min(ready, 1u);
    else pairs = (tiles - ready + cap_ - 2) / (cap_ - 1);
    return std::max(need, pairs);
  }

  /// The next tiles worth trying. Symmetry: rows no finished tile touched are alike (none
  /// is cached, all their tiles are undone), so relabelling two of them maps every
  /// completion to one of equal cost; only the lowest untouched row is tried, and likewise
  /// for columns.
  std::uint32_t expand(std::uint32_t done, const Lru& cache, Child* out) const {
    std::uint32_t fresh_row = gm_, fresh_col = gn_;
    for (std::uint32_t m = 0; m < gm_ && fresh_row == gm_; ++m)
      if (!(done & row_bits_[m])) fresh_row = m;
    for (std::uint32_t n = 0; n < gn_ && fresh_col == gn_; ++n)
      if (!(done & col_bits_[n])) fresh_col = n;
    std::uint32_t count = 0;
    for (std::uint32_t m = 0; m < gm_; ++m) {
      const bool row_fresh = !(done & row_bits_[m]);
      if (row_fresh && m != fresh_row) continue;
      for (std::uint32_t n = 0; n < gn_; ++n) {
        const std::uint32_t t = m * gn_ + n;
        if (done & 1u << t) continue;
        if (!(done & col_bits_[n]) && n != fresh_col) continue;
        Child& ch = out[count++];
        ch.tile = t;
        ch.cache = cache;
        ch.step = ch.cache.access(static_cast<std::uint8_t>(m), cap_);
        ch.step += ch.cache.access(static_cast<std::uint8_t>(gm_ + n), cap_);
        ch.h = bound(done | 1u << t, ch.cache);
      }
    }
    return count;
  }

 private:
  std::uint32_t gm_, gn_, cap_, tiles_, full_ = 0;
  std::array<std::uint32_t, 32> row_bits_{}, col_bits_{};
};

/// The exact search's cache after `tiles` (indices), for the bound test hook.
Lru replay(const PanelModel& model, const std::vector<std::uint32_t>& tiles) {
  Lru cache;
  const std::uint32_t cap = effective_capacity(model);
  for (const std::uint32_t t : tiles) {
    cache.access(static_cast<std::uint8_t>(t / model.grid_n), cap);
    cache.access(static_cast<std::uint8_t>(model.grid_m + t % model.grid_n), cap);
  }
  return cache;
}

void check_exact_limits(const PanelModel& model) {
  if (model.grid_m * model.grid_n > kExactMaxTiles || model.grid_m + model.grid_n > kExactMaxPanels)
    throw InputError("--grid: the exact search takes at most " + std::to_string(kExactMaxTiles) + " tiles and " +
                     std::to_string(kExactMaxPanels) + " panels (M + N); got " + std::to_string(model.grid_m) +
                     "x" + std::to_string(model.grid_n) + " (use --method anneal)");
}

}  // namespace

std::uint64_t order_loads(const PanelModel& model, const std::vector<TileCoord>& order) {
  check_model(model);
  return index_loads(model, to_indices(model, order));
}

std::uint64_t compulsory_loads(const PanelModel& model) { return model.grid_m + model.grid_n; }

std::uint64_t tile_lower_bound(const PanelModel& model) {
  check_model(model);
  const std::uint64_t tiles = static_cast<std::uint64_t>(model.grid_m) * model.grid_n;
  const std::uint64_t cap = effective_capacity(model);
  return std::max(compulsory_loads(model), cap <= 3 ? tiles + 1 : (tiles + cap - 2) / (cap - 1));
}

SearchResult exact_order_search(const PanelModel& model, const std::vector<TileCoord>& upper) {
  check_model(model);
  check_exact_limits(model);
  const auto upper_loads = static_cast<std::uint32_t>(index_loads(model, to_indices(model, upper)));
  const GridProblem problem(model);
  search_detail::BranchAndBound<GridProblem> search(problem);
  // Budget upper + 1: an order as good as the known one is still found, and proven optimal.
  const std::uint32_t best = search.solve(0, Lru{}, upper_loads + 1);
  SearchResult r;
  r.optimal = true;
  r.loads = best;
  r.order = to_coords(model, search.rebuild(best));
  r.examined = search.examined();
  r.memo_states = search.states();
  if (index_loads(model, to_indices(model, r.order)) != best)
    throw std::logic_error("order search: rebuilt order's cost differs from the optimum");
  return r;
}

std::uint64_t exact_search_bound(const PanelModel& model, const std::vector<TileCoord>& prefix) {
  check_model(model);
  check_exact_limits(model);
  const auto tiles = prefix_indices(model, prefix);
  std::uint32_t done = 0;
  for (const std::uint32_t t : tiles) done |= 1u << t;
  return GridProblem(model).bound(done, replay(model, tiles));
}

SearchResult anneal_order_search(const PanelModel& model, const std::vector<TileCoord>& seed_order,
                                 const AnnealOptions& options) {
  check_model(model);
  std::vector<std::uint32_t> current = to_indices(model, seed_order);
  std::vector<std::uint32_t> best = current;
  std::uint64_t current_loads = index_loads(model, current);
  std::uint64_t best_loads = current_loads;
  const std::size_t size = current.size();
  SearchResult r;
  // std::mt19937_64's sequence is fixed by the standard; the distributions are not, so
  // draws are reduced by hand to keep results identical across standard libraries.
  std::mt19937_64 rng(options.seed);
  const auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const auto unit = [&] { return unit_interval(rng()); };
  // Temperatures in loads: early on a few extra loads are accepted, at the end none.
  const double t_start = 2.0, t_end = 0.02;
  std::vector<std::uint32_t> next;
  for (std::uint64_t it = 0; it < options.iterations && size >= 2; ++it) {
    const double frac = static_cast<double>(it) / static_cast<double>(options.iterations);
    const double temp = t_start * std::pow(t_end / t_start, frac);
    next = current;
    std::size_t a = below(size), b = below(size);
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    switch (below(3)) {
      case 0: std::swap(next[a], next[b]); break;                                   // exchange two tiles
      case 1: std::reverse(next.begin() + a, next.begin() + b + 1); break;          // reverse a run
      default: std::rotate(next.begin() + a, next.begin() + a + 1, next.begin() + b + 1);  // move one tile
    }
    const std::uint64_t loads = index_loads(model, next);
    ++r.examined;
    const double delta = static_cast<double>(loads) - static_cast<double>(current_loads);
    if (delta <= 0 || unit() < std::exp(-delta / temp)) {
      current.swap(next);
      current_loads = loads;
      if (current_loads < best_loads) {
        best_loads = current_loads;
        best = current;
      }
    }
  }
  r.order = to_coords(model, best);
  r.loads = best_loads;
  r.optimal = best_loads == tile_lower_bound(model);
  return r;
}

std::uint64_t brute_force_min_loads(const PanelModel& model) { return brute_force_min_loads(model, {}); }

std::uint64_t brute_force_min_loads(const PanelModel& model, const std::vector<TileCoord>& prefix) {
  check_model(model);
  if (model.grid_m * model.grid_n > 10) throw std::invalid_argument("brute force: grid over 10 tiles");
  const auto head = prefix_indices(model, prefix);
  std::vector<bool> in_head(static_cast<std::size_t>(model.grid_m) * model.grid_n, false);
  for (const std::uint32_t t : head) in_head[t] = true;
  std::vector<std::uint32_t> tail;
  for (std::uint32_t t = 0; t < in_head.size(); ++t)
    if (!in_head[t]) tail.push_back(t);
  const std::uint64_t head_loads = index_loads(model, head);
  std::vector<std::uint32_t> whole = head;
  whole.resize(in_head.size());
  std::uint64_t best = ~0ull;
  do {
    std::copy(tail.begin(), tail.end(), whole.begin() + static_cast<std::ptrdiff_t>(head.size()));
    best = std::min(best, index_loads(model, whole) - head_loads);
  } while (std::next_permutation(tail.begin(), tail.end()));
  return best;
}

}  // namespace tilesim
