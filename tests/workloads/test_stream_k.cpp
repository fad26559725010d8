// CUTLASS 3 stream-K: the decomposition against what CUTLASS's scheduler printed on the H100
// (calibration/measurements/h100/streamk/README.md) and against a Python transcription of the
// scheduler (worked examples in docs/stream_k.md), its coverage on many shapes, and the kernel
// built from it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "workloads/stream_k.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

StreamKPlan plan(std::uint32_t tm, std::uint32_t tn, std::uint32_t kt, std::uint32_t programs, bool along_m,
                 StreamKMode mode, std::uint32_t splits = 1) {
  return plan_stream_k({tm, tn, kt, programs, along_m, mode, splits});
}

std::vector<StreamKUnit> units(std::initializer_list<std::array<std::uint32_t, 3>> list) {
  std::vector<StreamKUnit> out;
  for (const auto& u : list) out.push_back({u[0], u[1], u[2]});
  return out;
}

Experiment load(const std::string& workload, const std::string& order = "{kind: cutlass_sm90}") {
  return load_experiment_text("arch: h100\nworkload: " + workload + "\norder: " + order + "\n", "exp.yaml", ".", {});
}

}  // namespace

TEST_CASE("stream-K: the decomposition CUTLASS chose on the H100", "[stream_k]") {
  // 1536^2 x 16384, 128x128x64 tiles: 12 x 12 tiles of 256 k-tiles on 132 programs, raster N.
  const StreamKPlan h = plan(12, 12, 256, 132, false, StreamKMode::heuristic);
  CHECK(h.mode == StreamKMode::stream_k);
  CHECK(h.sk_tiles == 144);
  CHECK(h.sk_units == 132);
  CHECK(h.groups == 6);
  CHECK(h.k_tiles_per_sk_unit == 279);
  CHECK(h.big_units == 72);
  CHECK(h.big_groups == 0);
  const StreamKPlan s = plan(12, 12, 256, 132, false, StreamKMode::stream_k);
  CHECK((s.sk_tiles == 144 && s.sk_units == 132 && s.groups == 6 && s.k_tiles_per_sk_unit == 279));
  const StreamKPlan k2 = plan(12, 12, 256, 132, false, StreamKMode::split_k, 2);
  CHECK((k2.mode == StreamKMode::split_k && k2.splits == 2 && k2.k_tiles_per_sk_unit == 128 && k2.sk_units == 0));
  const StreamKPlan dp = plan(12, 12, 256, 132, false, StreamKMode::data_parallel);
  CHECK((dp.mode == StreamKMode::data_parallel && dp.sk_tiles == 0 && dp.k_tiles_per_sk_unit == 256));
  for (std::uint32_t programs : {66u, 128u, 131u}) CHECK(plan(12, 12, 256, programs, false, StreamKMode::stream_k).sk_units == programs);
  // 4224^2 x 4096: 33 x 33 tiles of 64 k-tiles.
  const StreamKPlan b = plan(33, 33, 64, 132, false, StreamKMode::stream_k);
  CHECK((b.sk_tiles == 165 && b.sk_units == 132 && b.groups == 3 && b.k_tiles_per_sk_unit == 80));
}

TEST_CASE("stream-K: pieces as the Python transcription of the scheduler gives them", "[stream_k]") {
  // 4096^3: 32 x 32 tiles, forced stream-K: the last full wave and the tail (232 tiles) on 132
  // units in 4 groups; program 0 stores the first 49 k-tiles of tile 4, computes tile 0 whole,
  // then data-parallel tiles 232, 364, ...; program 4 finishes tile 4.
  const StreamKPlan a = plan(32, 32, 64, 132, false, StreamKMode::stream_k);
  CHECK((a.sk_tiles == 232 && a.groups == 4 && a.k_tiles_per_sk_unit == 112 && a.big_units == 16));
  CHECK(std::vector<StreamKUnit>(a.programs[0].begin(), a.programs[0].begin() + 4) ==
        units({{4, 0, 49}, {0, 0, 64}, {232, 0, 64}, {364, 0, 64}}));
  CHECK(std::vector<StreamKUnit>(a.programs[4].begin(), a.programs[4].begin() + 4) ==
        units({{12, 0, 34}, {8, 0, 64}, {4, 49, 64}, {236, 0, 64}}));
  // 3 x 5 tiles, 16 k-tiles, 4 programs, raster M: only tile 3 is split.
  const StreamKPlan c = plan(3, 5, 16, 4, true, StreamKMode::stream_k);
  CHECK((c.sk_tiles == 7 && c.sk_units == 4 && c.groups == 2 && c.big_groups == 1));
  CHECK(c.programs[0] == units({{2, 0, 16}, {0, 0, 16}, {7, 0, 16}, {11, 0, 16}}));
  CHECK(c.programs[1] == units({{3, 0, 8}, {1, 0, 16}, {8, 0, 16}, {12, 0, 16}}));
  CHECK(c.programs[2] == units({{6, 0, 16}, {4, 0, 16}, {9, 0, 16}, {13, 0, 16}}));
  CHECK(c.programs[3] == units({{5, 0, 16}, {3, 8, 16}, {10, 0, 16}, {14, 0, 16}}));
  // 1 x 2 tiles, 64 k-tiles: the heuristic splits every tile 8 ways (16 units on 16 programs).
  const StreamKPlan d = plan(1, 2, 64, 132, false, StreamKMode::heuristic);
  CHECK((d.mode == StreamKMode::split_k && d.splits == 8));
  for (std::uint32_t p = 0; p < 132; ++p) CHECK(d.programs[p].size() == (p < 16 ? 1u : 0u));
  CHECK(d.programs[1] == units({{1, 0, 8}}));
  CHECK(d.programs[2] == units({{0, 8, 16}}));
  // 1536^2 x 16384: the first and last programs.
  const StreamKPlan e = plan(12, 12, 256, 132, false, StreamKMode::heuristic);
  CHECK(e.programs[0] == units({{6, 0, 24}, {0, 0, 256}}));
  CHECK(e.programs[131] == units({{143, 0, 256}, {137, 233, 256}}));
}

TEST_CASE("stream-K: every k-tile of every tile exactly once, for any shape and mode", "[stream_k]") {
  for (StreamKMode mode : {StreamKMode::heuristic, StreamKMode::stream_k, StreamKMode::split_k, StreamKMode::data_parallel})
    for (std::uint32_t programs : {4u, 16u, 132u})
      for (std::uint32_t kt : {1u, 9u, 16u, 47u, 64u})
        for (std::uint32_t tm = 1; tm <= 23; tm += 2)
          for (std::uint32_t tn = 1; tn <= 23; tn += 3) {
            INFO("mode " << stream_k_mode_name(mode) << " programs " << programs << " kt " << kt << " grid " << tm << "x" << tn);
            const StreamKPlan p = plan(tm, tn, kt, programs, tn > tm, mode, mode == StreamKMode::split_k ? 3 : 1);
            std::vector<int> seen(std::size_t{tm} * tn * kt, 0);
            bool in_range = true;
            for (const auto& prog : p.programs)
              for (const StreamKUnit& u : prog) {
                in_range = in_range && u.tile < tm * tn && u.k_begin < u.k_end && u.k_end <= kt;
                if (!in_range) break;
                for (std::uint32_t k = u.k_begin; k < u.k_end; ++k) ++seen[std::size_t{u.tile} * kt + k];
              }
            REQUIRE(in_range);
            REQUIRE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
          }
}

TEST_CASE("stream-K kernel: partials meet in a workspace in k order", "[stream_k]") {
  const std::string wl = "{kind: gemm, m: 384, n: 640, k: 1024, tile: [128, 128, 64], persistent: 4, "
                         "stream_k: {mode: stream_k";
  const Experiment e = load(wl + "}}", "{kind: cutlass_sm90, raster: m}");
  const Workload& w = *e.points[0].workload;
  const Kernel& k = w.kernels[0];
  REQUIRE(k.blocks.size() == 4);
  CHECK(w.num_semaphores == 1);  // tile 3 = (0, 1) is the one split tile
  CHECK(w.tensors.back().name == "gemm.workspace");
  CHECK(w.tensors.back().elem_bits == 32);
  std::uint64_t flops = 0, c_stores = 0;
  std::size_t waits = 0, posts = 0;
  for (const Step& s : k.steps) {
    flops += s.flops;
    waits += s.wait_sem != kNoSem;
    posts += s.post_sem != kNoSem;
    for (std::uint32_t i = 0; i < s.num_accesses; ++i) {
      const TileAccess& a = k.accesses[s.first_access + i];
      if (a.kind == AccessKind::store && a.tensor == 2) ++c_stores;
    }
  }
  CHECK(flops == 15ull * 16 * 2 * 128 * 128 * 64);
  CHECK(c_stores == 15);  // one epilogue per tile
  CHECK(waits == 1);      // the final piece of tile 3 waits for the first
  CHECK(posts == 1);
  const auto r = simulate(w, e.points[0].arch, e.points[0].options);
  CHECK(r.duration > 0);
  // Nondeterministic runs too; the heuristic keeps this grid data-parallel (its tail is long).
  CHECK(simulate(*load(wl + ", reduction: nondeterministic}}", "{kind: cutlass_sm90, raster: m}").points[0].workload, e.points[0].arch,
                 e.points[0].options).duration > 0);
  CHECK(load("{kind: gemm, m: 384, n: 640, k: 1024, tile: [128, 128, 64], persistent: 4, stream_k: {}}",
             "{kind: cutlass_sm90, raster: m}").points[0].workload->num_semaphores == 0);
}

TEST_CASE("stream-K: configurations CUTLASS cannot run are errors naming the key", "[stream_k][errors]") {
  const std::string wl = "{kind: gemm, m: 1024, n: 1024, k: 1024, tile: [128, 128, 64]";
  REQUIRE_THROWS_WITH(load(wl + ", stream_k: {}}", "{kind: grouped, group_m: 8}"),
                      Contains("workload.stream_k") && Contains("cutlass_sm90"));
  REQUIRE_THROWS_WITH(load(wl + ", schedule: pingpong, stream_k: {}}"), Contains("workload.schedule") && Contains("cooperative"));
  REQUIRE_THROWS_WITH(load(wl + ", stream_k: {mode: stream_k, splits: 2}}"), Contains("workload.stream_k.splits"));
  REQUIRE_THROWS_WITH(load(wl + ", split_k: 2, stream_k: {}}"), Contains("workload.stream_k") && Contains("split_k"));
  REQUIRE_THROWS_WITH(load(wl + ", stream_k: {mode: fast}}"), Contains("workload.stream_k.mode"));
  REQUIRE_THROWS_WITH(load(wl + ", stream_k: {}}", "{kind: cutlass_sm90, cluster: [2, 1]}"), Contains("cluster"));
  REQUIRE_THROWS_WITH(load_experiment_text("arch: a100\nworkload: " + wl + ", stream_k: {}}\norder: {kind: cutlass_sm90}\n",
                                           "exp.yaml", ".", {}),
                      Contains("workload.stream_k") && Contains("wgmma_tma_ws"));
}
