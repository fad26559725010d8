#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {
Experiment load(const std::string& workload, const std::string& extra = "") {
  return load_experiment_text("arch: h100\nworkload: " + workload + "\n" + extra, "exp.yaml", ".", {});
}
std::string sm90(const std::string& cluster) { return "order: {kind: cutlass_sm90, cluster: " + cluster + "}\n"; }
const std::string kGemm = "{kind: gemm, m: 512, n: 512, k: 256, tile: [128, 128, 64], stages: 2";
}  // namespace

TEST_CASE("gemm cluster: a shared tile is split into slices, one read and the rest multicast", "[gemm][sm90]") {
  // 2 x 1 cluster: tiles (2i, n) and (2i+1, n) share B's column panel; each reads half its
  // columns and receives the other half. A is not shared (cluster_n = 1).
  const Experiment e = load(kGemm + ", cluster: [2, 1]}", sm90("[2, 1]"));
  const Kernel& k = e.points[0].workload->kernels[0];
  REQUIRE(k.num_blocks() == 16);
  for (std::uint32_t b = 0; b < k.num_blocks(); ++b) {
    const Block& blk = k.blocks[b];
    const Step& s = k.steps[blk.first_step];  // first k-step: A, B slice 0, B slice 1
    REQUIRE(s.num_accesses == 3);
    const TileAccess& a = k.accesses[s.first_access];
    const TileAccess& b0 = k.accesses[s.first_access + 1];
    const TileAccess& b1 = k.accesses[s.first_access + 2];
    CHECK(a.kind == AccessKind::load);
    CHECK(a.rows == 128);
    CHECK((b0.cols == 64 && b1.cols == 64 && b1.col0 == b0.col0 + 64));
    const std::uint32_t rank = blk.tile_m % 2;
    CHECK(b0.kind == (rank == 0 ? AccessKind::load : AccessKind::multicast));
    CHECK(b1.kind == (rank == 1 ? AccessKind::load : AccessKind::multicast));
  }
  // 1 x 2: A's row panel is shared instead, split along its rows.
  const Experiment f = load(kGemm + ", cluster: [1, 2]}", sm90("[1, 2]"));
  const Kernel& g = f.points[0].workload->kernels[0];
  const Step& s = g.steps[g.blocks[1].first_step];
  REQUIRE(s.num_accesses == 3);
  CHECK(g.accesses[s.first_access].rows == 64);
  CHECK(g.accesses[s.first_access + 1].rows == 64);
  CHECK(g.accesses[s.first_access + 2].cols == 128);
  // The cluster is one launch parameter: on the order alone it is the kernel's too.
  const Experiment h = load(kGemm + "}", sm90("[1, 2]"));
  CHECK(h.points[0].workload->kernels[0].accesses == g.accesses);
}

TEST_CASE("gemm cluster: multicast cuts the L2 reads by the cluster's sharing", "[gemm][sm90]") {
  auto run = [](const std::string& cluster) {
    const Experiment e = load(kGemm + ", cluster: " + cluster + "}", sm90(cluster) + "sim: {cold_l2: kernel}\n");
    return simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options);
  };
  const SimResult one = run("[1, 1]"), tall = run("[2, 1]"), wide = run("[1, 2]");
  const auto load_sectors = [](const SimResult& r) { return r.total.read_sectors + r.total.coalesced_sectors; };
  // Every block still gets its A and B; half of one operand now comes by multicast, so the
  // SMs request a quarter fewer sectors of the L2 (A and B tiles are the same size here).
  const double base = static_cast<double>(load_sectors(one));
  CHECK(load_sectors(tall) / base == Approx(0.75).epsilon(0.01));
  CHECK(load_sectors(wide) / base == Approx(0.75).epsilon(0.01));
  CHECK(tall.total.dram_read_bytes <= one.total.dram_read_bytes);
  CHECK(wide.total.dram_read_bytes <= one.total.dram_read_bytes);
  CHECK(tall.kernels[0].flops == one.kernels[0].flops);
}

TEST_CASE("gemm cluster: a grid that clusters do not divide is padded to whole clusters", "[gemm][sm90]") {
  // 3 x 4 tiles under 2 x 1 clusters: the grid rounds to 4 x 4 (as CUTLASS and cuBLAS launch
  // it); the edge cluster's second block computes a padded tile, so its first reads B whole.
  const Experiment e = load("{kind: gemm, m: 384, n: 512, k: 256, tile: [128, 128, 64], stages: 2, cluster: [2, 1]}",
                            sm90("[2, 1]") + "sim: {cold_l2: kernel}\n");
  const Kernel& k = e.points[0].workload->kernels[0];
  REQUIRE(k.num_blocks() == 12);
  for (std::uint32_t b = 0; b < k.num_blocks(); ++b) {
    const Block& blk = k.blocks[b];
    const Step& s = k.steps[blk.first_step];
    const bool edge = blk.tile_m == 2;
    REQUIRE(s.num_accesses == (edge ? 2u : 3u));
    for (std::uint32_t i = 0; i < s.num_accesses; ++i)
      if (edge) CHECK(k.accesses[s.first_access + i].kind == AccessKind::load);
    if (edge) CHECK(k.accesses[s.first_access + 1].cols == 128);
  }
  // Every operand byte still comes from DRAM once, and the run finishes.
  const SimResult r = simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options);
  CHECK(r.total.dram_read_bytes == (384ull + 512ull) * 256 * 2);
}

TEST_CASE("gemm cluster: impossible clusters are errors naming the key", "[gemm][sm90][errors]") {
  REQUIRE_THROWS_WITH(load(kGemm + ", cluster: [3, 1]}", sm90("[2, 1]")),
                      Contains("workload.cluster[0]") && Contains("power of two"));
  REQUIRE_THROWS_WITH(load(kGemm + ", cluster: 2}", sm90("[2, 1]")), Contains("expected [cluster_m, cluster_n]"));
  // The order must keep a cluster's blocks together; given on both sides, the clusters agree.
  REQUIRE_THROWS_WITH(load(kGemm + ", cluster: [2, 1]}"), Contains("workload.cluster") && Contains("cutlass_sm90"));
  REQUIRE_THROWS_WITH(load(kGemm + ", cluster: [1, 2]}", sm90("[2, 1]")),
                      Contains("workload.cluster") && Contains("differs from the order's cluster [2, 1]"));
  // Given on the order only, its checks name the order's key.
  REQUIRE_THROWS_WITH(load(kGemm + ", persistent: 6}", sm90("[4, 1]")),
                      Contains("order.cluster") && Contains("whole number of 4-block clusters"));
  REQUIRE_THROWS_WITH(load(kGemm + ", persistent: 3, cluster: [2, 1]}", sm90("[2, 1]")),
                      Contains("workload.cluster") && Contains("whole number of 2-block clusters"));
  REQUIRE_THROWS_WITH(load(kGemm + ", split_k: 2, cluster: [2, 1]}", sm90("[2, 1]")),
                      Contains("workload.cluster") && Contains("split_k"));
}

TEST_CASE("gemm schedule: CUTLASS 3 cooperative and ping-pong kernels", "[gemm][sm90]") {
  const std::string wl = "{kind: gemm, m: 1024, n: 1024, k: 256, tile: [128, 128, 64], stages: 4";
  const Experiment coop = load(wl + ", schedule: cooperative}", "order: {kind: cutlass_sm90}\n");
  const Experiment ping = load(wl + ", schedule: pingpong}", "order: {kind: cutlass_sm90}\n");
  const Kernel& c = coop.points[0].workload->kernels[0];
  const Kernel& p = ping.points[0].workload->kernels[0];
  // Persistent by default: one program per SM slot (64 tiles here, so 64 programs); a producer
  // and two consumer warpgroups; the TMA warp-specialised main loop.
  CHECK(c.blocks.size() == 64);
  CHECK(c.resources.threads == 384);
  CHECK(c.mainloop == MainLoop::wgmma_tma_ws);
  // Ping-pong's epilogue runs under the other warpgroup's MMA: no pipe work, same stores.
  std::uint64_t c_epi = 0, p_epi = 0;
  for (const Step& s : c.steps) c_epi += s.epilogue_elems;
  for (const Step& s : p.steps) p_epi += s.epilogue_elems;
  CHECK(c_epi == 64ull * 128 * 128);
  CHECK(p_epi == 0);
  CHECK(p.accesses == c.accesses);
  // wgmma takes 64 rows a warpgroup. Cooperative splits a tile's rows between two warpgroups
  // (bm a multiple of 128, CUTLASS 3); cooperative_columns its columns (bn a multiple of 16, as
  // cuBLAS's coopB kernels: 192x192 splits 96 columns a warpgroup).
  const auto tile = [](const std::string& t, const std::string& sched) {
    return "{kind: gemm, m: 1024, n: 1024, k: 256, tile: [" + t + ", 64], schedule: " + sched + "}";
  };
  REQUIRE_THROWS_WITH(load(tile("64, 128", "cooperative")), Contains("workload.tile[0]") && Contains("multiple of 128"));
  REQUIRE_THROWS_WITH(load(tile("192, 192", "cooperative")), Contains("workload.tile[0]") && Contains("multiple of 128"));
  REQUIRE_THROWS_WITH(load(tile("192, 8", "cooperative_columns")), Contains("workload.tile[1]") && Contains("multiple of 16"));
  REQUIRE_THROWS_WITH(load(tile("96, 128", "cooperative_columns")), Contains("workload.tile[0]") && Contains("multiple of 64"));
  REQUIRE_THROWS_WITH(load(tile("96, 128", "pingpong")), Contains("workload.tile[0]") && Contains("multiple of 64"));
  const Experiment cols = load(tile("192, 192", "cooperative_columns"));
  CHECK(cols.points[0].workload->kernels[0].mainloop == MainLoop::wgmma_tma_ws);
  CHECK(load(tile("64, 128", "pingpong")).points.size() == 1);
  REQUIRE_THROWS_WITH(load(wl + ", schedule: cooperative, mainloop: mma_sync}"), Contains("workload.mainloop"));
  REQUIRE_THROWS_WITH(load(wl + ", schedule: stream_k}"), Contains("workload.schedule"));
  REQUIRE_THROWS_WITH(load_experiment_text("arch: a100\nworkload: " + wl + ", schedule: pingpong}\n", "exp.yaml", ".", {}),
                      Contains("workload.schedule") && Contains("wgmma_tma_ws"));
}

TEST_CASE("gemm schedule: a cluster kernel's persistent grid holds whole clusters per GPC", "[gemm][sm90]") {
  // h100: 132 SMs, GPCs of at most 18 (CUTLASS's get_max_cta_occupancy): 7 full GPCs and 6 SMs.
  const std::string wl = "{kind: gemm, m: 4096, n: 4096, k: 256, tile: [128, 128, 64], schedule: cooperative";
  const auto programs = [&](const std::string& cluster) {
    return load(wl + "}", "order: {kind: cutlass_sm90, cluster: " + cluster + "}\n").points[0].workload->kernels[0].blocks.size();
  };
  CHECK(programs("[1, 1]") == 132);
  CHECK(programs("[2, 1]") == 132);  // 7 x 18 + 6
  CHECK(programs("[2, 2]") == 116);  // 7 x 16 + 4
  CHECK(programs("[4, 2]") == 112);  // 7 x 16 + 0
  CHECK(load(wl + ", cluster: [4, 2]}", "order: {kind: cutlass_sm90, cluster: [4, 2]}\n").points[0].workload->kernels[0].blocks.size() == 112);
  // A persistent count given by the workload is kept.
  CHECK(load(wl + ", persistent: 64}", "order: {kind: cutlass_sm90, cluster: [2, 2]}\n").points[0].workload->kernels[0].blocks.size() == 64);
}
