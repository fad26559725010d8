// `fa3`: FlashAttention-3's forward tile schedulers (hopper/tile_scheduler.hpp at 0251105a) over
// a fused attention grid, m = the query block, n = batch x heads + head.
//   static (StaticPersistentTileScheduler, lines 156-212; non-causal kernels): tile index i is
//     m = i % grid_m, n = i / grid_m (m-block fastest, then head, then batch); programs take
//     i = p, p + P, ... (`persistent:`).
//   lpt (DynamicPersistentTileScheduler, lines 252-340; causal kernels): sections of `swizzle`
//     consecutive (batch, head) pairs, the most whose K and V fit `l2_bytes` (32 MiB in the
//     source, line 255) as a power of two, times the query heads per KV head (line 261); within
//     a section the m-blocks in descending order (longest first, line 310), the heads of the
//     section fastest; a last section of the remaining pairs. Programs take tiles from an atomic
//     counter in this order as they free up (lines 322-340).
#include <algorithm>
#include <bit>

#include "common/error.hpp"
#include "workloads/orders/order.hpp"

namespace tilesim {

namespace {

class Fa3Order final : public LaunchOrder {
 public:
  Fa3Order(bool lpt, std::uint64_t l2_bytes, ConfigNode node) : lpt_(lpt), l2_bytes_(l2_bytes), node_(std::move(node)) {}

  std::string describe() const override {
    return lpt_ ? "fa3(scheduler=lpt,l2_bytes=" + std::to_string(l2_bytes_) + ")" : "fa3(scheduler=static)";
  }

  std::vector<TileCoord> sequence(std::uint32_t grid_m, std::uint32_t grid_n) const override {
    if (lpt_)
      node_.fail_key("scheduler", "lpt orders a fused attention kernel's tiles: its sections are sized by the K and V "
                                  "bytes of a head (use it with kind: attention, form: fused)");
    return static_sequence(grid_m, grid_n);
  }

  std::vector<TileCoord> sequence_in(std::uint32_t grid_m, std::uint32_t grid_n, const GridContext& c) const override {
    if (!lpt_) return static_sequence(grid_m, grid_n);
    if (c.heads == 0) return sequence(grid_m, grid_n);  // throws: not an attention grid
    const std::uint64_t kv = std::max<std::uint64_t>(1, c.kv_bytes_per_head);
    const std::uint64_t pow2 = l2_bytes_ < kv ? 1 : std::bit_floor(l2_bytes_ / kv);
    const std::uint64_t swizzle = pow2 * c.kv_group, hb_count = grid_n;
    const std::uint64_t quotient = hb_count / swizzle, remainder = hb_count % swizzle;
    std::vector<TileCoord> out;
    out.reserve(std::uint64_t{grid_m} * grid_n);
    for (std::uint64_t i = 0; i < std::uint64_t{grid_m} * grid_n; ++i) {
      const std::uint64_t section = i / (swizzle * grid_m), l2_mod = i % (swizzle * grid_m);
      const std::uint64_t width = section < quotient ? swizzle : remainder;
      const std::uint64_t block = l2_mod / width, hb = section * swizzle + l2_mod % width;
      out.push_back({static_cast<std::uint32_t>(grid_m - 1 - block), static_cast<std::uint32_t>(hb)});
    }
    return out;
  }

  bool dynamic() const override { return lpt_; }

 private:
  static std::vector<TileCoord> static_sequence(std::uint32_t grid_m, std::uint32_t grid_n) {
    std::vector<TileCoord> out;
    out.reserve(std::uint64_t{grid_m} * grid_n);
    for (std::uint32_t n = 0; n < grid_n; ++n)
      for (std::uint32_t m = 0; m < grid_m; ++m) out.push_back({m, n});
    return out;
  }

  bool lpt_;
  std::uint64_t l2_bytes_;
  ConfigNode node_;  // for errors: the grid it is asked for is known only later
};

const bool registered = register_order("fa3",
    "FlashAttention-3's forward tile schedulers (static, or longest-processing-time first)",
    [](const ConfigNode& node, const std::string&) {
  node.allow_keys({"kind", "scheduler", "l2_bytes"});
  const bool lpt = node.choice_or("scheduler", "static", {"static", "lpt"}) == "lpt";
  if (!lpt && node.has("l2_bytes")) node.fail_key("l2_bytes", "only meaningful with scheduler: lpt");
  const std::uint64_t l2 = node.bytes_or("l2_bytes", 32ull << 20, 1, 1ull << 40);
  return std::make_unique<Fa3Order>(lpt, l2, node);
});

}  // namespace

}  // namespace tilesim
