#pragma once
// Order search (issue 6): the dispatch order of a GEMM tile grid that minimises DRAM traffic
// under a sequential, panel-granular LRU cache model (docs/orders.md, "Order search").
//
// Model: output tile (m, n) reads A row panel m, then B column panel n. Tiles run one at a
// time in dispatch order. The cache holds `capacity` panels with LRU replacement; reading a
// panel that is not cached is one DRAM load. The cost of an order is its number of loads.
#include <cstdint>
#include <vector>

#include "workloads/orders/order.hpp"

namespace tilesim {

struct PanelModel {
  std::uint32_t grid_m = 0, grid_n = 0;
  std::uint32_t capacity = 2;  ///< panels the cache holds (>= 2: a tile needs both of its panels)
};

/// DRAM panel loads of a dispatch sequence under the model (kEarlyExit entries cost nothing).
/// The sequence must be a permutation of the grid's tiles; std::invalid_argument otherwise.
std::uint64_t order_loads(const PanelModel& model, const std::vector<TileCoord>& order);

/// Compulsory loads: every A row panel and every B column panel once (grid_m + grid_n).
std::uint64_t compulsory_loads(const PanelModel& model);

/// The exact search's bound from an empty cache, for any grid size: the compulsory loads, or
/// more where the cache forces reloads — grid_m * grid_n + 1 when C <= 3 (a load per tile
/// after the first), else ceil(grid_m * grid_n / (C - 1)) (a load pairs its panel with at
/// most C - 1 cached ones). See GridProblem::bound in order_search.cpp for the proofs.
std::uint64_t tile_lower_bound(const PanelModel& model);

struct SearchResult {
  std::vector<TileCoord> order;  ///< the best order found
  std::uint64_t loads = 0;       ///< its cost
  bool optimal = false;          ///< proven optimal (exact search completed, or annealing met tile_lower_bound)
  std::uint64_t examined = 0;    ///< partial orders expanded (exact) or complete orders costed (anneal)
  std::uint64_t memo_states = 0; ///< distinct states memoised (exact only)
};

/// Largest grid the exact search accepts: grid_m * grid_n <= kExactMaxTiles and
/// grid_m + grid_n <= kExactMaxPanels (the state packs a 32-bit tile bitmask and 4-bit panel
/// ids). Every such grid and cache size was measured to solve in under 8 s (docs/orders.md).
inline constexpr std::uint32_t kExactMaxTiles = 32;
inline constexpr std::uint32_t kExactMaxPanels = 15;

/// Exact branch and bound with memoisation over (done tiles, LRU cache contents). `upper`
/// is a known order (e.g. the best policy's): the search proves an order at most as costly
/// optimal, so the result never costs more than `upper`. InputError for a grid over the limits.
SearchResult exact_order_search(const PanelModel& model, const std::vector<TileCoord>& upper);

struct AnnealOptions {
  std::uint64_t iterations = 200000;
  std::uint64_t seed = 1;
};

/// Simulated annealing over complete orders, started from `seed_order`; deterministic for a
/// given seed. The result never costs more than the seed order.
SearchResult anneal_order_search(const PanelModel& model, const std::vector<TileCoord>& seed_order,
                                 const AnnealOptions& options);

/// The exact search's lower bound on the loads still to come after running `prefix` (distinct
/// tiles; kEarlyExit skipped), for tests of its admissibility. Same limits as the search.
std::uint64_t exact_search_bound(const PanelModel& model, const std::vector<TileCoord>& prefix);

/// Every order of the grid by brute force (tests only: grid_m * grid_n <= 10).
std::uint64_t brute_force_min_loads(const PanelModel& model);
/// The fewest loads of any completion of `prefix` (its own loads not counted), by brute force.
std::uint64_t brute_force_min_loads(const PanelModel& model, const std::vector<TileCoord>& prefix);

}  // namespace tilesim
