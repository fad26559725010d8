// Persistent tile schedulers as order kinds: each sequence is checked against an independent
// re-implementation of its source's formula (written here as nested loops over the structure
// the formula encodes, not as the index arithmetic of the policy file), over many grid shapes
// including ragged and tiny ones.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "common/error.hpp"
#include "workloads/orders/order.hpp"
#include "order_test_util.hpp"

using namespace tilesim;
using tilesim::test::cat;

namespace {

std::unique_ptr<LaunchOrder> order_from(const std::string& yaml) {
  return make_order(ConfigNode(YAML::Load(yaml), "exp.yaml", "order"), "");
}

std::uint32_t up(std::uint32_t x, std::uint32_t to) { return (x + to - 1) / to * to; }

/// CUTLASS 3's PersistentTileSchedulerSm90 sequence as loops: swizzle bands of S cluster
/// columns (minor dimension) outermost, then the major dimension in whole clusters, then the S
/// columns of the band, then the block's place in its cluster (major, then minor offset).
std::vector<TileCoord> cutlass_sm90_reference(std::uint32_t gm, std::uint32_t gn, char raster, std::uint32_t max_swizzle,
                                              std::uint32_t cm, std::uint32_t cn) {
  const std::uint32_t cta_m = up(gm, cm), cta_n = up(gn, cn);
  const std::uint32_t small = std::min(cta_m, cta_n);
  std::uint32_t s = 1;
  if (max_swizzle >= 8 && small >= 6) s = 8;
  else if (max_swizzle >= 4 && small >= 3) s = 4;
  else if (max_swizzle >= 2 && small >= 2) s = 2;
  const std::uint32_t rm = up(cta_m, s * cm), rn = up(cta_n, s * cn);
  const bool along_m = raster == 'm' || (raster == 'h' && rn > rm);
  // Extents as (major, minor): along M the major dimension is M.
  const std::uint32_t major = along_m ? rm : rn, minor = along_m ? rn : rm;
  const std::uint32_t c_major = along_m ? cm : cn, c_minor = along_m ? cn : cm;
  std::vector<TileCoord> out;
  for (std::uint32_t band = 0; band < minor / (s * c_minor); ++band)
    for (std::uint32_t mc = 0; mc < major / c_major; ++mc)
      for (std::uint32_t o = 0; o < s; ++o)
        for (std::uint32_t mo = 0; mo < c_major; ++mo)
          for (std::uint32_t no = 0; no < c_minor; ++no) {
            const std::uint32_t a = mc * c_major + mo, b = (band * s + o) * c_minor + no;
            const std::uint32_t m = along_m ? a : b, n = along_m ? b : a;
            out.push_back(m < gm && n < gn ? TileCoord{m, n} : kPaddedTile);
          }
  return out;
}

/// ThunderKittens' H100 GEMM as loops: bands of super_m rows (the last one shorter), each band's
/// columns left to right, the band's rows fastest.
std::vector<TileCoord> thunderkittens_reference(std::uint32_t gm, std::uint32_t gn, std::uint32_t super_m) {
  std::vector<TileCoord> out;
  for (std::uint32_t top = 0; top < gm; top += super_m)
    for (std::uint32_t n = 0; n < gn; ++n)
      for (std::uint32_t m = top; m < std::min(gm, top + super_m); ++m) out.push_back({m, n});
  return out;
}

/// FlashAttention-3's LPT order as loops: sections of `width` (batch, head) pairs (the last
/// one what remains), m-blocks from the last to the first, the section's pairs fastest.
std::vector<TileCoord> fa3_lpt_reference(std::uint32_t gm, std::uint32_t gn, std::uint32_t width) {
  std::vector<TileCoord> out;
  for (std::uint32_t first = 0; first < gn; first += width)
    for (std::uint32_t m = gm; m-- > 0;)
      for (std::uint32_t hb = first; hb < std::min(gn, first + width); ++hb) out.push_back({m, hb});
  return out;
}

}  // namespace

TEST_CASE("cutlass_sm90 matches the scheduler's structure on all grids up to 20x20", "[orders]") {
  for (const char* raster : {"m", "n", "heuristic"})
    for (std::uint32_t sw : {1u, 2u, 4u, 8u})
      for (auto [cm, cn] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{{1, 1}, {2, 1}, {1, 2}, {2, 2}}) {
        const auto order = order_from(cat("{kind: cutlass_sm90, raster: ", raster, ", max_swizzle: ", sw,
                                          ", cluster: [", cm, ", ", cn, "]}"));
        for (std::uint32_t gm = 1; gm <= 20; ++gm)
          for (std::uint32_t gn = 1; gn <= 20; ++gn) {
            INFO(order->describe() << " grid " << gm << "x" << gn);
            const auto seq = order->sequence(gm, gn);
            REQUIRE(seq == cutlass_sm90_reference(gm, gn, raster[0], sw, cm, cn));
            // Every tile exactly once; the rest is padding.
            std::vector<int> seen(std::size_t{gm} * gn, 0);
            for (const TileCoord& t : seq)
              if (is_tile(t)) ++seen[std::size_t{t.m} * gn + t.n];
            REQUIRE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
          }
      }
}

TEST_CASE("cutlass_sm90 hand-computed examples", "[orders]") {
  // 4x4, along M, swizzle 2: pairs of columns swept down M.
  const std::vector<TileCoord> want = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {3, 0}, {3, 1},
                                       {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 2}, {2, 3}, {3, 2}, {3, 3}};
  CHECK(order_from("{kind: cutlass_sm90, raster: m, max_swizzle: 2}")->sequence(4, 4) == want);
  // 3x5 with swizzle 2: 3 >= 2 so S = 2; M rounds up to 4, N to 6. Along M, the padded row 3
  // and column 5 are computed on zeros.
  const auto seq = order_from("{kind: cutlass_sm90, raster: m, max_swizzle: 2}")->sequence(3, 5);
  REQUIRE(seq.size() == 24);
  CHECK(std::count(seq.begin(), seq.end(), kPaddedTile) == 9);
  CHECK(seq[6] == kPaddedTile);       // (3, 0)
  CHECK(seq[16] == TileCoord{0, 4});  // the third band: columns 4 and 5
  CHECK(seq[17] == kPaddedTile);      // (0, 5)
  CHECK(seq[20] == TileCoord{2, 4});
  // The heuristic rasters along M only when the grid is wider than tall.
  CHECK(order_from("{kind: cutlass_sm90}")->sequence(2, 3)[1] == TileCoord{1, 0});
  CHECK(order_from("{kind: cutlass_sm90}")->sequence(3, 3)[1] == TileCoord{0, 1});
  CHECK(order_from("{kind: cutlass_sm90, raster: n, max_swizzle: 8}")->describe() ==
        "cutlass_sm90(raster=n, max_swizzle=8, cluster=1x1)");
}

TEST_CASE("cutlass_sm90 band_padding: skip leaves out clusters wholly outside the problem", "[orders]") {
  // The same sequence with every cluster of padded tiles an early exit; a cluster that the
  // problem's edge cuts keeps its padded blocks. All grids up to 20x20, clusters 1x1 ... 2x2.
  for (std::uint32_t sw : {1u, 2u, 8u})
    for (auto [cm, cn] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{{1, 1}, {2, 1}, {1, 2}, {2, 2}}) {
      const std::string base = cat("{kind: cutlass_sm90, raster: m, max_swizzle: ", sw, ", cluster: [", cm, ", ", cn, "]");
      const auto compute = order_from(base + "}"), skip = order_from(base + ", band_padding: skip}");
      for (std::uint32_t gm = 1; gm <= 20; ++gm)
        for (std::uint32_t gn = 1; gn <= 20; ++gn) {
          INFO(skip->describe() << " grid " << gm << "x" << gn);
          const auto want = compute->sequence(gm, gn), got = skip->sequence(gm, gn);
          REQUIRE(got.size() == want.size());
          const std::size_t size = std::size_t{cm} * cn;
          for (std::size_t at = 0; at < want.size(); at += size) {
            const bool empty = std::all_of(want.begin() + at, want.begin() + at + size,
                                           [](const TileCoord& t) { return t == kPaddedTile; });
            for (std::size_t i = at; i < at + size; ++i) REQUIRE(got[i] == (empty ? kEarlyExit : want[i]));
          }
        }
    }
  // 3x5 with swizzle 2 (the example above): row 3 and column 5 padded, 1x1 clusters: all nine skipped.
  const auto seq = order_from("{kind: cutlass_sm90, raster: m, max_swizzle: 2, band_padding: skip}")->sequence(3, 5);
  CHECK(std::count(seq.begin(), seq.end(), kEarlyExit) == 9);
  CHECK(std::count(seq.begin(), seq.end(), kPaddedTile) == 0);
  REQUIRE_THROWS_WITH(order_from("{kind: cutlass_sm90, band_padding: drop}"), Catch::Contains("band_padding"));
}

TEST_CASE("cutlass_sm90 parameters are validated with file and key", "[orders]") {
  REQUIRE_THROWS_WITH(order_from("{kind: cutlass_sm90, raster: k}"), Catch::Contains("exp.yaml") && Catch::Contains("raster"));
  REQUIRE_THROWS_WITH(order_from("{kind: cutlass_sm90, max_swizzle: 16}"), Catch::Contains("max_swizzle"));
  REQUIRE_THROWS_WITH(order_from("{kind: cutlass_sm90, cluster: [3, 1]}"), Catch::Contains("power of two"));
  REQUIRE_THROWS_WITH(order_from("{kind: cutlass_sm90, cluster: [2]}"), Catch::Contains("cluster"));
  REQUIRE_THROWS_WITH(order_from("{kind: cutlass_sm90, cluster: [8, 4]}"), Catch::Contains("at most 16"));
}

TEST_CASE("thunderkittens walks super-rows column by column on all grids up to 20x20", "[orders]") {
  for (std::uint32_t super_m : {1u, 3u, 8u, 12u}) {
    const auto order = order_from(cat("{kind: thunderkittens, super_m: ", super_m, "}"));
    const auto grouped = order_from(cat("{kind: grouped, group_m: ", super_m, "}"));
    for (std::uint32_t gm = 1; gm <= 20; ++gm)
      for (std::uint32_t gn = 1; gn <= 20; ++gn) {
        INFO("super_m " << super_m << " grid " << gm << "x" << gn);
        REQUIRE(order->sequence(gm, gn) == thunderkittens_reference(gm, gn, super_m));
        REQUIRE(order->sequence(gm, gn) == grouped->sequence(gm, gn));  // Triton's grouped order, in other words
      }
  }
  // 8192^3 with 128 x 256 tiles: 64 x 32 tiles; program 0 of 132 takes tasks 0, 132, 264, ...
  const auto seq = order_from("{kind: thunderkittens}")->sequence(64, 32);
  CHECK(seq[0] == TileCoord{0, 0});
  CHECK(seq[132] == TileCoord{4, 16});
  CHECK(seq[264] == TileCoord{8, 1});
}

TEST_CASE("fa3 static and lpt follow FlashAttention-3's schedulers", "[orders]") {
  const auto st = order_from("{kind: fa3}");
  CHECK(st->sequence(3, 2) == std::vector<TileCoord>{{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}});
  CHECK_FALSE(st->dynamic());
  const auto lpt = order_from("{kind: fa3, scheduler: lpt}");
  CHECK(lpt->dynamic());
  // seq_kv 8192, head_dim 128, fp16: 4 MiB of K and V per head, so 8 heads a 32 MiB section.
  GridContext c{32, 1, 8192ull * 256 * 2};
  for (std::uint32_t gm : {1u, 5u, 64u})
    for (std::uint32_t gn : {1u, 7u, 8u, 30u, 64u}) {
      INFO("grid " << gm << "x" << gn);
      REQUIRE(lpt->sequence_in(gm, gn, c) == fa3_lpt_reference(gm, gn, 8));
    }
  // The worked example: 64 m-blocks, 2 x 32 heads: tile 0 is (63, head 0), tile 132 is (47, 4).
  const auto seq = lpt->sequence_in(64, 64, c);
  CHECK(seq[0] == TileCoord{63, 0});
  CHECK(seq[7] == TileCoord{63, 7});
  CHECK(seq[8] == TileCoord{62, 0});
  CHECK(seq[132] == TileCoord{47, 4});
  CHECK(seq[512] == TileCoord{63, 8});
  // GQA: 4 query heads per KV head widen the section four times; K and V over 32 MiB give 1.
  REQUIRE(lpt->sequence_in(4, 64, GridContext{32, 4, 8192ull * 256 * 2}) == fa3_lpt_reference(4, 64, 32));
  REQUIRE(lpt->sequence_in(4, 6, GridContext{6, 1, 40ull << 20}) == fa3_lpt_reference(4, 6, 1));
  // Outside an attention grid it cannot size its sections: an error naming the key.
  REQUIRE_THROWS_WITH(lpt->sequence(4, 4), Catch::Contains("exp.yaml") && Catch::Contains("order.scheduler"));
  REQUIRE_THROWS_WITH(order_from("{kind: fa3, l2_bytes: 1MiB}"), Catch::Contains("only meaningful with scheduler: lpt"));
}
