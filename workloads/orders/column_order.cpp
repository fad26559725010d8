// `column`: dispatch position i computes tile (i % grid_m, i / grid_m), m fastest. This is the
// default of a kernel launched as dim3(grid_m, grid_n) with blockIdx.x -> m (e.g. CUTLASS 2.x
// with log_tile = 0).
#include "workloads/orders/order.hpp"

namespace tilesim {

namespace {

class ColumnOrder final : public LaunchOrder {
 public:
  std::string describe() const override { return "column"; }

  std::vector<TileCoord> sequence(std::uint32_t grid_m, std::uint32_t grid_n) const override {
    std::vector<TileCoord> out;
    out.reserve(static_cast<std::size_t>(grid_m) * grid_n);
    for (std::uint32_t n = 0; n < grid_n; ++n)
      for (std::uint32_t m = 0; m < grid_m; ++m) out.push_back({m, n});
    return out;
  }
};

const bool registered = register_order("column",
    "tiles column by column, m fastest (dim3(grid_m, grid_n) with blockIdx.x -> m)",
    [](const ConfigNode& node, const std::string&) {
  node.allow_keys({"kind"});
  return std::make_unique<ColumnOrder>();
});

}  // namespace

}  // namespace tilesim
