#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {
Experiment load(const std::string& workload, const std::string& extra = "") {
  return load_experiment_text("arch: h100\nworkload: " + workload + "\n" + extra, "exp.yaml", ".", {});
}
const Kernel& kernel_of(const Experiment& e) { return e.points.at(0).workload->kernels.at(0); }
}  // namespace

TEST_CASE("gemm: blocks are k-steps plus an epilogue over clipped tiles", "[gemm]") {
  const Experiment e = load("{kind: gemm, m: 256, n: 256, k: 128, tile: [128, 128, 64], stages: 2}");
  const Kernel& k = kernel_of(e);
  CHECK(k.num_blocks() == 4);
  CHECK(k.steps.size() == 4 * 3);       // 2 k-steps + epilogue
  CHECK(k.accesses.size() == 4 * 2 * 2 + 4);
  CHECK(k.total_flops == 2ull * 256 * 256 * 128);
  const Step& epi = k.steps[2];
  CHECK(epi.flops == 0);
  CHECK(k.accesses[epi.first_access].kind == AccessKind::store);
  CHECK(k.dispatch == std::vector<std::uint32_t>{0, 1, 2, 3});
}

TEST_CASE("gemm: the kernel names its block tile for the arch's measured tile ceilings", "[gemm]") {
  const Kernel& k = kernel_of(load("{kind: gemm, m: 256, n: 256, k: 128, tile: [128, 64, 64], threads: 128}"));
  CHECK(k.mma_tile_rows == 128);
  CHECK(k.mma_tile_cols == 64);
  CHECK(k.warps() == 4);
  // A gated FFN's first kernel computes two B tiles per k-step: as wide as both.
  const Experiment f = load("{kind: ffn, m: 256, d: 256, f: 512, gated: true, gemm0: {tile: [64, 64, 64]}, gemm1: {tile: [64, 64, 64]}}");
  CHECK(f.points.at(0).workload->kernels.at(0).mma_tile_cols == 128);
  CHECK(f.points.at(0).workload->kernels.at(1).mma_tile_cols == 64);
}

TEST_CASE("gemm: ragged edges load only the real rows, columns and depth", "[gemm]") {
  const Experiment e = load("{kind: gemm, m: 200, n: 136, k: 100, tile: [128, 128, 64]}");
  const Kernel& k = kernel_of(e);
  REQUIRE(k.grid_m == 2);
  REQUIRE(k.grid_n == 2);
  // Block 3 is tile (1, 1): rows 128..199 (72), cols 128..135 (8); k-step 1 covers k 64..99 (36).
  const Block& b = k.blocks[3];
  const TileAccess& a1 = k.accesses[k.steps[b.first_step + 1].first_access];
  const TileAccess& b1 = k.accesses[k.steps[b.first_step + 1].first_access + 1];
  CHECK(a1.rows == 72);
  CHECK(a1.cols == 36);
  CHECK(b1.rows == 36);
  CHECK(b1.cols == 8);
}

TEST_CASE("gemm ragged: wrap reads the rows past M and columns past N modulo M and N", "[gemm]") {
  // Triton's tutorial indexing (`offs_am % M`): a 64-row tile over M = 16 loads the rows four
  // times, one rectangle after another; tile (1, 1) of 200 x 136 reads rows 128..255 as
  // 128..199 and 0..55, and columns 128..255 as 128..135 and 0..119.
  const Experiment de = load("{kind: gemm, m: 16, n: 128, k: 128, tile: [64, 64, 64], ragged: wrap}");
  const Kernel& d = kernel_of(de);
  const Step& s0 = d.steps[0];
  REQUIRE(s0.num_accesses == 5);
  for (std::uint32_t i = 0; i < 4; ++i) {
    const TileAccess& a = d.accesses[s0.first_access + i];
    CHECK(a.tensor == 0);
    CHECK(a.row0 == 0);
    CHECK(a.rows == 16);
  }
  CHECK(d.accesses[s0.first_access + 4].tensor == 1);
  // The epilogue stores only the real rows: a wrapped tile's results past M are dropped.
  const Step& epi = d.steps[2];
  CHECK(d.accesses[epi.first_access].rows == 16);

  const Experiment ke = load("{kind: gemm, m: 200, n: 136, k: 64, tile: [128, 128, 64], ragged: wrap}");
  const Kernel& k = kernel_of(ke);
  const Step& s = k.steps[k.blocks[3].first_step];
  std::vector<std::pair<std::uint32_t, std::uint32_t>> rows, cols;
  for (std::uint32_t i = 0; i < s.num_accesses; ++i) {
    const TileAccess& a = k.accesses[s.first_access + i];
    (a.tensor == 0 ? rows : cols).push_back(a.tensor == 0 ? std::pair{a.row0, a.rows} : std::pair{a.col0, a.cols});
  }
  CHECK(rows == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{128, 72}, {0, 56}});
  CHECK(cols == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{128, 8}, {0, 120}});
  // Inner tiles and mask (the default) read one rectangle each.
  CHECK(k.steps[k.blocks[0].first_step].num_accesses == 2);
  const Experiment masked = load("{kind: gemm, m: 200, n: 136, k: 64, tile: [128, 128, 64]}");
  CHECK(kernel_of(masked).steps[3 * 2].num_accesses == 2);
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 16, n: 128, k: 128, tile: [64, 64, 64], ragged: modulo}"),
                      Contains("workload.ragged") && Contains("mask"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 256, n: 256, k: 128, tile: [128, 128, 64], cluster: [2, 1], ragged: wrap}"),
                      Contains("workload.ragged") && Contains("cluster"));
}

TEST_CASE("gemm: serial split-K slices take turns on a semaphore and reread the partial", "[gemm]") {
  const Experiment e = load("{kind: gemm, m: 256, n: 256, k: 1024, tile: [128, 128, 64], split_k: 2}");
  const Kernel& k = kernel_of(e);
  CHECK(k.grid_z == 2);
  CHECK(e.points[0].workload->num_semaphores == 4);
  const Block& s0 = k.blocks[0];
  const Block& s1 = k.blocks[4];  // z = 1, same tile
  CHECK(s0.num_steps == 8 + 1);
  const Step& e0 = k.steps[s0.first_step + s0.num_steps - 1];
  const Step& e1 = k.steps[s1.first_step + s1.num_steps - 1];
  CHECK(e0.wait_sem == kNoSem);
  CHECK(e0.post_sem == 0);
  CHECK(e1.wait_sem == 0);
  CHECK(e1.wait_value == 1);
  CHECK(e1.num_accesses == 2);  // read the partial, write it back
  CHECK(k.accesses[e1.first_access].kind == AccessKind::load);
}

TEST_CASE("gemm: W4A16 stores 4-bit weights and per-group fp16 scales", "[gemm]") {
  const Experiment e = load("{kind: gemm, m: 64, n: 4096, k: 4096, dtype: w4a16, group_size: 128, tile: [64, 128, 64]}");
  const Workload& w = *e.points[0].workload;
  REQUIRE(w.tensors.size() == 4);
  CHECK(w.tensors[1].elem_bits == 4);
  CHECK(w.tensors[2].name == "B_scales");
  CHECK(w.tensors[2].rows == 4096 / 128);
  CHECK(w.kernels[0].steps[0].num_accesses == 3);
}

TEST_CASE("gemm: W4A16's weight_pack sets the byte rectangle of a B tile", "[gemm]") {
  const std::string shape = "{kind: gemm, m: 16, n: 4096, k: 4096, dtype: w4a16, tile: [64, 64, 64]";
  const auto b_tile = [](const Experiment& e) {
    const Workload& w = *e.points[0].workload;
    const Step& st = w.kernels[0].steps[1];  // k-step 1: A (in halves under k2), B, scales
    const TileAccess* b = nullptr;
    for (std::uint32_t i = st.first_access; i < st.first_access + st.num_accesses; ++i)
      if (w.kernels[0].accesses[i].tensor == 1) b = &w.kernels[0].accesses[i];
    REQUIRE(b != nullptr);
    return std::make_pair(w.tensors[1], *b);
  };
  // n (the default): int4 [K, N], a tile 64 rows of 32 bytes.
  auto [t, a] = b_tile(load(shape + "}"));
  CHECK((t.rows == 4096 && t.elem_bits == 4 && a.row0 == 64 && a.rows == 64));
  // k2 (the project's Triton kernel): [K/2, N] bytes, 32 rows of 64 bytes from row 32.
  const Experiment k2 = load(shape + ", weight_pack: k2}");
  std::tie(t, a) = b_tile(k2);
  CHECK((t.rows == 2048 && t.elem_bits == 8 && a.row0 == 32 && a.rows == 32 && a.cols == 64));
  // Its k-slice is two dots of bk/2 (k-rows kk and kk + 32 share a byte): A loads in two halves.
  const Kernel& kk2 = kernel_of(k2);
  CHECK(kk2.steps[1].num_accesses == 4);
  CHECK((kk2.accesses[kk2.steps[1].first_access].col0 == 64 && kk2.accesses[kk2.steps[1].first_access].cols == 32));
  CHECK((kk2.accesses[kk2.steps[1].first_access + 1].col0 == 96 && kk2.accesses[kk2.steps[1].first_access + 1].cols == 32));
  // k8 (GPTQ): [K/8, N] 32-bit words, 8 rows of 256 bytes.
  std::tie(t, a) = b_tile(load(shape + ", weight_pack: k8}"));
  CHECK((t.rows == 512 && t.elem_bits == 32 && a.row0 == 8 && a.rows == 8));
  REQUIRE_THROWS_WITH(load(shape + ", weight_pack: k4}"), Contains("workload.weight_pack"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 64, n: 64, k: 64, tile: [64, 64, 64], weight_pack: k2}"),
                      Contains("workload.weight_pack") && Contains("w4a16"));
  REQUIRE_THROWS_WITH(load(shape + ", layout: {b: col}, weight_pack: k2}"), Contains("workload.weight_pack"));
}

TEST_CASE("gemm: a main loop's l2_prefetch is its loads' prefetch size", "[gemm]") {
  const std::string shape = "{kind: gemm, m: 128, n: 4096, k: 4096, tile: [128, 128, 32], mainloop: ";
  CHECK(kernel_of(load(shape + "{kind: mma_sync, l2_prefetch: 128}}")).l2_prefetch_bytes == 128);
  CHECK(kernel_of(load(shape + "{kind: mma_sync, l2_prefetch: none}}")).l2_prefetch_bytes == 0);
  CHECK(kernel_of(load(shape + "mma_sync}")).l2_prefetch_bytes == 0);
  REQUIRE_THROWS_WITH(load(shape + "{kind: mma_sync, l2_prefetch: 256}}"),
                      Contains("workload.mainloop.l2_prefetch") && Contains("128"));
  // Bulk copies (TMA) take no prefetch size.
  REQUIRE_THROWS_WITH(load(shape + "{kind: wgmma_tma_ws, l2_prefetch: 128}}"),
                      Contains("workload.mainloop.l2_prefetch") && Contains("bulk"));
}

TEST_CASE("gemm: impossible configurations are errors naming the key", "[gemm][errors]") {
  REQUIRE_THROWS_WITH(load("{kind: gemm, mm: 5, m: 64, n: 64, k: 64, tile: [64, 64, 64]}"),
                      Contains("exp.yaml: workload.mm") && Contains("unknown key"));
  // A tile taller than M is what decode kernels launch (rows past M are masked); along K a
  // tile may not exceed K padded to the MMA granularity (16 fp16 elements).
  REQUIRE_NOTHROW(load("{kind: gemm, m: 16, n: 4096, k: 4096, tile: [128, 128, 64]}"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 64, n: 64, k: 16, tile: [64, 64, 32]}"),
                      Contains("workload.tile[2]") && Contains("padded to the MMA granularity (16)"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 4096, n: 4096, k: 4096, tile: [256, 256, 128], stages: 8}"),
                      Contains("workload.stages") && Contains("exceeds h100's limit"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 0, n: 64, k: 64, tile: [64, 64, 64]}"), Contains("workload.m"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 64, n: 64, k: 128, tile: [64, 64, 64], split_k: 4}"),
                      Contains("workload.split_k"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 64, n: 64, k: 64, tile: [64, 64, 40]}"), Contains("workload.tile[2]"));
  REQUIRE_THROWS_WITH(load_experiment_text("arch: a100\nworkload: {kind: gemm, m: 128, n: 128, k: 128, dtype: fp8, tile: [128, 128, 64]}",
                                           "exp.yaml", ".", {}),
                      Contains("workload.dtype") && Contains("not supported by arch a100"));
  REQUIRE_THROWS_WITH(load("{kind: conv, m: 1}"), Contains("workload.kind"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 64, n: 64, k: 64, tile: [64, 64, 64]}", "order: {kind: grouped, group_mm: 8}"),
                      Contains("order.group_mm"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 64, n: 64, k: 64, tile: [64, 64, 64]}", "colour: blue"),
                      Contains("colour") && Contains("unknown key"));
}

TEST_CASE("sweep: a full grid, first axis slowest, every point validated first", "[gemm][sweep]") {
  const Experiment e = load("{kind: gemm, m: 256, n: 256, k: 256, tile: [128, 128, 64]}",
                            "sweep:\n  workload.m: [256, 512]\n  order: [{kind: row}, {kind: grouped, group_m: 2}]\n");
  REQUIRE(e.points.size() == 4);
  CHECK(e.points[0].label == "workload.m=256 order=row");
  CHECK(e.points[1].label == "workload.m=256 order=grouped(group_m=2)");
  CHECK(e.points[2].workload->kernels[0].grid_m == 4);
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 256, n: 256, k: 256, tile: [128, 128, 64]}",
                           "sweep:\n  workload.m: [256, 0]\n"),
                      Contains("sweep point workload.m=0") && Contains("workload.m"));
}

TEST_CASE("errors point at the line of the key, in every sweep point", "[gemm][errors]") {
  const std::string text = "arch: h100\nworkload:\n  kind: gemm\n  m: 64\n  n: 64\n  k: 64\n  tile: [64, 64, 64]\n  mm: 5\n";
  REQUIRE_THROWS_WITH(load_experiment_text(text, "exp.yaml", ".", {}), Contains("workload.mm (line 8)"));
  REQUIRE_THROWS_WITH(load_experiment_text(text + "sweep:\n  workload.k: [64, 128]\n", "exp.yaml", ".", {}),
                      Contains("workload.mm (line 8)"));
  const std::string bad_second = "arch: h100\nworkload:\n  kind: gemm\n  m: 64\n  n: 64\n  k: 64\n  tile: [64, 64, 64]\n"
                                 "sweep:\n  workload.stages: [2, 99]\n";
  REQUIRE_THROWS_WITH(load_experiment_text(bad_second, "exp.yaml", ".", {}),
                      Contains("sweep point workload.stages=99") && Contains("workload.stages"));
}

TEST_CASE("gemm: serial split-K with several slices runs the slices in turn", "[gemm]") {
  // Slice s waits for its tile's semaphore to reach s and then posts it: a chain, not a cycle.
  const Experiment e = load("{kind: gemm, m: 256, n: 256, k: 4096, tile: [128, 128, 64], split_k: 4}");
  const SimResult r = simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options);
  // Epilogues finish in slice order for every tile: compare each tile's slice end times.
  std::vector<std::vector<Time>> end(4, std::vector<Time>(4, 0));
  for (const BlockRecord& b : r.blocks) {
    const Block& blk = e.points[0].workload->kernels[0].blocks[b.block];
    end[blk.tile_m * 2 + blk.tile_n][blk.tile_z] = b.end;
  }
  for (const auto& tile : end)
    for (std::size_t s = 1; s < 4; ++s) CHECK(tile[s] > tile[s - 1]);
}

TEST_CASE("gemm: parallel split-K slices store fp32 partials that a second kernel sums", "[gemm]") {
  const Experiment e = load("{kind: gemm, m: 256, n: 256, k: 1024, tile: [128, 128, 64], split_k: 2, "
                            "split_k_mode: parallel}", "sim: {cold_l2: workload}\n");
  const Workload& w = *e.points[0].workload;
  REQUIRE(w.kernels.size() == 2);
  CHECK(w.num_semaphores == 0);
  const Kernel& g = w.kernels[0];
  const Kernel& red = w.kernels[1];
  CHECK(g.grid_z == 2);
  // A slice's epilogue stores its partial in its own z of the fp32 workspace, waiting for nobody.
  const Block& s1 = g.blocks[4];  // z = 1, tile (0, 0)
  const Step& e1 = g.steps[s1.first_step + s1.num_steps - 1];
  REQUIRE(e1.num_accesses == 1);
  CHECK((e1.wait_sem == kNoSem && e1.post_sem == kNoSem));
  const TileAccess& st = g.accesses[e1.first_access];
  CHECK((st.kind == AccessKind::store && st.batch == 1));
  CHECK(w.tensors[st.tensor].name == "C_partials");
  CHECK(w.tensors[st.tensor].elem_bits == 32);
  // The reduction: a block per output tile reads both partials, then stores C.
  REQUIRE(red.num_blocks() == 4);
  const Step& sum = red.steps[red.blocks[0].first_step];
  CHECK(sum.num_accesses == 2);
  CHECK(red.accesses[sum.first_access + 1].batch == 1);
  const Step& store = red.steps[red.blocks[0].first_step + 1];
  CHECK(w.tensors[red.accesses[store.first_access].tensor].name == "C");
  // One stream: the reduction starts after the GEMM; with the L2 warm across them the partials
  // (2 x 256 KiB) are read back from the L2, so DRAM reads are A's and B's bytes only.
  const SimResult r = simulate(w, e.points[0].arch, e.points[0].options);
  CHECK(r.kernels[1].start >= r.kernels[0].end);
  CHECK(r.total.dram_read_bytes == 2ull * (256 * 1024 + 1024 * 256));
  // The mode is a choice, only with slices; clusters need the parallel form.
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 256, n: 256, k: 1024, tile: [128, 128, 64], split_k_mode: parallel}"),
                      Contains("workload.split_k_mode") && Contains("split_k > 1"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 256, n: 256, k: 1024, tile: [128, 128, 64], split_k: 2, split_k_mode: tree}"),
                      Contains("workload.split_k_mode"));
  const std::string clustered = "{kind: gemm, m: 256, n: 256, k: 1024, tile: [128, 128, 64], split_k: 2";
  const std::string order = "order: {kind: cutlass_sm90, cluster: [2, 1]}\n";
  REQUIRE_THROWS_WITH(load(clustered + "}", order), Contains("serial split-K"));
  CHECK(load(clustered + ", split_k_mode: parallel}", order).points[0].workload->kernels.size() == 2);
}

TEST_CASE("gemm persistent: program p runs the order's tiles p, p + P, ... back to back", "[gemm]") {
  // 4 x 4 tiles of 2 k-steps (3 steps with the epilogue) in grouped(2) order, 3 programs.
  const std::string wl = "{kind: gemm, m: 512, n: 512, k: 128, tile: [128, 128, 64], stages: 2";
  const std::string order = "order: {kind: grouped, group_m: 2}\n";
  const Experiment tiles = load(wl + "}", order);
  const Experiment pers = load(wl + ", persistent: 3}", order);
  const Kernel& t = tiles.points[0].workload->kernels[0];
  const Kernel& p = pers.points[0].workload->kernels[0];
  REQUIRE(p.blocks.size() == 3);
  CHECK(p.grid_m * p.grid_n * p.grid_z == 3);
  CHECK(p.dispatch == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(p.total_flops == t.total_flops);
  // Program p's steps are those of the tiles at dispatch positions p, p + 3, ...: 6, 5, 5 tiles.
  for (std::uint32_t prog = 0; prog < 3; ++prog) {
    std::vector<TileAccess> expect;
    for (std::size_t i = prog; i < t.dispatch.size(); i += 3) {
      const Block& b = t.blocks[t.dispatch[i]];
      for (std::uint32_t s = 0; s < b.num_steps; ++s) {
        const Step& st = t.steps[b.first_step + s];
        expect.insert(expect.end(), t.accesses.begin() + st.first_access,
                      t.accesses.begin() + st.first_access + st.num_accesses);
      }
    }
    const Block& b = p.blocks[prog];
    std::vector<TileAccess> got;
    for (std::uint32_t s = 0; s < b.num_steps; ++s) {
      const Step& st = p.steps[b.first_step + s];
      got.insert(got.end(), p.accesses.begin() + st.first_access, p.accesses.begin() + st.first_access + st.num_accesses);
    }
    INFO("program " << prog);
    CHECK(got == expect);
  }
  CHECK(p.blocks[0].num_steps == 6 * 3);
  CHECK(p.blocks[1].num_steps == 5 * 3);
}

TEST_CASE("gemm persistent: with a program per tile it is the one-tile-per-block kernel", "[gemm]") {
  const std::string wl = "{kind: gemm, m: 1024, n: 1024, k: 512, tile: [128, 128, 64], stages: 3";
  const std::string order = "order: {kind: grouped, group_m: 4}\n";
  // Without the per-step noise (drawn from a step's place in the kernel's layout, which a
  // persistent kernel lays out in program order) the two are the same simulation.
  const std::string quiet = order + "arch_overrides: {sm: {step_noise_ns: 0, solo_step_noise_ns: 0}}\n";
  const Experiment tiles = load(wl + "}", quiet);
  const Experiment pers = load(wl + ", persistent: 100}", quiet);  // 64 tiles: 64 programs
  const auto run = [](const Experiment& e) { return simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options); };
  const SimResult a = run(tiles), b = run(pers);
  CHECK(a.duration == b.duration);
  CHECK(a.total == b.total);
  CHECK(b.kernels[0].launched_blocks == 64);
  // With it, they draw different noise of the same spread.
  const SimResult c = run(load(wl + "}", order)), d = run(load(wl + ", persistent: 100}", order));
  CHECK(static_cast<double>(d.duration) == Approx(static_cast<double>(c.duration)).epsilon(0.02));
  // auto: one program per resident slot; split-K is refused with the key named.
  CHECK(load(wl + ", persistent: auto}", order).points[0].workload->kernels[0].blocks.size() == 64);
  REQUIRE_THROWS_WITH(load(wl + ", split_k: 2, persistent: 8}", order), Contains("workload.persistent") && Contains("split_k"));
}

TEST_CASE("gemm persistent_overlap: false drains a program's pipeline at every tile", "[gemm]") {
  // One program over 16 tiles of 4 k-steps, no step noise. Flattened (the default), the next
  // tile's first loads are in flight while this tile finishes; drained, they wait for its
  // epilogue, so each tile pays its pipeline's fill again and the program takes longer.
  const std::string wl = "{kind: gemm, m: 512, n: 512, k: 256, tile: [128, 128, 64], persistent: 1";
  const std::string quiet = "arch_overrides: {sm: {step_noise_ns: 0}}\n";
  const auto run = [&](const std::string& extra) {
    const Experiment e = load(wl + extra + "}", quiet);
    return simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options).duration;
  };
  CHECK(load(wl + ", persistent_overlap: false}", quiet).points[0].workload->kernels[0].drain_between_tiles);
  CHECK_FALSE(load(wl + "}", quiet).points[0].workload->kernels[0].drain_between_tiles);
  CHECK(run(", stages: 3, persistent_overlap: false") > run(", stages: 3"));
  // With one stage nothing is issued ahead of the step being computed: the two are the same.
  CHECK(run(", stages: 1, persistent_overlap: false") == run(", stages: 1"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 512, n: 512, k: 256, tile: [128, 128, 64], persistent_overlap: false}", quiet),
                      Contains("workload.persistent_overlap") && Contains("persistent: P"));
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 512, n: 512, k: 256, tile: [128, 128, 64], persistent: 4, "
                           "persistent_overlap: false, stream_k: {mode: stream_k}}",
                           quiet + "order: {kind: cutlass_sm90}\n"),
                      Contains("workload.persistent_overlap") && Contains("stream-K"));
}

TEST_CASE("gemm persistent: CUTLASS 3's padded tiles cost MMA steps and no memory", "[gemm]") {
  // 3 x 5 tiles of 2 k-steps; max_swizzle 2 rounds the grid to 4 x 6: 9 padded units.
  const std::string wl = "{kind: gemm, m: 384, n: 640, k: 128, tile: [128, 128, 64], stages: 2, persistent: 4}";
  const Experiment e = load(wl, "order: {kind: cutlass_sm90, raster: m, max_swizzle: 2}\n");
  const Kernel& k = e.points[0].workload->kernels[0];
  REQUIRE(k.blocks.size() == 4);
  std::uint64_t flops = 0;
  std::size_t padded_steps = 0, epilogues = 0;
  for (const Step& s : k.steps) {
    flops += s.flops;
    if (s.flops && s.num_accesses == 0) ++padded_steps;
    if (!s.flops) ++epilogues;
  }
  CHECK(epilogues == 15);                    // one store per real tile
  CHECK(padded_steps == 9 * 2);              // two k-steps per padded unit, no loads
  CHECK(flops == 24ull * 2 * 2 * 128 * 128 * 64);  // every unit's MMA, padded or not
  // Steps and accesses are laid out in program order, each step's accesses after the last's.
  std::uint32_t next = 0;
  for (const Step& s : k.steps) {
    CHECK(s.first_access == next);
    next += s.num_accesses;
  }
  CHECK(next == k.accesses.size());
  CHECK(k.accesses.size() == 15 * (2 * 2 + 1));  // real tiles' loads and stores, none for pads
  // Position 6 of the sequence is padded (3, 0): it is program 2's second unit.
  const Block& p2 = k.blocks[2];
  CHECK(k.steps[p2.first_step + 3].num_accesses == 0);
  CHECK(k.steps[p2.first_step + 3].flops > 0);
  const auto r = simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options);
  CHECK(r.duration > 0);
}

TEST_CASE("gemm and attention too large for memory are refused before allocating (issue 17, D12)", "[gemm][errors]") {
  // m = n = 4194304 (in the documented range) with 128x128 tiles: 2^30 blocks, about 160 GiB of
  // workload arrays. It used to end in std::bad_alloc (exit 1); now one error names the file and
  // what it needs, whatever the machine (every CI machine has far less than 160 GiB).
  REQUIRE_THROWS_WITH(load("{kind: gemm, m: 4194304, n: 4194304, k: 64, tile: [128, 128, 64]}"),
                      Contains("exp.yaml: workload: this GEMM") && Contains("1073741824 blocks") &&
                          Contains("MemAvailable") && Contains("reduce m, n, k"));
  // 64 x 4096 heads x 4M tokens of fused attention: the same, with attention's advice (a fused
  // kernel this large generates its programs when dispatched, but its 2^33 blocks alone do not fit).
  REQUIRE_THROWS_WITH(load("{kind: attention, seq_q: 4194304, batch: 64, heads: 4096, kv_heads: 4096, head_dim: 128}"),
                      Contains("exp.yaml: workload: this attention kernel") && Contains("reduce seq_q"));
  // A size that fits is not affected.
  CHECK_NOTHROW(load("{kind: gemm, m: 1024, n: 1024, k: 1024, tile: [128, 128, 64]}"));
}
