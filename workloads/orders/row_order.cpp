// `row`: dispatch position i computes tile (i / grid_n, i % grid_n), n fastest. This is what a
// kernel gets when it maps a 1-D blockIdx.x to tiles row by row (or launches dim3(grid_n, grid_m)).
#include "workloads/orders/order.hpp"

namespace tilesim {

namespace {

class RowOrder final : public LaunchOrder {
 public:
  std::string describe() const override { return "row"; }

  std::vector<TileCoord> sequence(std::uint32_t grid_m, std::uint32_t grid_n) const override {
    std::vector<TileCoord> out;
    out.reserve(static_cast<std::size_t>(grid_m) * grid_n);
    for (std::uint32_t m = 0; m < grid_m; ++m)
      for (std::uint32_t n = 0; n < grid_n; ++n) out.push_back({m, n});
    return out;
  }
};

const bool registered = register_order("row",
    "tiles row by row, n fastest (a 1-D grid mapped row-major)",
    [](const ConfigNode& node, const std::string&) {
  node.allow_keys({"kind"});
  return std::make_unique<RowOrder>();
});

}  // namespace

}  // namespace tilesim
