// `kind: layer` on a small layer whose tiles can be listed by hand: d = 256, f = 512, 4 query
// heads and 2 KV heads of 64, 256 tokens. QKV is [256 x 512] (Q columns 0..255, K 256..383,
// V 384..511); default tiles are 128 x 128 x 64, the attention's 128 x 128.
#include <catch2/catch.hpp>

#include <numeric>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/tile_rect.hpp"
#include "sim/report/bounds.hpp"
#include "sim/report/chain.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

const std::string kShape = "kind: layer, d: 256, f: 512, heads: 4, kv_heads: 2, head_dim: 64";

Experiment load(const std::string& workload, const std::string& extra = "") {
  return load_experiment_text("arch: h100\nworkload: " + workload + "\n" + extra, "layer.yaml", ".", {});
}
Workload layer(const std::string& keys = "seq: 256", const std::string& extra = "") {
  return *load("{" + kShape + ", " + keys + "}", extra).points.at(0).workload;
}
SimResult run(const std::string& workload, const std::string& extra = "") {
  const Experiment e = load(workload, extra);
  const auto& p = e.points.at(0);
  return simulate(*p.workload, p.arch, p.options);
}

std::uint32_t tensor_id(const Workload& w, const std::string& name) {
  for (std::uint32_t i = 0; i < w.tensors.size(); ++i)
    if (w.tensors[i].name == name) return i;
  FAIL("no tensor " << name);
  return 0;
}
const Kernel& kernel(const Workload& w, const std::string& name) {
  for (const Kernel& k : w.kernels)
    if (k.name == name) return k;
  FAIL("no kernel " << name);
  return w.kernels[0];
}
std::vector<std::string> names(const Workload& w) {
  std::vector<std::string> n;
  for (const Kernel& k : w.kernels) n.push_back(k.name);
  return n;
}
std::vector<TileAccess> accesses_of(const Kernel& k, std::uint32_t b, std::uint32_t i) {
  const Step& s = k.steps.at(k.blocks.at(b).first_step + i);
  return {k.accesses.begin() + s.first_access, k.accesses.begin() + s.first_access + s.num_accesses};
}
std::uint32_t block_at(const Kernel& k, std::uint32_t tm, std::uint32_t tn) {
  for (std::uint32_t b = 0; b < k.blocks.size(); ++b)
    if (k.blocks[b].tile_m == tm && k.blocks[b].tile_n == tn && k.blocks[b].tile_z == 0) return b;
  FAIL("no block " << tm << "," << tn);
  return 0;
}
// Elements a kernel's accesses name, loads and stores apart.
std::pair<std::uint64_t, std::uint64_t> elements(const Kernel& k) {
  std::pair<std::uint64_t, std::uint64_t> e{0, 0};
  for (const TileAccess& a : k.accesses) (a.kind == AccessKind::store ? e.second : e.first) += std::uint64_t{a.rows} * a.cols;
  return e;
}
const TensorStats& stats_of(const SimResult& r, const std::string& kernel, const std::string& tensor) {
  for (const KernelStats& k : r.kernels)
    if (k.name == kernel)
      for (const TensorStats& t : k.tensors)
        if (t.name == tensor) return t;
  FAIL("no stats for " << kernel << "/" << tensor);
  return r.kernels[0].tensors[0];
}

}  // namespace

TEST_CASE("layer: one prefill layer is the QKV GEMM, the attention, the output GEMM and the FFN in stream order",
          "[layer]") {
  const Workload w = layer();
  CHECK(names(w) == std::vector<std::string>{"L0.qkv", "L0.attention", "L0.out_proj", "L0.gemm0", "L0.gemm1"});
  for (const Kernel& k : w.kernels) CHECK(k.stream == 0);
  CHECK(w.num_semaphores == 0);
  CHECK(kernel(w, "L0.qkv").grid_n == 4);       // 512 QKV columns
  CHECK(kernel(w, "L0.attention").grid_n == 4);  // batch x heads
  // Q, K and V are views of QKV, O_heads of O: their bytes are their parents'.
  const auto roots = storage_roots(w.tensors);
  const std::uint32_t qkv = tensor_id(w, "L0.QKV"), o = tensor_id(w, "L0.O");
  for (const char* v : {"L0.Q", "L0.K", "L0.V"}) CHECK(roots[tensor_id(w, v)] == qkv);
  CHECK(roots[tensor_id(w, "L0.O_heads")] == o);
  CHECK(roots[tensor_id(w, "L0.R")] == tensor_id(w, "L0.R"));
  CHECK(w.tensors[tensor_id(w, "L0.K")].batch == 2);
  // Gated models get the fused gate+up kernel (the FFN's default).
  CHECK(names(layer("seq: 256, gated: true"))[3] == "L0.gate_up");
}

TEST_CASE("layer: the attention's loads address the QKV projection's output bytes", "[layer]") {
  const Workload w = layer();
  const Tensor& qkv = w.tensors[tensor_id(w, "L0.QKV")];
  const Kernel& att = kernel(w, "L0.attention");
  const std::uint64_t pitch = 512 * 2;
  // Q tile 1 (tokens 128..255) of head 3, which reads KV head 1.
  const std::uint32_t b = block_at(att, 1, 3);
  const auto rect = [&](const TileAccess& a) { return to_rect(w.tensors[a.tensor], a); };
  const ByteRect q = rect(accesses_of(att, b, 0).at(0));
  CHECK(q.start == qkv.base + 128 * pitch + 3 * 64 * 2);
  CHECK(q.pitch == pitch);
  CHECK(q.row_bytes == 64 * 2);
  CHECK(rect(accesses_of(att, b, 1).at(0)).start == qkv.base + (4 + 1) * 64 * 2);      // K, KV tile 0
  // Tile 1 crosses the diagonal: the masked loop's restart marker is step 3.
  CHECK(accesses_of(att, b, 3).empty());
  CHECK(rect(accesses_of(att, b, 5).at(0)).start == qkv.base + 128 * pitch + (4 + 2 + 1) * 64 * 2);  // V, tile 1
  const Tensor& o = w.tensors[tensor_id(w, "L0.O")];
  CHECK(rect(accesses_of(att, b, 6).at(0)).start == o.base + 128 * 256 * 2 + 3 * 64 * 2);
  // Every load of the attention lies inside QKV.
  for (const TileAccess& a : att.accesses) {
    if (a.kind != AccessKind::load) continue;
    const ByteRect r = rect(a);
    CHECK(r.start >= qkv.base);
    CHECK(r.start + (r.rows - 1) * r.pitch + r.row_bytes <= qkv.base + qkv.footprint());
  }
}

TEST_CASE("layer: in stream order each kernel is its own generator's, FLOP for FLOP and sector for sector", "[layer]") {
  const Workload w = layer("seq: 256, residual: false");
  const auto alone = [](const std::string& wl) { return *load(wl).points.at(0).workload; };
  const Workload qkv = alone("{kind: gemm, m: 256, n: 512, k: 256, tile: [128, 128, 64]}");
  const Workload att = alone("{kind: attention, heads: 4, kv_heads: 2, seq_q: 256, head_dim: 64, causal: true}");
  const Workload out = alone("{kind: gemm, m: 256, n: 256, k: 256, tile: [128, 128, 64]}");
  const Workload ffn = alone("{kind: ffn, d: 256, f: 512, m: 256, gated: false}");
  const std::vector<const Kernel*> parts{&qkv.kernels[0], &att.kernels[0], &out.kernels[0], &ffn.kernels[0],
                                         &ffn.kernels[1]};
  REQUIRE(w.kernels.size() == parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    INFO(w.kernels[i].name);
    CHECK(w.kernels[i].total_flops == parts[i]->total_flops);
    CHECK(w.kernels[i].steps.size() == parts[i]->steps.size());
    CHECK(w.kernels[i].accesses.size() == parts[i]->accesses.size());
    CHECK(elements(w.kernels[i]) == elements(*parts[i]));
  }
  // The L2 is asked for the same sectors, kernel by kernel.
  const SimResult r = run("{" + kShape + ", seq: 256, residual: false}");
  const auto requested = [](const KernelStats& k) {
    return k.mem.read_sectors + k.mem.coalesced_sectors + k.mem.write_sectors;
  };
  CHECK(requested(r.kernels[0]) == requested(run("{kind: gemm, m: 256, n: 512, k: 256, tile: [128, 128, 64]}").kernels[0]));
  CHECK(requested(r.kernels[1]) ==
        requested(run("{kind: attention, heads: 4, kv_heads: 2, seq_q: 256, head_dim: 64, causal: true}").kernels[0]));
  const SimResult f = run("{kind: ffn, d: 256, f: 512, m: 256, gated: false}");
  CHECK(requested(r.kernels[4]) == requested(f.kernels[1]));
}

TEST_CASE("layer: the L2 carries each intermediate to its consumer, which a flushed L2 would miss", "[layer]") {
  const std::string wl = "{" + kShape + ", seq: 256}";
  const SimResult warm = run(wl), cold = run(wl, "sim: {cold_l2: kernel}");
  for (const auto& [k, t] : std::vector<std::pair<std::string, std::string>>{
           {"L0.attention", "L0.Q"}, {"L0.out_proj", "L0.O"}, {"L0.gemm0", "L0.R"}, {"L0.gemm1", "L0.H"}}) {
    INFO(k << " reading " << t);
    CHECK(stats_of(warm, k, t).mem.read_hit_rate() > 0.9);
    CHECK(stats_of(cold, k, t).mem.read_hit_rate() < 0.5);
  }
  // The chain summary lists each read of an intermediate with its producer.
  const ChainSummary s = summarize_chain(warm);
  CHECK(s.intermediates == std::vector<std::string>{"L0.QKV", "L0.O", "L0.R", "L0.H"});
  REQUIRE(s.reads.size() == 7);  // Q, K, V; O; R by gemm0 and by gemm1's residual; H
  CHECK(s.reads[0].tensor == "L0.Q");
  CHECK(s.reads[0].storage == "L0.QKV");
  CHECK(s.reads[0].producer == "L0.qkv");
  CHECK(s.reads[0].consumer == "L0.attention");
  CHECK(s.reads[6].producer == "L0.gemm0");
}

TEST_CASE("layer: the traffic bounds see QKV and O as intermediates through their views", "[layer]") {
  const Workload w = layer("seq: 256, residual: false");
  const RunBounds b = compute_traffic_bounds(w, 50ull << 20);
  const auto bytes = [&](const std::string& t) { return tensor_bytes(w.tensors[tensor_id(w, t)]); };
  // Written once and read once each: QKV (as Q, K, V), O (as O_heads), R and H.
  CHECK(b.total.intermediate_bytes == 2 * (bytes("L0.QKV") + bytes("L0.O") + bytes("L0.R") + bytes("L0.H")));
  // External inputs and the final output: X, the weights, Y.
  CHECK(b.total.compulsory_bytes == bytes("X") + bytes("L0.W_qkv") + bytes("L0.W_o") + bytes("L0.W0") + bytes("L0.W1") +
                                        bytes("L0.Y"));
  // The attention reads QKV, which the QKV GEMM made, and writes O, which out_proj reads.
  CHECK(b.kernels[1].compulsory_bytes == 0);
  CHECK(b.kernels[1].intermediate_bytes == bytes("L0.QKV") + bytes("L0.O"));
}

TEST_CASE("layer: a single KV head or query head is still a view of QKV, dense tensors never are", "[layer]") {
  const std::string one = "{kind: layer, d: 256, f: 512, heads: 1, kv_heads: 1, head_dim: 64, seq: 128}";
  const Workload w = *load(one).points.at(0).workload;
  const auto roots = storage_roots(w.tensors);
  for (const char* v : {"L0.Q", "L0.K", "L0.V"}) CHECK(roots[tensor_id(w, v)] == tensor_id(w, "L0.QKV"));
  CHECK(kernel(w, "L0.attention").accesses.back().tensor == tensor_id(w, "L0.O"));  // O itself, one head
  CHECK(summarize_chain(run(one)).intermediates == std::vector<std::string>{"L0.QKV", "L0.O", "L0.R", "L0.H"});
  // Dense tensors at one address (hand-built workloads place none) keep their own bytes.
  std::vector<Tensor> dense(2);
  dense[0].rows = dense[0].cols = dense[0].ld = 64;
  dense[1].rows = dense[1].cols = dense[1].ld = 32;
  CHECK(storage_roots(dense) == std::vector<std::uint32_t>{0, 1});
}

TEST_CASE("layer decode: past K and V come from the cache, the step's own from the QKV output", "[layer]") {
  // 4 sequences of one new token after 200 cached: KV tiles [0, 128) and [128, 201).
  const Workload w = layer("phase: decode, batch: 4, context: 200");
  const Kernel& att = kernel(w, "L0.attention");
  const std::uint32_t cache = tensor_id(w, "L0.K_cache"), k = tensor_id(w, "L0.K"), q = tensor_id(w, "L0.Q");
  CHECK(w.tensors[cache].batch == 4 * 2);
  CHECK(w.tensors[cache].rows == 200);
  CHECK(w.tensors[tensor_id(w, "L0.QKV")].rows == 4);
  // Sequence 2, head 3 (KV head 1): its Q row is token 2; its second K step reads 72 cached
  // rows and its own new row.
  const std::uint32_t b = block_at(att, 0, 2 * 4 + 3);
  CHECK(accesses_of(att, b, 0) == std::vector<TileAccess>{{q, 3, 2, 0, 1, 64, AccessKind::load}});
  CHECK(accesses_of(att, b, 1) == std::vector<TileAccess>{{cache, 2 * 2 + 1, 0, 0, 128, 64, AccessKind::load}});
  CHECK(accesses_of(att, b, 3) == std::vector<TileAccess>{{cache, 2 * 2 + 1, 128, 0, 72, 64, AccessKind::load},
                                                          {k, 1, 2, 0, 1, 64, AccessKind::load}});
  const SimResult r = run("{" + kShape + ", phase: decode, batch: 4, context: 200}");
  CHECK(stats_of(r, "L0.attention", "L0.K").mem.read_hit_rate() > 0.9);
}

TEST_CASE("layer: layers: 2 reads the first layer's output in the second's QKV projection", "[layer]") {
  const Workload w = layer("seq: 256, layers: 2");
  REQUIRE(w.kernels.size() == 10);
  CHECK(w.kernels[5].name == "L1.qkv");
  CHECK(w.kernels[5].accesses[0].tensor == tensor_id(w, "L0.Y"));
  CHECK(kernel(w, "L1.out_proj").accesses.size() > 0);
  const SimResult r = run("{" + kShape + ", seq: 256, layers: 2}");
  CHECK(stats_of(r, "L1.qkv", "L0.Y").mem.read_hit_rate() > 0.9);
}

TEST_CASE("layer sync: rowsync and tilesync from the attention wait for every head of their rows", "[layer][sync]") {
  const Workload w = layer("seq: 256", "sync: {attention_out_proj: {kind: rowsync}}");
  CHECK(names(w) == std::vector<std::string>{"L0.qkv", "L0.attention", "L0.wait", "L0.out_proj", "L0.gemm0", "L0.gemm1"});
  CHECK(kernel(w, "L0.attention").stream == 0);
  CHECK(kernel(w, "L0.out_proj").stream == 1);
  CHECK(kernel(w, "L0.gemm1").stream == 1);  // the rest follows on the consumer's stream
  const Kernel& att = kernel(w, "L0.attention");
  for (const Block& b : att.blocks) CHECK(att.steps[b.first_step + b.num_steps - 1].post_sem == b.tile_m);
  const Kernel& out = kernel(w, "L0.out_proj");
  for (const Block& b : out.blocks) {
    CHECK(out.steps[b.first_step].wait_sem == b.tile_m);
    CHECK(out.steps[b.first_step].wait_value == 4);  // 4 heads' tiles of its 128 rows
  }
  const Workload t = layer("seq: 256", "sync: {attention_out_proj: {kind: tilesync}}");
  const Kernel& tout = kernel(t, "L0.out_proj");
  const Block& b = tout.blocks[3];
  for (std::uint32_t i = 0; i + 1 < b.num_steps; ++i) {  // k-step i of 64 columns reads head i
    CHECK(tout.steps[b.first_step + i].wait_sem == b.tile_m * 4 + i);
    CHECK(tout.steps[b.first_step + i].wait_value == 1);
  }
  // Decode: 4 tokens in one 64-row tile, written by 4 sequences x 4 heads.
  const Workload d = layer("phase: decode, batch: 4, context: 200", "sync: {attention_out_proj: {kind: rowsync}}");
  CHECK(kernel(d, "L0.out_proj").steps[0].wait_value == 16);
}

TEST_CASE("layer sync: every supported combination runs to the end with the stream run's FLOP", "[layer][sync]") {
  const std::string wl = "{" + kShape + ", seq: 256, gated: true}";
  const auto flops = [](const SimResult& r) {
    return std::accumulate(r.kernels.begin(), r.kernels.end(), std::uint64_t{0},
                           [](std::uint64_t s, const KernelStats& k) { return s + k.flops; });
  };
  const SimResult stream = run(wl);
  for (const std::string sync : {"{attention_out_proj: {kind: tilesync}, out_proj_ffn: {kind: rowsync}, ffn: {kind: tilesync}}",
                                 "{out_proj_ffn: {kind: tilesync}, ffn: {kind: dataflow}}",
                                 "{attention_out_proj: {kind: tilesync}, out_proj_ffn: {kind: dataflow}}",
                                 "{attention_out_proj: {kind: rowsync}, ffn: {kind: dataflow, after: half_row}}"}) {
    INFO(sync);
    const SimResult r = run(wl, "sync: " + sync);
    CHECK(flops(r) == flops(stream));
    CHECK(r.duration > 0);
  }
  const Workload w = layer("seq: 256, gated: true", "sync: {out_proj_ffn: {kind: tilesync}, ffn: {kind: dataflow}}");
  CHECK(names(w) == std::vector<std::string>{"L0.qkv", "L0.attention", "L0.out_proj", "L0.wait", "L0.dataflow"});
  // The fused kernel makes H itself: it is H's producer and consumer.
  const ChainSummary s = summarize_chain(run(wl, "sync: {out_proj_ffn: {kind: tilesync}, ffn: {kind: dataflow}}"));
  REQUIRE(s.reads.size() == 6);  // R read once per kernel: gate_up's loads and gemm1's residual are one kernel's
  CHECK(s.reads[4].tensor == "L0.R");
  CHECK(s.reads[4].producer == "L0.out_proj");
  CHECK(s.reads[5].tensor == "L0.H");
  CHECK(s.reads[5].producer == "L0.dataflow");
  CHECK(s.reads[5].consumer == "L0.dataflow");
  // Two layers alternate streams: the second layer's pair goes back to stream 0.
  const Workload two = layer("seq: 256, layers: 2", "sync: {attention_out_proj: {kind: rowsync}}");
  CHECK(kernel(two, "L1.attention").stream == 1);
  CHECK(kernel(two, "L1.out_proj").stream == 0);
}

TEST_CASE("layer: per-kernel settings reach their kernels: persistent, unfused, split_kv, orders", "[layer]") {
  const Workload p = layer("seq: 256, kernels: {qkv: {persistent: 3, tile: [64, 128, 64]}, out_proj: {persistent: 2}}",
                           "sync: {attention_out_proj: {kind: rowsync}}");
  CHECK(kernel(p, "L0.qkv").grid_n == 3);  // programs
  const Kernel& out = kernel(p, "L0.out_proj");
  REQUIRE(out.grid_n == 2);
  // Program 0 runs tiles 0 and 2 (rows 0 and 1): each tile's first step keeps its row's wait.
  std::vector<std::uint32_t> waits;
  for (const Step& s : out.steps)
    if (s.wait_sem != kNoSem) waits.push_back(s.wait_sem);
  CHECK(waits.size() == 4);
  CHECK(run("{" + kShape + ", seq: 256, kernels: {out_proj: {persistent: 2}}}", "sync: {attention_out_proj: {kind: rowsync}}")
            .duration > 0);

  const Workload u = layer("seq: 256, kernels: {attention: {form: unfused, qk: {tile: [128, 128, 64]}}}",
                           "sync: {attention_out_proj: {kind: tilesync}}");
  CHECK(names(u) == std::vector<std::string>{"L0.qkv", "L0.qk", "L0.softmax", "L0.pv", "L0.wait", "L0.out_proj", "L0.gemm0",
                                             "L0.gemm1"});
  // PV's tiles are 128 x 64 (head_dim 64): one post per (row tile, head).
  CHECK(kernel(u, "L0.out_proj").steps[0].wait_value == 1);
  const SimResult ur = run("{" + kShape + ", seq: 256, kernels: {attention: {form: unfused}}}",
                           "sync: {attention_out_proj: {kind: tilesync}}");
  CHECK(stats_of(ur, "L0.qk", "L0.Q").mem.read_hit_rate() > 0.9);

  // Flash-decoding: the combine kernel stores O, so it is the one that posts.
  const Workload d = layer("phase: decode, batch: 4, context: 200, kernels: {attention: {split_kv: 2}}",
                           "sync: {attention_out_proj: {kind: rowsync}}");
  CHECK(names(d)[1] == "L0.attention_split");
  const Kernel& combine = kernel(d, "L0.attention_combine");
  CHECK(combine.steps.back().post_sem != kNoSem);
  for (const Step& s : kernel(d, "L0.attention_split").steps) CHECK(s.post_sem == kNoSem);  // its partials are not O

  // A kernel's own order replaces the experiment's.
  const Workload o = layer("seq: 256, kernels: {qkv: {order: {kind: column}}}", "order: {kind: row}");
  CHECK(kernel(o, "L0.qkv").dispatch[1] == 4);  // column order: block (1, 0) second
  CHECK(kernel(o, "L0.out_proj").dispatch[1] == 1);
}

TEST_CASE("layer: bad keys and unsupported sync combinations are errors naming the key", "[layer][errors]") {
  const auto err = [](const std::string& keys, const std::string& extra = "") {
    try {
      layer(keys, extra);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(err("seq: 256", "sync: {kind: rowsync}"), Contains("sync.kind") && Contains("per kernel boundary"));
  CHECK_THAT(err("seq: 256", "sync: {attention_out_proj: {kind: dataflow}}"),
             Contains("sync.attention_out_proj.kind") && Contains("not supported here"));
  CHECK_THAT(err("seq: 256", "sync: {qkv_attention: {kind: tilesync}}"), Contains("sync.qkv_attention.kind"));
  CHECK_THAT(err("seq: 256", "sync: {ffn: {kind: rowsink}}"), Contains("sync.ffn.kind") && Contains("tilesync"));
  CHECK_THAT(err("seq: 256", "sync: {ffn: {kind: stream, after: row}}"), Contains("sync.ffn.after"));
  CHECK_THAT(err("seq: 256", "sync: {out_proj_ffn: {kind: dataflow}, ffn: {kind: dataflow}}"),
             Contains("workload.kernels.ffn") && Contains("three GEMMs"));
  CHECK_THAT(err("seq: 256, gated: true, kernels: {ffn: {gate_fusion: separate}}", "sync: {out_proj_ffn: {kind: rowsync}}"),
             Contains("kernels.ffn.gate_fusion"));
  CHECK_THAT(err("seq: 256, kernels: {out_proj: {tile: [128, 128, 128]}}", "sync: {attention_out_proj: {kind: tilesync}}"),
             Contains("multiple of out_proj's bk"));
  CHECK_THAT(err("seq: 256, kernels: {out_proj: {tile: [64, 128, 64]}}", "sync: {attention_out_proj: {kind: rowsync}}"),
             Contains("straddle"));
  CHECK_THAT(err("seq: 256, kernels: {out_proj: {tile: [64, 128, 64]}}", "sync: {out_proj_ffn: {kind: rowsync}}"),
             Contains("kernels.ffn.gemm0.tile"));
  CHECK_THAT(err("seq: 256", "sync: {out_proj_ffn: {kind: dataflow}, ffn: {kind: rowsync}}"),
             Contains("workload.kernels.ffn") && Contains("inside that fused kernel"));
  CHECK_THAT(err("seq: 256, kernels: {out_proj: {persistent: 4}}", "sync: {out_proj_ffn: {kind: dataflow}}"),
             Contains("kernels.out_proj.persistent"));
  CHECK_THAT(err("seq: 256, tokens: 5"), Contains("workload.tokens") && Contains("unknown key"));
  CHECK_THAT(err("seq: 256, kernels: {mlp: {}}"), Contains("workload.kernels.mlp"));
  CHECK_THAT(err("seq: 256, kernels: {qkv: {split: 2}}"), Contains("workload.kernels.qkv.split"));
  CHECK_THAT(err("seq: 256, kernels: {attention: {seq_q: 8}}"), Contains("workload.kernels.attention.seq_q"));
  CHECK_THAT(err("seq: 256, kernels: {attention: {block_q: 40}}"), Contains("workload.kernels.attention.block_q"));
  CHECK_THAT(err("seq: 256, kernels: {ffn: {gemm1: {tile: [64, 128, 64]}}}"), Contains("workload.kernels.ffn.gemm1"));
  CHECK_THAT(err("phase: decode"), Contains("workload.context"));
  CHECK_THAT(err("seq: 256, dtype: fp8"), Contains("workload.dtype"));
  CHECK_THAT(err("seq: 256, kv_heads: 3"), Contains("workload.kv_heads"));
  CHECK_THAT(err("seq: 256, phase: training"), Contains("workload.phase"));
  CHECK_THAT(err("batch: 2"), Contains("workload.seq"));
}

TEST_CASE("layer: model presets give the layer's dimensions", "[layer]") {
  const Workload w = *load("{kind: layer, model: llama3-8b, seq: 128}").points.at(0).workload;
  const Tensor& qkv = w.tensors[tensor_id(w, "L0.QKV")];
  CHECK(qkv.cols == (32 + 2 * 8) * 128);
  CHECK(w.tensors[tensor_id(w, "L0.K")].batch == 8);
  CHECK(names(w)[3] == "L0.gate_up");  // Llama 3 is gated
  CHECK(w.tensors[tensor_id(w, "L0.W1")].rows == 14336);
}
