// `cutlass_sm90`: the tile sequence of CUTLASS 3's PersistentTileSchedulerSm90, as CUTLASS
// 7107b05 implements it:
//  - include/cutlass/gemm/kernel/tile_scheduler_params.h, PersistentTileSchedulerSm90Params:
//    get_log_swizzle_size (the largest power of two <= max_swizzle_size whose threshold the
//    smaller tile dimension reaches: 8 needs >= 6 tiles, 4 needs >= 3, 2 needs >= 2),
//    get_rasterization_order (heuristic: along M when tiles_n > tiles_m, else along N), and
//    initialize (the tile grid rounded up to a multiple of swizzle x cluster in both dimensions);
//  - include/cutlass/gemm/kernel/static_tile_scheduler.hpp, get_current_work_for_linear_idx
//    (work index i >= the rounded grid is invalid; a program starts at its block's linear index
//    and advances by the grid size, which is `workload.persistent`'s stride);
//  - include/cutlass/gemm/kernel/sm90_tile_scheduler.hpp, get_work_idx_m_and_n (lines 92-135).
// Work index i maps to a tile thus, with "major" the raster dimension (M for along_m) and
// "minor" the other, S = 2^log_swizzle and cluster extents cM (major) and cm (minor):
//   blk = i / cm, minor_offset = i % cm (the block's place in its cluster);
//   cluster = blk / cM, major_offset = blk % cM;
//   offset = cluster % S, extra = cluster / S;
//   major = (extra % (rounded_major / cM)) * cM + major_offset;
//   minor = ((extra / (rounded_major / cM)) * S + offset) * cm + minor_offset.
// So S adjacent minor columns are swept down the whole major dimension together. Tiles of the
// rounded grid outside the problem are computed on zeros: kPaddedTile.
#include <algorithm>
#include <array>

#include "common/types.hpp"
#include "workloads/orders/order.hpp"

namespace tilesim {

namespace {

enum class Raster { along_m, along_n, heuristic };

class CutlassSm90Order final : public LaunchOrder {
 public:
  CutlassSm90Order(Raster raster, std::uint32_t max_swizzle, std::uint32_t cluster_m, std::uint32_t cluster_n,
                   bool skip_padding)
      : raster_(raster), max_swizzle_(max_swizzle), cluster_m_(cluster_m), cluster_n_(cluster_n),
        skip_padding_(skip_padding) {}

  std::string describe() const override {
    static const char* kNames[] = {"m", "n", "heuristic"};
    return "cutlass_sm90(raster=" + std::string(kNames[static_cast<int>(raster_)]) +
           ", max_swizzle=" + std::to_string(max_swizzle_) + ", cluster=" + std::to_string(cluster_m_) + "x" +
           std::to_string(cluster_n_) + (skip_padding_ ? ", band_padding=skip" : "") + ")";
  }

  TileCoord cluster() const override { return {cluster_m_, cluster_n_}; }

  // The problem's tile grid in whole clusters (get_tiled_cta_shape_mnl), then in whole
  // swizzle-by-cluster bands (initialize), and the raster (get_rasterization_order).
  std::optional<SchedulerGrid> scheduler_grid(std::uint32_t grid_m, std::uint32_t grid_n) const override {
    const std::uint64_t cta_m = round_up<std::uint64_t>(grid_m, cluster_m_), cta_n = round_up<std::uint64_t>(grid_n, cluster_n_);
    const std::uint64_t s = std::uint64_t{1} << log_swizzle(cta_m, cta_n);
    const std::uint64_t rm = round_up<std::uint64_t>(cta_m, s * cluster_m_), rn = round_up<std::uint64_t>(cta_n, s * cluster_n_);
    const bool along_n = raster_ == Raster::along_n || (raster_ == Raster::heuristic && !(rn > rm));
    return SchedulerGrid{static_cast<std::uint32_t>(rm), static_cast<std::uint32_t>(rn), !along_n};
  }

  std::vector<TileCoord> sequence(std::uint32_t grid_m, std::uint32_t grid_n) const override {
    std::vector<TileCoord> out;
    if (grid_m == 0 || grid_n == 0) return out;
    const SchedulerGrid sg = *scheduler_grid(grid_m, grid_n);
    const std::uint64_t rm = sg.tiles_m, rn = sg.tiles_n;
    const bool along_n = !sg.along_m;
    const std::uint64_t s = std::uint64_t{1} << log_swizzle(round_up<std::uint64_t>(grid_m, cluster_m_), round_up<std::uint64_t>(grid_n, cluster_n_));
    const std::uint64_t c_major = along_n ? cluster_n_ : cluster_m_, c_minor = along_n ? cluster_m_ : cluster_n_;
    const std::uint64_t blk_major = (along_n ? rn : rm) / c_major;
    out.reserve(rm * rn);
    for (std::uint64_t i = 0; i < rm * rn; ++i) {
      const std::uint64_t blk = i / c_minor, minor_offset = i % c_minor;
      const std::uint64_t cluster = blk / c_major, major_offset = blk % c_major;
      const std::uint64_t offset = cluster & (s - 1), extra = cluster / s;
      const std::uint64_t major = (extra % blk_major) * c_major + major_offset;
      const std::uint64_t minor = ((extra / blk_major) * s + offset) * c_minor + minor_offset;
      const std::uint64_t m = along_n ? minor : major, n = along_n ? major : minor;
      if (m >= grid_m || n >= grid_n)
        out.push_back(kPaddedTile);
      else
        out.push_back({static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(n)});
    }
    if (skip_padding_) skip_padded_clusters(out, c_minor * c_major);
    return out;
  }

 private:
  Raster raster_;
  std::uint32_t max_swizzle_, cluster_m_, cluster_n_;

  bool skip_padding_;  // band_padding: skip (the bands' padded clusters are not run)

  // A cluster wholly outside the problem (the rounding to whole swizzle bands) becomes early
  // exits, so persistent programs take only clusters with work; a cluster the problem's edge
  // cuts keeps its padded blocks, launched with their partners.
  static void skip_padded_clusters(std::vector<TileCoord>& seq, std::uint64_t cluster_size) {
    for (std::size_t at = 0; at < seq.size(); at += cluster_size) {
      const std::size_t end = std::min<std::size_t>(seq.size(), at + cluster_size);
      if (std::all_of(seq.begin() + at, seq.begin() + end, [](const TileCoord& t) { return t == kPaddedTile; }))
        std::fill(seq.begin() + at, seq.begin() + end, kEarlyExit);
    }
  }

  // get_log_swizzle_size: thresholds on the smaller dimension of the cluster-rounded grid.
  std::uint32_t log_swizzle(std::uint64_t cta_m, std::uint64_t cta_n) const {
    const std::uint64_t min_dim = std::min(cta_m, cta_n);
    if (max_swizzle_ >= 8 && min_dim >= 6) return 3;
    if (max_swizzle_ >= 4 && min_dim >= 3) return 2;
    if (max_swizzle_ >= 2 && min_dim >= 2) return 1;
    return 0;
  }
};

const bool registered = register_order("cutlass_sm90",
    "CUTLASS 3's persistent SM90 tile scheduler: raster order, swizzle, clusters",
    [](const ConfigNode& node, const std::string&) {
  node.allow_keys({"kind", "raster", "max_swizzle", "cluster", "band_padding"});
  const std::string r = node.choice_or("raster", "heuristic", {"heuristic", "m", "n"});
  const Raster raster = r == "m" ? Raster::along_m : r == "n" ? Raster::along_n : Raster::heuristic;
  // CUTLASS's default max_swizzle_size is 1; its thresholds stop at 8.
  const auto max_swizzle = static_cast<std::uint32_t>(node.integer_or("max_swizzle", 1, 1, 8));
  std::array<std::uint32_t, 2> cluster{1, 1};
  if (auto c = node.find("cluster")) {
    if (!c->is_sequence() || c->size() != 2) c->fail("expected [cluster_m, cluster_n], e.g. [2, 1]");
    for (std::size_t i = 0; i < 2; ++i) {
      const ConfigNode e = c->element(i);
      const auto v = e.as_integer(1, 16);
      // SM90 clusters hold at most 16 blocks; extents are powers of two in CUTLASS's kernels.
      if (v & (v - 1)) e.fail("expected a power of two (1, 2, 4, 8 or 16)");
      cluster[i] = static_cast<std::uint32_t>(v);
    }
    if (cluster[0] * cluster[1] > 16) c->fail("a cluster holds at most 16 blocks on SM90");
  }
  // CUTLASS computes the tiles it adds to round the grid to whole swizzle bands (compute);
  // cuBLAS's nvjet kernels show no such cost (skip; docs/validation.md, "cuBLAS").
  const bool skip = node.choice_or("band_padding", "compute", {"compute", "skip"}) == "skip";
  return std::make_unique<CutlassSm90Order>(raster, max_swizzle, cluster[0], cluster[1], skip);
});

}  // namespace

}  // namespace tilesim
