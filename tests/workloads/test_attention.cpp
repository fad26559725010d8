// The attention generator: block/step structure (fused, unfused, split-KV), causal skipping,
// GQA K/V sharing, config errors, and an end-to-end run where fusion saves DRAM reads.
#include <catch2/catch.hpp>

#include <numeric>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/core/simulator.hpp"
#include "sim/report/waves.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

Experiment load(const std::string& workload, const std::string& extra = "", const std::string& arch = "h100") {
  return load_experiment_text("arch: " + arch + "\nworkload: " + workload + "\n" + extra, "exp.yaml", ".", {});
}
/// A copy, so that `const Workload& w = workload_of(load(...))` outlives the experiment.
Workload workload_of(const Experiment& e) { return *e.points.at(0).workload; }

std::uint32_t tensor_id(const Workload& w, const std::string& name) {
  for (std::uint32_t i = 0; i < w.tensors.size(); ++i)
    if (w.tensors[i].name == name) return i;
  FAIL("no tensor " << name);
  return 0;
}

std::uint64_t step_flops(const Kernel& k) {
  return std::accumulate(k.steps.begin(), k.steps.end(), std::uint64_t{0},
                         [](std::uint64_t s, const Step& st) { return s + st.flops; });
}

/// The accesses of block b's step i.
std::vector<TileAccess> accesses_of(const Kernel& k, std::uint32_t b, std::uint32_t i) {
  const Step& s = k.steps.at(k.blocks.at(b).first_step + i);
  return {k.accesses.begin() + s.first_access, k.accesses.begin() + s.first_access + s.num_accesses};
}

// 2 query heads sharing 1 KV head, 256 x 256, D = 64: 2 Q tiles of 128, 4 KV tiles of 64.
const std::string kSmallFused =
    "{kind: attention, heads: 2, kv_heads: 1, seq_q: 256, head_dim: 64, block_q: 128, block_kv: 64, stages: 2";
const std::string kSmallUnfused =
    "{kind: attention, form: unfused, heads: 2, kv_heads: 1, seq_q: 256, head_dim: 64, "
    "qk: {tile: [128, 64, 64]}, pv: {tile: [128, 64, 64]}, softmax: {rows: 64, chunk: 128}";

}  // namespace

TEST_CASE("attention fused: Q step, a K and a V step per KV tile, an O step", "[attention]") {
  const Workload& w = workload_of(load(kSmallFused + "}"));
  REQUIRE(w.kernels.size() == 1);
  const Kernel& k = w.kernels[0];
  CHECK(k.name == "attention");
  CHECK(k.grid_m == 2);  // Q tiles
  CHECK(k.grid_n == 2);  // batch x heads
  CHECK(k.grid_z == 1);
  CHECK(k.num_blocks() == 4);
  CHECK(k.steps.size() == 4 * (1 + 2 * 4 + 1));
  CHECK(k.accesses.size() == 4 * 10);
  CHECK(k.stages == 4);  // 2 stages of a K and a V step
  CHECK(k.resources.smem_bytes == 2 * (64 * 64 * 2 + 64 * 64 * 2) + 128 * 64 * 2);
  CHECK(k.total_flops == 4ull * 256 * 256 * 64 * 2);
  CHECK(step_flops(k) == k.total_flops);  // no padding, no mask
  CHECK(k.steps[1].flops == 2ull * 128 * 64 * 64);

  // Block 3 is Q tile 1 of head 1: Q rows 128..255, KV tile 2 = rows 128..191, O rows 128..255.
  const Block& b = k.blocks[3];
  CHECK(b.tile_m == 1);
  CHECK(b.tile_n == 1);
  const std::uint32_t Q = tensor_id(w, "Q"), K = tensor_id(w, "K"), V = tensor_id(w, "V"), O = tensor_id(w, "O");
  CHECK(accesses_of(k, 3, 0) == std::vector<TileAccess>{{Q, 1, 128, 0, 128, 64, AccessKind::load}});
  CHECK(accesses_of(k, 3, 5) == std::vector<TileAccess>{{K, 0, 128, 0, 64, 64, AccessKind::load}});
  CHECK(accesses_of(k, 3, 6) == std::vector<TileAccess>{{V, 0, 128, 0, 64, 64, AccessKind::load}});
  CHECK(accesses_of(k, 3, 9) == std::vector<TileAccess>{{O, 1, 128, 0, 128, 64, AccessKind::store}});
  CHECK(w.tensors.size() == 4);
  CHECK(w.tensors[K].batch == 1);
  CHECK(w.tensors[Q].batch == 2);

  // Default tiles shrink to the arch's shared memory: rtx4090 has 99 KiB per block, so
  // 128 x 128 with 2 stages (160 KiB at D = 128) becomes 128 x 64 with 2 stages (96 KiB).
  const Workload& r = workload_of(load("{kind: attention, heads: 2, seq_q: 1024, head_dim: 128}", "", "rtx4090"));
  CHECK(r.kernels[0].resources.smem_bytes == 2 * 2 * 64 * 128 * 2 + 128 * 128 * 2);
  CHECK(r.kernels[0].stages == 4);
  CHECK(accesses_of(r.kernels[0], 0, 1)[0].rows == 64);
  REQUIRE_THROWS_WITH(load("{kind: attention, heads: 2, seq_q: 1024, head_dim: 128, block_kv: 128, stages: 2}", "", "rtx4090"),
                      Contains("workload.stages") && Contains("exceeds rtx4090's limit"));
}

TEST_CASE("attention fused causal: KV tiles past the diagonal are skipped, partial tiles count whole", "[attention]") {
  const Workload& w = workload_of(load(kSmallFused + ", causal: true}"));
  const Kernel& k = w.kernels[0];
  // Q tile 0 (rows 0..127) sees keys 0..127: 2 KV tiles; Q tile 1 sees all 4.
  CHECK(k.blocks[0].num_steps == 1 + 2 * 2 + 1);
  CHECK(k.blocks[1].num_steps == 1 + 2 * 2 + 1);
  // Q tile 1's tiles 2 and 3 cross the diagonal: Triton's kernel (the h100's default main loop)
  // runs them in a loop of their own, whose pipeline restarts (an empty step before tile 2).
  CHECK(k.blocks[2].num_steps == 1 + 2 * 4 + 1 + 1);
  CHECK(k.steps.size() == 2 * (6 + 11));
  const Step& marker = k.steps[k.blocks[2].first_step + 1 + 2 * 2];
  CHECK(marker.restarts_pipeline());
  CHECK(k.steps[k.blocks[2].first_step + 1 + 2 * 2 + 1].flops > 0);
  for (std::uint32_t b : {0u, 1u})  // Q tile 0 has only masked tiles: one loop, no restart
    for (std::uint32_t i = 0; i < k.blocks[b].num_steps; ++i) CHECK(!k.steps[k.blocks[b].first_step + i].restarts_pipeline());
  // One pipeline for every tile: `masked_loop: shared` (the default of the other main loops).
  const Workload& shared = workload_of(load(kSmallFused + ", causal: true, masked_loop: shared}"));
  CHECK(shared.kernels[0].steps.size() == 2 * (6 + 10));
  CHECK(workload_of(load(kSmallFused + ", causal: true, mainloop: wgmma_tma_ws}")).kernels[0].steps.size() == 2 * (6 + 10));
  REQUIRE_THROWS_WITH(load(kSmallFused + ", causal: true, masked_loop: twice}"), Contains("workload.masked_loop"));
  // Useful FLOP: 4 D per unmasked pair, 256 * 257 / 2 pairs per head.
  CHECK(k.total_flops == 4ull * 64 * (256 * 257 / 2) * 2);
  // Computed: whole tiles, (2 + 4) KV tiles x 2 MMA steps per head.
  CHECK(step_flops(k) == 2ull * (2 + 4) * 2 * (2ull * 128 * 64 * 64));
}

TEST_CASE("attention unfused: QK^T GEMM, softmax, PV GEMM on one stream", "[attention]") {
  const Workload& w = workload_of(load(kSmallUnfused + "}"));
  REQUIRE(w.kernels.size() == 3);
  const Kernel &qk = w.kernels[0], &sm = w.kernels[1], &pv = w.kernels[2];
  CHECK(qk.name == "qk");
  CHECK(sm.name == "softmax");
  CHECK(pv.name == "pv");
  for (const Kernel& k : w.kernels) CHECK(k.stream == 0);
  std::vector<std::string> names;
  for (const Tensor& t : w.tensors) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"Q", "K", "V", "S", "P", "O"});
  CHECK(w.tensors[tensor_id(w, "S")].rows == 256);
  CHECK(w.tensors[tensor_id(w, "S")].cols == 256);
  CHECK(w.tensors[tensor_id(w, "S")].elem_bits == 16);

  // QK: 2 x 4 tiles x 2 heads, one k-step (D = 64) + epilogue each.
  CHECK(qk.grid_m == 2);
  CHECK(qk.grid_n == 4);
  CHECK(qk.grid_z == 2);
  CHECK(qk.steps.size() == 16 * 2);
  CHECK(qk.total_flops == 2ull * 256 * 256 * 64 * 2);
  // K^T is read as [kv rows x d] rectangles of K: block 1 is tile (0, 1) -> kv rows 64..127.
  const std::uint32_t K = tensor_id(w, "K");
  CHECK(accesses_of(qk, 1, 0)[1] == TileAccess{K, 0, 64, 0, 64, 64, AccessKind::load});
  // Softmax: 64-row tiles, 2 chunks of 128 columns; 32 KiB rows fit 48 KiB: one pass.
  CHECK(sm.grid_m == 4);
  CHECK(sm.grid_z == 2);
  CHECK(sm.steps.size() == 8 * (2 + 2));
  CHECK(sm.stages == 2);
  CHECK(sm.resources.smem_bytes == 64 * 256 * 2);
  CHECK(sm.compute_dtype == Dtype::fp32);
  CHECK(accesses_of(sm, 0, 1) == std::vector<TileAccess>{{tensor_id(w, "S"), 0, 0, 128, 64, 128, AccessKind::load}});
  CHECK(accesses_of(sm, 0, 2) == std::vector<TileAccess>{{tensor_id(w, "P"), 0, 0, 0, 64, 128, AccessKind::store}});
  // PV: 2 x 1 tiles x 2 heads, 4 k-steps + epilogue.
  CHECK(pv.num_blocks() == 4);
  CHECK(pv.steps.size() == 4 * 5);
  CHECK(accesses_of(pv, 0, 3)[1] == TileAccess{tensor_id(w, "V"), 0, 192, 0, 64, 64, AccessKind::load});

  SECTION("two-pass softmax when the row tile does not fit") {
    const Workload& w2 = workload_of(load(
        "{kind: attention, form: unfused, heads: 2, kv_heads: 1, seq_q: 256, head_dim: 64, "
        "softmax: {rows: 64, chunk: 128, stages: 3, single_pass_bytes: 16384}}"));
    const Kernel& s2 = w2.kernels[1];
    CHECK(s2.steps.size() == 8 * (2 + 2));
    CHECK(s2.stages == 3);
    CHECK(s2.resources.smem_bytes == 3 * 64 * 128 * 2);
    const auto second = accesses_of(s2, 0, 2);  // pass 2, chunk 0: reload S, store P
    REQUIRE(second.size() == 2);
    CHECK(second[0].kind == AccessKind::load);
    CHECK(second[1].kind == AccessKind::store);
    CHECK(accesses_of(s2, 0, 0).size() == 1);
  }
}

TEST_CASE("attention unfused causal: masked S tiles exit at once, softmax and PV stop at the diagonal", "[attention]") {
  const Workload& w = workload_of(load(kSmallUnfused + ", causal: true}"));
  const Kernel &qk = w.kernels[0], &sm = w.kernels[1], &pv = w.kernels[2];
  // QK: Q tile 0 sees keys 0..127, so its S tiles 2 and 3 are empty blocks; still 16 blocks.
  CHECK(qk.num_blocks() == 16);
  CHECK(qk.blocks[2].num_steps == 0);
  CHECK(qk.blocks[3].num_steps == 0);
  CHECK(qk.blocks[1].num_steps == 2);
  CHECK(qk.steps.size() == 2 * 6 * 2);
  // Softmax row tiles of 64: visible 64, 128, 192, 256 columns -> 1, 1, 2, 2 chunks, x 2 steps.
  CHECK(sm.blocks[0].num_steps == 2);
  CHECK(sm.blocks[1].num_steps == 2);
  CHECK(sm.blocks[2].num_steps == 4);
  CHECK(sm.steps.size() == 2 * 12);
  CHECK(accesses_of(sm, 0, 0)[0].cols == 64);  // clipped to the visible columns
  // PV: Q tile 0 needs P/V k-tiles 0..1, Q tile 1 all 4.
  CHECK(pv.blocks[0].num_steps == 2 + 1);
  CHECK(pv.blocks[1].num_steps == 4 + 1);
  CHECK(pv.total_flops == 2ull * 64 * (256 * 257 / 2) * 2);
}

TEST_CASE("attention GQA: the query heads of a group read the same K/V rectangles", "[attention]") {
  // 4 query heads, 2 KV heads: heads 0, 1 use KV head 0, heads 2, 3 KV head 1.
  const Workload& w = workload_of(load(
      "{kind: attention, heads: 4, kv_heads: 2, seq_q: 256, head_dim: 64, block_q: 128, block_kv: 64}"));
  const Kernel& k = w.kernels[0];
  const std::uint32_t K = tensor_id(w, "K");
  CHECK(w.tensors[K].batch == 2);
  CHECK(w.tensors[tensor_id(w, "V")].batch == 2);
  // Blocks 0..3 are Q tile 0 of heads 0..3; step 1 loads KV tile 0's K.
  const TileAccess h0 = accesses_of(k, 0, 1)[0], h1 = accesses_of(k, 1, 1)[0], h2 = accesses_of(k, 2, 1)[0];
  CHECK(h0.tensor == K);
  CHECK(h0 == h1);
  CHECK(h2.batch == 1);
  CHECK(h2 != h0);

  const Workload& u = workload_of(load(
      "{kind: attention, form: unfused, heads: 4, kv_heads: 2, seq_q: 256, head_dim: 64}"));
  const Kernel& qk = u.kernels[0];
  const std::uint32_t per_head = qk.grid_m * qk.grid_n;
  CHECK(accesses_of(qk, 0, 0)[1] == accesses_of(qk, per_head, 0)[1]);          // heads 0 and 1
  CHECK(accesses_of(qk, 0, 0)[1] != accesses_of(qk, 2 * per_head, 0)[1]);      // head 2
  CHECK(accesses_of(qk, 0, 0)[0] != accesses_of(qk, per_head, 0)[0]);          // own Q
}

TEST_CASE("attention split-KV: partials and LSE, then a combine kernel on the same stream", "[attention]") {
  // Decode: 1 query row, 512 keys in 8 tiles of 64, 4 splits of 2 tiles; block_q is 64 on h100.
  const Workload& w = workload_of(load(
      "{kind: attention, heads: 2, seq_q: 1, seq_kv: 512, head_dim: 64, block_kv: 64, split_kv: 4}"));
  REQUIRE(w.kernels.size() == 2);
  const Kernel &a = w.kernels[0], &c = w.kernels[1];
  CHECK(a.name == "attention_split");
  CHECK(c.name == "attention_combine");
  CHECK(a.stream == c.stream);
  const Tensor& op = w.tensors[tensor_id(w, "O_partial")];
  const Tensor& lse = w.tensors[tensor_id(w, "LSE")];
  CHECK(op.batch == 4 * 2);
  CHECK(op.rows == 1);
  CHECK(op.elem_bits == 32);
  CHECK(lse.rows == 4 * 2);
  CHECK(lse.cols == 1);
  CHECK(a.grid_m == 1);
  CHECK(a.grid_n == 2);
  CHECK(a.grid_z == 4);
  CHECK(a.steps.size() == 8 * (1 + 2 * 2 + 1));
  CHECK(a.resources.smem_bytes == 2 * 2 * 64 * 64 * 2 + 64 * 64 * 2);
  // Block of split 2, head 1 (index 2 * 2 + 1): KV tiles 4, 5; stores its partial and LSE.
  CHECK(accesses_of(a, 5, 1)[0].row0 == 4 * 64);
  CHECK(accesses_of(a, 5, 5) == std::vector<TileAccess>{{tensor_id(w, "O_partial"), 2 * 2 + 1, 0, 0, 1, 64, AccessKind::store},
                                                        {tensor_id(w, "LSE"), 0, 2 * 2 + 1, 0, 1, 1, AccessKind::store}});
  // Combine: per output tile, the 4 LSE rows, the 4 partials, then O.
  CHECK(c.num_blocks() == 2);
  CHECK(c.steps.size() == 2 * (1 + 4 + 1));
  CHECK(accesses_of(c, 1, 0).size() == 4);
  CHECK(accesses_of(c, 1, 3) == std::vector<TileAccess>{{tensor_id(w, "O_partial"), 2 * 2 + 1, 0, 0, 1, 64, AccessKind::load}});
  CHECK(accesses_of(c, 1, 5) == std::vector<TileAccess>{{tensor_id(w, "O"), 1, 0, 0, 1, 64, AccessKind::store}});
  CHECK(c.stages == 5);

  SECTION("causal: a split wholly past the diagonal only writes its partial") {
    const Workload& wc = workload_of(load(
        "{kind: attention, heads: 1, seq_q: 256, head_dim: 64, block_q: 64, block_kv: 64, split_kv: 4, causal: true}"));
    const Kernel& k = wc.kernels[0];
    // Q tile 0 sees KV tile 0 only: split 0 has it, splits 1..3 are empty.
    CHECK(k.blocks[0].num_steps == 1 + 2 + 1);
    const std::uint32_t per_split = k.grid_m * k.grid_n;
    CHECK(k.blocks[per_split].num_steps == 1);
    CHECK(accesses_of(k, per_split, 0).size() == 2);
    CHECK(k.blocks[3 * per_split + 3].num_steps == 1 + 2 + 1);  // Q tile 3, split 3: KV tile 3
  }
}

TEST_CASE("attention: every launch order orders the tile grids, a GEMM may have its own", "[attention]") {
  for (const char* o : {"{kind: row}", "{kind: column}", "{kind: swizzle, log_tile: 2}", "{kind: grouped, group_m: 2}",
                        "{kind: hilbert}"}) {
    CAPTURE(o);
    // load() validates the workload: every dispatch order is a permutation of its blocks.
    CHECK_NOTHROW(load(kSmallFused + ", causal: true}", std::string("order: ") + o));
    CHECK_NOTHROW(load(kSmallUnfused + ", causal: true}", std::string("order: ") + o));
    CHECK_NOTHROW(load("{kind: attention, heads: 2, seq_q: 1, seq_kv: 512, head_dim: 64, split_kv: 4}",
                       std::string("order: ") + o));
  }
  const Workload& w = workload_of(load(
      "{kind: attention, form: unfused, heads: 2, kv_heads: 1, seq_q: 256, head_dim: 64, "
      "qk: {tile: [128, 64, 64], order: {kind: column}}, pv: {tile: [128, 64, 64]}}"));
  // qk in column order: position 1 is tile (1, 0) = block 4; pv keeps the row order.
  CHECK(w.kernels[0].dispatch[1] == 4);
  CHECK(w.kernels[2].dispatch[1] == 1);
  // The fused grid is Q tiles x heads: column order runs a head's Q tiles together.
  const Workload& f = workload_of(load(kSmallFused + "}", "order: {kind: column}"));
  CHECK(f.kernels[0].dispatch == std::vector<std::uint32_t>{0, 2, 1, 3});
}

TEST_CASE("attention: bad keys and values are errors naming the path", "[attention][errors]") {
  const std::string base = "kind: attention, heads: 32, seq_q: 256, head_dim: 128";
  REQUIRE_THROWS_WITH(load("{" + base + ", kv_heads: 3}"),
                      Contains("exp.yaml: workload.kv_heads") && Contains("does not divide heads 32"));
  REQUIRE_THROWS_WITH(load("{" + base + ", form: sparse}"), Contains("workload.form") && Contains("unfused, fused"));
  REQUIRE_THROWS_WITH(load("{" + base + ", form: unfused, split_kv: 2}"),
                      Contains("workload.split_kv") && Contains("only meaningful with form: fused"));
  REQUIRE_THROWS_WITH(load("{" + base + ", form: unfused, block_q: 64}"), Contains("workload.block_q"));
  REQUIRE_THROWS_WITH(load("{" + base + ", softmax: {rows: 8}}"),
                      Contains("workload.softmax") && Contains("only meaningful with form: unfused"));
  REQUIRE_THROWS_WITH(load("{" + base + ", heads_kv: 8}"), Contains("workload.heads_kv") && Contains("unknown key"));
  REQUIRE_THROWS_WITH(load("{" + base + ", form: unfused, qk: {split_k: 2}}"),
                      Contains("workload.qk.split_k") && Contains("unknown key"));
  REQUIRE_THROWS_WITH(load("{" + base + ", form: unfused, softmax: {rowz: 2}}"),
                      Contains("workload.softmax.rowz") && Contains("unknown key"));
  REQUIRE_THROWS_WITH(load("{" + base + ", seq_kv: 128, causal: true}"),
                      Contains("workload.causal") && Contains("seq_kv >= seq_q"));
  REQUIRE_THROWS_WITH(load("{" + base + ", block_q: 40}"), Contains("workload.block_q") && Contains("multiple of 16"));
  REQUIRE_THROWS_WITH(load("{kind: attention, heads: 8, seq_q: 1, seq_kv: 4096, head_dim: 128, block_q: 128}"),
                      Contains("workload.block_q") && Contains("padded to the MMA granularity (64)"));
  REQUIRE_THROWS_WITH(load("{" + base + ", block_kv: 24}"), Contains("workload.block_kv") && Contains("multiple of 16"));
  REQUIRE_THROWS_WITH(load("{" + base + ", split_kv: 3}"),
                      Contains("workload.split_kv") && Contains("exceeds the 2 KV tiles"));
  REQUIRE_THROWS_WITH(load("{" + base + ", stages: 8, block_kv: 256}"),
                      Contains("workload.stages") && Contains("exceeds h100's limit"));
  REQUIRE_THROWS_WITH(load("{kind: attention, heads: 32, seq_q: 256, head_dim: 100}"),
                      Contains("workload.head_dim") && Contains("multiple of 8"));
  REQUIRE_THROWS_WITH(load("{" + base + ", dtype: fp8}", "", "a100"),
                      Contains("workload.dtype") && Contains("not supported by arch a100"));
  REQUIRE_THROWS_WITH(load("{" + base + ", dtype: int8}"), Contains("workload.dtype"));
  REQUIRE_THROWS_WITH(load("{kind: attention, seq_q: 256, head_dim: 128}"),
                      Contains("workload.heads") && Contains("missing required key"));
  REQUIRE_THROWS_WITH(load("{" + base + "}", "sync: {kind: rowsync}"), Contains("sync.kind"));
  REQUIRE_THROWS_WITH(load("{" + base + "}", "order: {kind: file, path: /nonexistent.order}"), Contains("order.path"));
  // Nested GEMM keys keep their line numbers.
  const std::string text =
      "arch: h100\nworkload:\n  kind: attention\n  form: unfused\n  heads: 4\n  seq_q: 256\n  head_dim: 64\n"
      "  pv:\n    tile: [128, 64, 40]\n";
  REQUIRE_THROWS_WITH(load_experiment_text(text, "exp.yaml", ".", {}),
                      Contains("workload.pv.tile[2] (line 9)") && Contains("multiple of 16"));
}

TEST_CASE("attention end to end on h100: fused reads far less DRAM than unfused", "[attention][sim]") {
  // S and P (4 heads x 1024 x 1024 fp16 = 8 MiB each) do not fit a 4 MiB L2, so unfused sends
  // them through DRAM; fused keeps them on chip.
  const std::string shape = "kind: attention, heads: 4, kv_heads: 2, seq_q: 1024, head_dim: 64, causal: true";
  const std::string extra = "arch_overrides: {l2: {bytes: 4194304}}\n";
  const Experiment fused = load("{" + shape + ", form: fused}", extra);
  const Experiment unfused = load("{" + shape + ", form: unfused}", extra);
  const ExperimentPoint &fp = fused.points.at(0), &up = unfused.points.at(0);
  const SimResult fr = simulate(*fp.workload, fp.arch, fp.options);
  const SimResult ur = simulate(*up.workload, up.arch, up.options);
  REQUIRE(fr.kernels.size() == 1);
  REQUIRE(ur.kernels.size() == 3);
  // Fused: Q (512 KiB) and K/V (256 KiB each) at least once each.
  CHECK(fr.total.dram_read_bytes >= (512 + 2 * 256) * 1024);
  CHECK(fr.total.dram_read_bytes < ur.total.dram_read_bytes);
  // Unfused reads S back in the softmax: its causal half is 4 MiB, and the 4 MiB L2 (which also
  // holds Q, K and the P being written) keeps well under half of it.
  CHECK(ur.kernels[1].mem.dram_read_bytes > 2 * 1024 * 1024);
  CHECK(ur.total.dram_read_bytes > 4 * fr.total.dram_read_bytes);
  // Time: at this size (32 fused blocks on 132 SMs) the unfused kernels' parallelism offsets
  // their DRAM traffic; with every SM busy (32 heads, 256 blocks) fused wins by far.
  const std::string wide = "kind: attention, heads: 32, kv_heads: 8, seq_q: 1024, head_dim: 64, causal: true";
  const Experiment wide_fused = load("{" + wide + ", form: fused}", extra);
  const Experiment wide_unfused = load("{" + wide + ", form: unfused}", extra);
  const ExperimentPoint &wf = wide_fused.points.at(0), &wu = wide_unfused.points.at(0);
  CHECK(simulate(*wf.workload, wf.arch, wf.options).duration * 2 < simulate(*wu.workload, wu.arch, wu.options).duration);
  CHECK(fr.kernels[0].flops == 4ull * 64 * (1024ull * 1025 / 2) * 4);

  // Decode with split-KV: the combine kernel runs after the attention kernel.
  const Experiment dec = load("{kind: attention, heads: 8, kv_heads: 2, seq_q: 1, seq_kv: 2048, head_dim: 128, split_kv: 4}");
  const SimResult dr = simulate(*dec.points[0].workload, dec.points[0].arch, dec.points[0].options);
  REQUIRE(dr.kernels.size() == 2);
  CHECK(dr.kernels[1].start >= dr.kernels[0].end);
  CHECK(std::string(kernel_bound(dr.kernels[0])) == "memory");
}

TEST_CASE("attention persistent: FlashAttention-3's static and LPT programs", "[attention]") {
  // Causal, 16 query blocks x 8 heads = 128 tiles of 1 to 16 KV tiles, on 12 programs.
  const std::string wl = "{kind: attention, heads: 8, seq_q: 2048, seq_kv: 2048, head_dim: 64, causal: true, "
                         "block_q: 128, block_kv: 128";
  const Workload tiles = workload_of(load(wl + "}", "order: {kind: fa3}\n"));
  const Workload st = workload_of(load(wl + ", persistent: 12}", "order: {kind: fa3}\n"));
  const Workload lpt = workload_of(load(wl + ", persistent: 12}", "order: {kind: fa3, scheduler: lpt}\n"));
  const Kernel& t = tiles.kernels[0];
  REQUIRE(st.kernels[0].blocks.size() == 12);
  REQUIRE(lpt.kernels[0].blocks.size() == 12);
  CHECK(step_flops(st.kernels[0]) == step_flops(t));
  CHECK(step_flops(lpt.kernels[0]) == step_flops(t));
  const auto spread = [](const Kernel& k) {  // the busiest program's MMA work over the mean
    std::uint64_t most = 0, sum = 0;
    for (const Block& b : k.blocks) {
      std::uint64_t f = 0;
      for (std::uint32_t i = 0; i < b.num_steps; ++i) f += k.steps[b.first_step + i].flops;
      most = std::max(most, f);
      sum += f;
    }
    return static_cast<double>(most) * k.blocks.size() / static_cast<double>(sum);
  };
  // Longest first, each to the program that frees up first: nearly even. The static stride
  // gives program 0 every twelfth tile, whatever their lengths.
  CHECK(spread(lpt.kernels[0]) < 1.05);
  CHECK(spread(st.kernels[0]) > spread(lpt.kernels[0]));
  // Program 0's first tile under LPT is the longest: the last query block of head 0.
  const Block& p0 = lpt.kernels[0].blocks[0];
  CHECK(lpt.kernels[0].steps[p0.first_step].num_accesses == 1);
  CHECK(lpt.kernels[0].accesses[lpt.kernels[0].steps[p0.first_step].first_access].row0 == 15 * 128);
  REQUIRE_THROWS_WITH(load(wl + ", persistent: 12, split_kv: 2}"), Contains("workload.persistent") && Contains("split_kv"));
  REQUIRE_THROWS_WITH(load("{kind: attention, heads: 8, seq_q: 256, seq_kv: 256, head_dim: 64, form: unfused, persistent: 4}"),
                      Contains("workload.persistent") && Contains("form: fused"));
}

TEST_CASE("a main loop that waits for each wgmma: `mainloop: {serialized: true}`, its instruction width, its errors",
          "[attention]") {
  // Fused attention: QK^T's instructions are block_kv (64) wide, PV's head_dim (64 here).
  const Workload w = workload_of(load(kSmallFused + ", mainloop: {kind: wgmma_cp_async, serialized: true}}"));
  CHECK(w.kernels.at(0).serialized_mma_cols == 64);
  const Workload wide = workload_of(load(
      "{kind: attention, heads: 2, seq_q: 256, head_dim: 128, block_q: 128, block_kv: 64, stages: 2, "
      "mainloop: {kind: wgmma_cp_async, serialized: true}}"));
  CHECK(wide.kernels.at(0).serialized_mma_cols == 85);  // 2 / (1/64 + 1/128)
  CHECK(workload_of(load(kSmallFused + ", mainloop: wgmma_cp_async}")).kernels.at(0).serialized_mma_cols == 0);
  // A GEMM's instructions span its tile's columns, at most 256.
  const std::string gemm = "{kind: gemm, m: 512, n: 512, k: 256, stages: 2, ";
  CHECK(workload_of(load(gemm + "tile: [128, 128, 64], mainloop: {kind: wgmma_cp_async, serialized: true}}"))
            .kernels.at(0).serialized_mma_cols == 128);
  // Only a kind whose serialised wait the arch gives can run serialised.
  REQUIRE_THROWS_WITH(load(kSmallFused + ", mainloop: {kind: mma_sync, serialized: true}}"),
                      Contains("workload.mainloop.serialized") && Contains("serialized_wait_cycles"));
  REQUIRE_THROWS_WITH(load(kSmallFused + ", mainloop: {kind: wgmma_cp_async, serialized: sometimes}}"),
                      Contains("workload.mainloop.serialized"));
}
