// `grouped`: the "L2 cache optimizations" order of Triton's matrix-multiplication tutorial.
// Program ids run down group_m rows at a time (m fastest within a group), so the first
// group_m * k dispatched tiles share only group_m rows of A and k columns of B. The last
// group is narrower when grid_m is not a multiple of group_m.
#include <algorithm>

#include "workloads/orders/order.hpp"

namespace tilesim {

namespace {

class GroupedOrder final : public LaunchOrder {
 public:
  explicit GroupedOrder(std::uint64_t group_m) : group_m_(group_m) {}

  std::string describe() const override { return "grouped(group_m=" + std::to_string(group_m_) + ")"; }

  std::vector<TileCoord> sequence(std::uint32_t grid_m, std::uint32_t grid_n) const override {
    std::vector<TileCoord> out;
    const std::uint64_t total = std::uint64_t{grid_m} * grid_n;
    out.reserve(total);
    // Direct transcription of the tutorial kernel, in 64 bits so group_m * grid_n cannot wrap.
    const std::uint64_t num_pid_in_group = group_m_ * grid_n;
    for (std::uint64_t pid = 0; pid < total; ++pid) {
      const std::uint64_t group_id = pid / num_pid_in_group;
      const std::uint64_t first_pid_m = group_id * group_m_;
      const std::uint64_t group_size_m = std::min<std::uint64_t>(grid_m - first_pid_m, group_m_);
      const std::uint64_t pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m);
      const std::uint64_t pid_n = (pid % num_pid_in_group) / group_size_m;
      out.push_back({static_cast<std::uint32_t>(pid_m), static_cast<std::uint32_t>(pid_n)});
    }
    return out;
  }

 private:
  std::uint64_t group_m_;
};

const bool registered = register_order("grouped",
    "Triton's grouped order: group_m rows at a time, m fastest within a group",
    [](const ConfigNode& node, const std::string&) {
  node.allow_keys({"kind", "group_m"});
  // Required: Triton's kernels take GROUP_SIZE_M explicitly and there is no neutral default.
  const auto group_m = static_cast<std::uint64_t>(node.integer("group_m", 1, 0xffffffffLL));
  return std::make_unique<GroupedOrder>(group_m);
});

}  // namespace

}  // namespace tilesim
