#pragma once
// Launch-order policies: which output tile the i-th dispatched block of a 2-D tile grid
// computes. Hardware dispatches a grid's blocks in linear block-index order, so a policy is
// exactly the kernel's blockIdx -> tile mapping. One file per policy, registered by name.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config_node.hpp"
#include "common/registry.hpp"

namespace tilesim {

struct TileCoord {
  std::uint32_t m = 0, n = 0;
  bool operator==(const TileCoord&) const = default;
};

/// A launched block that maps to no tile and exits at once (CUTLASS's padded swizzle grid).
inline constexpr TileCoord kEarlyExit{0xffffffffu, 0xffffffffu};
/// A unit of work on a tile outside the problem: CUTLASS 3's persistent scheduler rounds the
/// tile grid up to a multiple of its swizzle and runs the main loop on those tiles too (TMA
/// reads of a box wholly out of bounds return zeros without touching memory, the epilogue's
/// stores are predicated off). It costs MMA time and no memory traffic.
inline constexpr TileCoord kPaddedTile{0xfffffffeu, 0xfffffffeu};
/// Whether a sequence entry is a tile of the grid (not kEarlyExit or kPaddedTile).
inline bool is_tile(const TileCoord& t) { return !(t == kEarlyExit) && !(t == kPaddedTile); }

/// What a workload tells an order about its tile grid beyond its shape. A fused attention
/// kernel's n axis is batch x heads + head; FlashAttention-3's scheduler sizes its L2 sections
/// by the bytes of K and V one head reads.
struct GridContext {
  std::uint32_t heads = 0;              ///< query heads per batch (0: not an attention grid)
  std::uint32_t kv_group = 1;           ///< query heads that share one KV head
  std::uint64_t kv_bytes_per_head = 0;  ///< K and V of one KV head, in bytes
};

/// The tile grid a persistent tile scheduler works on (rounded up to its swizzle and cluster)
/// and its raster, for decompositions built on that scheduler (stream-K).
struct SchedulerGrid {
  std::uint32_t tiles_m = 0, tiles_n = 0;
  bool along_m = false;
};

class LaunchOrder {
 public:
  virtual ~LaunchOrder() = default;
  /// The policy's kind and parameters, e.g. "grouped(group_m=8)".
  virtual std::string describe() const = 0;
  /// The dispatch sequence for a grid of grid_m x grid_n tiles: every tile exactly once, in
  /// dispatch order, possibly with kEarlyExit entries for launched blocks that compute nothing
  /// and kPaddedTile entries for work on tiles outside the problem.
  /// Throws InputError when the policy cannot serve this grid (e.g. an order file of another shape).
  virtual std::vector<TileCoord> sequence(std::uint32_t grid_m, std::uint32_t grid_n) const = 0;
  /// The sequence for a grid the workload describes further (attention): what sequence()
  /// gives, unless the policy reads the context.
  virtual std::vector<TileCoord> sequence_in(std::uint32_t grid_m, std::uint32_t grid_n, const GridContext&) const {
    return sequence(grid_m, grid_n);
  }
  /// The thread-block cluster [m, n] whose blocks the sequence keeps together (1 x 1: none).
  virtual TileCoord cluster() const { return {1, 1}; }
  /// Whether a persistent kernel's programs take the sequence's tiles from an atomic counter
  /// as they free up (each the next tile in sequence order), not by a fixed stride.
  virtual bool dynamic() const { return false; }
  /// The scheduler's grid for a grid_m x grid_n problem; nullopt for orders that are not a
  /// persistent tile scheduler's.
  virtual std::optional<SchedulerGrid> scheduler_grid(std::uint32_t, std::uint32_t) const { return std::nullopt; }
};

/// Builds a policy from its YAML node (`kind:` plus the policy's own keys). The node's
/// file and path are used in errors; relative paths resolve against `base_dir`.
using OrderFactory = std::function<std::unique_ptr<LaunchOrder>(const ConfigNode& node, const std::string& base_dir)>;

/// Registers a policy by name, with a line saying what it does; called from a static
/// initialiser in the policy's file. A name registered twice stops the program.
bool register_order(const std::string& kind, std::string description, OrderFactory factory);
/// Creates the policy named by node's `kind:`; unknown kinds and bad keys are InputErrors.
std::unique_ptr<LaunchOrder> make_order(const ConfigNode& node, const std::string& base_dir);
std::vector<std::string> order_kinds();
std::vector<NamedPolicy> order_kinds_described();

}  // namespace tilesim
