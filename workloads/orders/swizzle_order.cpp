// `swizzle`: CUTLASS 2.x GemmIdentityThreadblockSwizzle
// (include/cutlass/gemm/threadblock/threadblock_swizzle.h, get_grid_shape and
// get_tile_offset(int log_tile)). The launched grid is dim3(grid_m << log_tile,
// ceil(grid_n / 2^log_tile)); block (x, y) computes m = x >> log_tile,
// n = (y << log_tile) + (x & (2^log_tile - 1)). Hardware dispatches x fastest, so 2^log_tile
// adjacent n columns are swept down m together. The padded grid may overshoot n; CUTLASS's
// kernels return at once for those blocks (kernel/gemm.h "Early exit if CTA is out of range"),
// and they still occupy dispatch slots, so we emit kEarlyExit for them.
// log_tile comes from the config, not from CUTLASS's get_log_tile(N) heuristic, so that
// experiments can sweep it.
#include <algorithm>

#include "workloads/orders/order.hpp"

namespace tilesim {

namespace {

class SwizzleOrder final : public LaunchOrder {
 public:
  explicit SwizzleOrder(std::uint32_t log_tile) : log_tile_(log_tile) {}

  std::string describe() const override { return "swizzle(log_tile=" + std::to_string(log_tile_) + ")"; }

  std::vector<TileCoord> sequence(std::uint32_t grid_m, std::uint32_t grid_n) const override {
    std::vector<TileCoord> out;
    if (grid_m == 0 || grid_n == 0) return out;
    // 64-bit: grid_m << 6 may not fit 32 bits for absurd grids; CUTLASS itself uses int.
    const std::uint64_t tile = std::uint64_t{1} << log_tile_;
    const std::uint64_t grid_x = std::uint64_t{grid_m} << log_tile_;
    const std::uint64_t grid_y = (std::uint64_t{grid_n} + tile - 1) / tile;
    out.reserve(grid_x * grid_y);
    for (std::uint64_t y = 0; y < grid_y; ++y) {
      for (std::uint64_t x = 0; x < grid_x; ++x) {
        const std::uint64_t m = x >> log_tile_;
        const std::uint64_t n = (y << log_tile_) + (x & (tile - 1));
        if (m >= grid_m || n >= grid_n)
          out.push_back(kEarlyExit);
        else
          out.push_back({static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n)});
      }
    }
    return out;
  }

 private:
  std::uint32_t log_tile_;
};

const bool registered = register_order("swizzle",
    "CUTLASS 2.x GemmIdentityThreadblockSwizzle: 2^log_tile columns swept down m together",
    [](const ConfigNode& node, const std::string&) {
  node.allow_keys({"kind", "log_tile"});
  // CUTLASS's heuristic tops out at 3; up to 6 lets experiments go past it.
  const auto log_tile = static_cast<std::uint32_t>(node.integer_or("log_tile", 0, 0, 6));
  return std::make_unique<SwizzleOrder>(log_tile);
});

}  // namespace

}  // namespace tilesim
