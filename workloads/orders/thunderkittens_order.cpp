// `thunderkittens`: the tile order of ThunderKittens' H100 GEMM (kernels/gemm/bf16_h100/
// bf16_h100_gemm.cu lines 29-49 at 0b55588d, formerly kernels/matmul/H100/matmul.cu 28-48):
// tile rows in bands of super_m ("super-rows"), each band walked column by column with the row
// fastest, bands top to bottom, the leftover rows one last, shorter band. The kernel launches 132
// persistent programs that take task ids p, p + 132, ... (`persistent: 132`); its main() uses
// 128 x 256 tiles with super_m 8. The mapping is Triton's grouped order with group_m = super_m,
// written here as the kernel writes it.
#include "workloads/orders/order.hpp"

namespace tilesim {

namespace {

class ThunderKittensOrder final : public LaunchOrder {
 public:
  explicit ThunderKittensOrder(std::uint64_t super_m) : super_m_(super_m) {}

  std::string describe() const override { return "thunderkittens(super_m=" + std::to_string(super_m_) + ")"; }

  std::vector<TileCoord> sequence(std::uint32_t grid_m, std::uint32_t grid_n) const override {
    const std::uint64_t rblocks = grid_m, cblocks = grid_n;
    const std::uint64_t super_rows = rblocks / super_m_ * super_m_, final_rows = rblocks - super_rows;
    const std::uint64_t super_repeat = super_m_ * cblocks;
    std::vector<TileCoord> out;
    out.reserve(rblocks * cblocks);
    for (std::uint64_t task = 0; task < rblocks * cblocks; ++task) {
      std::uint64_t row, col;
      if (task < super_rows * cblocks) {
        row = super_m_ * (task / super_repeat) + task % super_m_;
        col = task % super_repeat / super_m_;
      } else {
        const std::uint64_t rid = task - super_rows * cblocks;
        row = super_rows + rid % final_rows;
        col = rid / final_rows;
      }
      out.push_back({static_cast<std::uint32_t>(row), static_cast<std::uint32_t>(col)});
    }
    return out;
  }

 private:
  std::uint64_t super_m_;
};

const bool registered = register_order("thunderkittens",
    "ThunderKittens' H100 GEMM: bands of super_m rows walked column by column",
    [](const ConfigNode& node, const std::string&) {
  node.allow_keys({"kind", "super_m"});
  // main() instantiates matmul_template<2, 4, 8>: SUPER_M 8 (the class default is 12).
  const auto super_m = static_cast<std::uint64_t>(node.integer_or("super_m", 8, 1, 0xffffffffLL));
  return std::make_unique<ThunderKittensOrder>(super_m);
});

}  // namespace

}  // namespace tilesim
