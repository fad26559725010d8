#pragma once
// The memoised branch and bound, and the LRU caches, shared by the single-grid order search
// (order_search.cpp) and the chained-pair search (chain_search.cpp); internal to sim/tools/search.
// docs/orders.md, "Exact search", states the invariants that make it exact.
//
// A problem is a set of at most 32 tiles run one at a time through a small LRU cache of panel
// ids (at most 15 distinct panels, so a cache packs into 4 bits per entry). The problem class
// supplies the moves; this class supplies the search:
//   std::uint32_t full() const;                                  // bit t: tile t exists
//   std::uint32_t bound(std::uint32_t done, const Lru&) const;   // admissible cost-to-go
//   std::uint32_t expand(std::uint32_t done, const Lru&, Child* out) const;
//       // the tiles worth running next (at most 32), each with its step loads, the cache
//       // after it and bound() of the state it leads to
#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace tilesim::search_detail {

/// An LRU cache of panel ids, most recently used first. Fixed storage: the search copies one
/// per child, so it must not allocate.
struct Lru {
  std::array<std::uint8_t, 16> slot{};
  std::uint32_t size = 0;

  /// Reads (or writes) `panel`: true when it was not cached (for a read, a DRAM load). Moves
  /// it to the front, evicting the last entry when a miss finds the cache full.
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
  /// Bit p set for every cached panel p.
  std::uint32_t mask() const {
    std::uint32_t m = 0;
    for (std::uint32_t k = 0; k < size; ++k) m |= 1u << slot[k];
    return m;
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

struct Child {
  std::uint32_t tile, step, h;
  Lru cache;
};

template <class Problem>
class BranchAndBound {
 public:
  explicit BranchAndBound(const Problem& problem) : problem_(problem), full_(problem.full()) {
    memo_.reserve(1u << 20);
  }

  /// The cost-to-go of (done, cache) when it is below `budget`; otherwise a lower bound of
  /// it that is at least `budget` (a "fail": the caller already has something as good).
  std::uint32_t solve(std::uint32_t done, const Lru& cache, std::uint32_t budget) {
    if (done == full_) return 0;
    const std::uint32_t h = problem_.bound(done, cache);
    if (h >= budget) return h;
    const StateKey key{pack(cache), done};
    std::uint32_t lower = h;
    if (const auto it = memo_.find(key); it != memo_.end()) {
      if (it->second.exact || it->second.value >= budget) return it->second.value;
      lower = std::max<std::uint32_t>(lower, it->second.value);
    }
    ++examined_;
    Child children[32];
    const std::uint32_t count = problem_.expand(done, cache, children);
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
    memo_[key] = Memo{static_cast<std::uint16_t>(best), best < budget};
    return best;
  }

  /// Walks an optimal order of cost `value` from the empty state (tile ids in run order).
  std::vector<std::uint32_t> rebuild(std::uint32_t value) {
    std::vector<std::uint32_t> order;
    std::uint32_t done = 0;
    Lru cache;
    while (done != full_) {
      Child children[32];
      const std::uint32_t count = problem_.expand(done, cache, children);
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
  struct StateKey {
    std::uint64_t cache;  // panel id + 1 per 4 bits, most recent first; 0 ends the list
    std::uint32_t done;   // bit t: tile t has run
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

  static std::uint64_t pack(const Lru& cache) {
    std::uint64_t p = 0;
    for (std::uint32_t k = 0; k < cache.size; ++k) p |= static_cast<std::uint64_t>(cache.slot[k] + 1) << (4 * k);
    return p;
  }

  const Problem& problem_;
  std::uint32_t full_;
  std::unordered_map<StateKey, Memo, StateKeyHash> memo_;
  std::uint64_t examined_ = 0;
};

}  // namespace tilesim::search_detail
