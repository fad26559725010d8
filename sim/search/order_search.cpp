// Order search under the panel LRU model (order_search.hpp, docs/orders.md "Order search").
#include "sim/search/order_search.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "common/error.hpp"

namespace tilesim {

namespace {

// Panel ids: A row panel m is m, B column panel n is grid_m + n.

/// An LRU cache of panel ids, most recently used first. Capacity is at most the number of
/// panels: a larger cache behaves the same (it never evicts).
struct Lru {
  std::array<std::uint8_t, 16> slot{};
  std::uint32_t size = 0;

  /// Reads `panel`: true on a miss (a DRAM load). Moves it to the front, evicting the last
  /// entry when a miss finds the cache full.
  bool access(std::uint8_t panel, std::uint32_t capacity) {
    std::uint32_t at = 0;
    while (at < size && slot[at] != panel) ++at;
    const bool miss = at == size;
    if (miss) {
      if (size < capacity) ++size;
      at = size - 1;  // overwritten: the evicted entry when full, a fresh slot otherwise
    }
    for (std::uint32_t k = at; k > 0; --k) slot[k] = slot[k - 1];
    slot[0] = panel;
    return miss;
  }
  bool holds(std::uint8_t panel) const {
    for (std::uint32_t k = 0; k < size; ++k)
      if (slot[k] == panel) return true;
    return false;
  }
};

/// A general LRU for any number of panels (the annealer's grids exceed 16 panels).
class VectorLru {
 public:
  explicit VectorLru(std::uint32_t capacity) : capacity_(capacity) { slot_.reserve(capacity); }
  bool access(std::uint32_t panel) {
    auto it = std::find(slot_.begin(), slot_.end(), panel);
    const bool miss = it == slot_.end();
    if (miss) {
      if (slot_.size() < capacity_) slot_.push_back(panel);
      it = slot_.end() - 1;
    }
    std::move_backward(slot_.begin(), it, it + 1);
    slot_.front() = panel;
    return miss;
  }

 private:
  std::uint32_t capacity_;
  std::vector<std::uint32_t> slot_;
};

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

std::vector<std::uint32_t> to_indices(const PanelModel& model, const std::vector<TileCoord>& order) {
  std::vector<std::uint32_t> tiles;
  std::vector<bool> seen(static_cast<std::size_t>(model.grid_m) * model.grid_n, false);
  for (const TileCoord& t : order) {
    if (t == kEarlyExit) continue;
    if (t.m >= model.grid_m || t.n >= model.grid_n)
      throw std::invalid_argument("order search: tile outside the grid");
    const std::uint32_t i = t.m * model.grid_n + t.n;
    if (seen[i]) throw std::invalid_argument("order search: repeated tile");
    seen[i] = true;
    tiles.push_back(i);
  }
  if (tiles.size() != seen.size()) throw std::invalid_argument("order search: missing tiles");
  return tiles;
}

std::vector<TileCoord> to_coords(const PanelModel& model, const std::vector<std::uint32_t>& tiles) {
  std::vector<TileCoord> order;
  order.reserve(tiles.size());
  for (const std::uint32_t t : tiles) order.push_back({t / model.grid_n, t % model.grid_n});
  return order;
}

// ---- exact search ---------------------------------------------------------------------

struct StateKey {
  std::uint64_t cache;  // panel id + 1 per 4 bits, most recent first; 0 ends the list
  std::uint32_t done;   // bit m * grid_n + n: tile (m, n) has run
  bool operator==(const StateKey&) const = default;
};

struct StateKeyHash {
  std::size_t operator()(const StateKey& k) const {
    std::uint64_t h = k.cache * 0x9e3779b97f4a7c15ull ^ (k.done + 0x632be59bd9b4e019ull);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return static_cast<std::size_t>(h ^ (h >> 32));
  }
};

/// What is known of a state's cost-to-go: exact, or only a lower bound.
struct Memo {
  std::uint16_t value;
  bool exact;
};

class ExactSearch {
 public:
  explicit ExactSearch(const PanelModel& model)
      : gm_(model.grid_m), gn_(model.grid_n), cap_(effective_capacity(model)), tiles_(gm_ * gn_) {
    full_ = tiles_ == 32 ? 0xffffffffu : (1u << tiles_) - 1;
    for (std::uint32_t m = 0; m < gm_; ++m)
      for (std::uint32_t n = 0; n < gn_; ++n) {
        row_bits_[m] |= 1u << (m * gn_ + n);
        col_bits_[n] |= 1u << (m * gn_ + n);
      }
    memo_.reserve(1u << 20);
  }

  /// The cost-to-go of (done, cache) when it is below `budget`; otherwise a lower bound of
  /// it that is at least `budget` (a "fail": the caller already has something as good).
  std::uint32_t solve(std::uint32_t done, const Lru& cache, std::uint32_t budget) {
    if (done == full_) return 0;
    const std::uint32_t h = bound(done, cache);
    if (h >= budget) return h;
    const StateKey key{pack(cache), done};
    std::uint32_t lower = h;
    if (const auto it = memo_.find(key); it != memo_.end()) {
      if (it->second.exact || it->second.value >= budget) return it->second.value;
      lower = std::max<std::uint32_t>(lower, it->second.value);
    }
    ++examined_;
    Child children[32];
    const std::uint32_t count = expand(done, cache, children);
    std::sort(children, children + count,
              [](const Child& a, const Child& b) { return a.step + a.h < b.step + b.h; });
    // best: the minimum over children of their exact value or a lower bound of it (see the
    // invariants in docs/orders.md); exact whenever it ends below budget.
    std::uint32_t best = 0xffffu;
    for (std::uint32_t c = 0; c < count; ++c) {
      const Child& ch = children[c];
      const std::uint32_t limit = std::min(budget, best);
      if (ch.step + ch.h >= limit) {
        best = std::min(best, ch.step + ch.h);
        continue;
      }
      const std::uint32_t r = solve(done | 1u << ch.tile, ch.cache, limit - ch.step);
      best = std::min(best, ch.step + r);
    }
    best = std::max(best, lower);
    Memo& slot = memo_[key];
    slot = best < budget ? Memo{static_cast<std::uint16_t>(best), true}
                         : Memo{static_cast<std::uint16_t>(best), false};
    return best;
  }

  /// Walks an optimal order of cost `value` from the empty state.
  std::vector<std::uint32_t> rebuild(std::uint32_t value) {
    std::vector<std::uint32_t> order;
    std::uint32_t done = 0;
    Lru cache;
    while (done != full_) {
      Child children[32];
      const std::uint32_t count = expand(done, cache, children);
      bool found = false;
      for (std::uint32_t c = 0; c < count && !found; ++c) {
        const Child& ch = children[c];
        if (ch.step + ch.h > value) continue;
        const std::uint32_t r = solve(done | 1u << ch.tile, ch.cache, value - ch.step + 1);
        if (ch.step + r == value) {
          order.push_back(ch.tile);
          done |= 1u << ch.tile;
          cache = ch.cache;
          value -= ch.step;
          found = true;
        }
      }
      if (!found) throw std::logic_error("order search: optimal order lost while rebuilding");
    }
    return order;
  }

  std::uint64_t examined() const { return examined_; }
  std::uint64_t states() const { return memo_.size(); }

 private:
  struct Child {
    std::uint32_t tile, step, h;
    Lru cache;
  };

  /// Loads still unavoidable: every panel an undone tile reads and the cache lacks is
  /// loaded at least once.
  std::uint32_t bound(std::uint32_t done, const Lru& cache) const {
    std::uint32_t need = 0;
    const std::uint32_t todo = full_ & ~done;
    for (std::uint32_t m = 0; m < gm_; ++m)
      need += (todo & row_bits_[m]) && !cache.holds(static_cast<std::uint8_t>(m));
    for (std::uint32_t n = 0; n < gn_; ++n)
      need += (todo & col_bits_[n]) && !cache.holds(static_cast<std::uint8_t>(gm_ + n));
    return need;
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

  static std::uint64_t pack(const Lru& cache) {
    std::uint64_t p = 0;
    for (std::uint32_t k = 0; k < cache.size; ++k) p |= static_cast<std::uint64_t>(cache.slot[k] + 1) << (4 * k);
    return p;
  }

  std::uint32_t gm_, gn_, cap_, tiles_, full_ = 0;
  std::array<std::uint32_t, 32> row_bits_{}, col_bits_{};
  std::unordered_map<StateKey, Memo, StateKeyHash> memo_;
  std::uint64_t examined_ = 0;
};

}  // namespace

std::uint64_t order_loads(const PanelModel& model, const std::vector<TileCoord>& order) {
  check_model(model);
  return index_loads(model, to_indices(model, order));
}

std::uint64_t compulsory_loads(const PanelModel& model) { return model.grid_m + model.grid_n; }

SearchResult exact_order_search(const PanelModel& model, const std::vector<TileCoord>& upper) {
  check_model(model);
  const std::uint32_t tiles = model.grid_m * model.grid_n;
  if (tiles > kExactMaxTiles || model.grid_m + model.grid_n > kExactMaxPanels)
    throw InputError("--grid: the exact search takes at most " + std::to_string(kExactMaxTiles) + " tiles and " +
                     std::to_string(kExactMaxPanels) + " panels (M + N); got " + std::to_string(model.grid_m) +
                     "x" + std::to_string(model.grid_n) + " (use --method anneal)");
  const auto upper_tiles = to_indices(model, upper);
  const auto upper_loads = static_cast<std::uint32_t>(index_loads(model, upper_tiles));
  ExactSearch search(model);
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
  const auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
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
  r.optimal = best_loads == compulsory_loads(model);
  return r;
}

std::uint64_t brute_force_min_loads(const PanelModel& model) {
  check_model(model);
  if (model.grid_m * model.grid_n > 10) throw std::invalid_argument("brute force: grid over 10 tiles");
  std::vector<std::uint32_t> tiles(model.grid_m * model.grid_n);
  std::iota(tiles.begin(), tiles.end(), 0u);
  std::uint64_t best = ~0ull;
  do best = std::min(best, index_loads(model, tiles));
  while (std::next_permutation(tiles.begin(), tiles.end()));
  return best;
}

}  // namespace tilesim
