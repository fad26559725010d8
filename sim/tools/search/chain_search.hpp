#pragma once
// Order search over a chained pair of GEMMs (issue 6; docs/orders.md, "Chained pair"): one
// dispatch sequence interleaving a producer grid and a consumer grid under row sync, costed
// with the sequential panel LRU model of order_search.hpp.
//
// Model: producer tile (m, n) of an M x N grid reads A row panel m, then W0 column panel n,
// then writes H row panel m (the write puts H_m in the cache, most recently used, without a
// load). Consumer tile (m, j) of an M x N1 grid reads H row panel m, then W1 column panel j,
// and may run only once every producer tile of row m has run. Tiles run one at a time; the
// cache holds `capacity` panels of any kind with LRU replacement; a read of a panel not in
// the cache is one DRAM load. The cost of an order is its number of loads (H write-backs are
// not counted).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tilesim {

enum class ChainStage : std::uint8_t { producer, consumer };

struct ChainTile {
  ChainStage stage = ChainStage::producer;
  std::uint32_t m = 0, n = 0;  ///< row; column within its own grid (W0's for producers, W1's for consumers)
  bool operator==(const ChainTile&) const = default;
};

struct ChainModel {
  std::uint32_t grid_m = 0, grid_n = 0;  ///< the producer grid, M x N
  std::uint32_t consumer_n = 0;          ///< the consumer grid's columns, N1 (it is M x N1)
  std::uint32_t capacity = 2;            ///< panels the cache holds (>= 2)
};

/// Largest chain the exact search accepts: M*N + M*N1 tiles (a bitmask) and 2M + N + N1
/// panels (4-bit ids).
inline constexpr std::uint32_t kChainMaxTiles = 24;
inline constexpr std::uint32_t kChainMaxPanels = 15;

/// InputError naming --grid/--chain when the chain is over the limits above.
void check_chain_limits(const ChainModel& model);

/// DRAM panel loads of an interleaved order. std::invalid_argument unless the order holds every
/// tile of both grids exactly once and runs no consumer tile before its producer row.
std::uint64_t chain_order_loads(const ChainModel& model, const std::vector<ChainTile>& order);

/// Compulsory loads: every A, W0 and W1 panel once (M + N + N1). H needs none: the consumer
/// tiles of a row may follow its last producer tile while H_m is still cached.
std::uint64_t chain_compulsory_loads(const ChainModel& model);

struct ChainBaseline {
  std::string name;
  std::vector<ChainTile> order;
};

/// The orders the search is compared with: `stream` (every producer tile, then every consumer
/// tile, each grid in row, column or hilbert order), `row-sync (row)` (producer row m, then
/// consumer row m, for m = 0, 1, ...) and `row-sync (serpentine)` (the same with every other
/// row of both grids walked right to left).
std::vector<ChainBaseline> chain_baselines(const ChainModel& model);

struct ChainSearchResult {
  std::vector<ChainTile> order;
  std::uint64_t loads = 0;
  std::uint64_t examined = 0;     ///< partial orders expanded
  std::uint64_t memo_states = 0;  ///< distinct states memoised
};

/// Exact branch and bound (branch_and_bound.hpp) over (tiles done in both grids, LRU cache),
/// started from the known order `upper`: the result is optimal and never costs more than it.
/// InputError naming --grid/--chain for a chain over the limits.
ChainSearchResult exact_chain_search(const ChainModel& model, const std::vector<ChainTile>& upper);

/// The exact search's lower bound on the loads still to come after `prefix` (tests).
std::uint64_t exact_chain_bound(const ChainModel& model, const std::vector<ChainTile>& prefix);

/// The fewest loads of any valid completion of `prefix` (its own loads not counted), by
/// enumerating every valid interleaving (tests only: at most 10 tiles in all).
std::uint64_t brute_force_chain_min_loads(const ChainModel& model, const std::vector<ChainTile>& prefix = {});

/// Writes a chain order file (docs/orders.md, "Chain order files"): a `chain M N N1` header,
/// then one `p m n` or `c m j` line per tile in dispatch order; `tilesim run` replays it on a
/// fused dataflow FFN. std::invalid_argument unless every tile of both grids appears once (a
/// consumer tile before its producer row is written as given: its k-steps wait there).
void write_chain_order(const std::vector<ChainTile>& order, const ChainModel& model, std::ostream& out);

}  // namespace tilesim
