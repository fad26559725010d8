// `kind: layer`: transformer layers as one chain of kernels in one workload, so the L2 carries
// what each kernel leaves to the next: the QKV projection X.W_qkv -> QKV, the attention reading
// Q, K and V as views of QKV (and, with a context, the KV cache) and writing O, the output
// projection O.W_o (+ X, the residual) -> R, and the FFN on R (+ R) -> Y, the next layer's X.
// The kernels are the GEMM, attention and FFN generators' own; RMSNorm, rotary embedding and
// the KV-cache append are not modelled (docs/configuration.md says why).
#include <iterator>
#include <memory>
#include <string>

#include "common/error.hpp"
#include "workloads/ffn.hpp"
#include "workloads/layer.hpp"
#include "workloads/model_presets.hpp"
#include "workloads/orders/chain_order_file.hpp"
#include "workloads/workload.hpp"

namespace tilesim {

namespace {

constexpr std::int64_t kMaxTokens = 1 << 22;

// The layer's own keys: the model's dimensions, the phase and the token counts.
struct LayerShape {
  ModelPreset dims;
  std::uint32_t batch = 1, seq = 0, context = 0, layers = 1;
  bool residual = true;
  std::string dtype;
  std::uint32_t tokens() const { return batch * seq; }
  std::uint32_t qkv_cols() const { return (dims.heads + 2 * dims.kv_heads) * dims.head_dim; }
};

void parse_dims(const ConfigNode& n, LayerShape& s) {
  if (n.has("model")) {
    std::vector<std::string> names;
    for (const ModelPreset& p : model_presets()) names.push_back(p.name);
    s.dims = *find_model_preset(n.choice("model", names));
  } else {
    for (const char* key : {"d", "f", "heads", "head_dim"})
      if (!n.has(key)) n.fail("expected `model:` (" + model_preset_names() + ") or all of d, f, heads and head_dim");
  }
  s.dims.d = static_cast<std::uint32_t>(n.integer_or("d", s.dims.d, 1, 1 << 20));
  s.dims.f = static_cast<std::uint32_t>(n.integer_or("f", s.dims.f, 1, 1 << 20));
  s.dims.gated = n.boolean_or("gated", s.dims.gated);
  s.dims.heads = static_cast<std::uint32_t>(n.integer_or("heads", s.dims.heads, 1, 4096));
  s.dims.kv_heads = static_cast<std::uint32_t>(n.integer_or("kv_heads", n.has("model") ? s.dims.kv_heads : s.dims.heads, 1, 4096));
  s.dims.head_dim = static_cast<std::uint32_t>(n.integer_or("head_dim", s.dims.head_dim, 8, 1024));
  if (s.dims.heads % s.dims.kv_heads)
    n.fail_key("kv_heads", "kv_heads " + std::to_string(s.dims.kv_heads) + " does not divide heads " +
                               std::to_string(s.dims.heads));
  if (s.dims.head_dim % 8) n.fail_key("head_dim", "head_dim must be a multiple of 8, got " + std::to_string(s.dims.head_dim));
  const std::uint64_t qkv_cols = std::uint64_t{s.dims.heads + 2 * s.dims.kv_heads} * s.dims.head_dim;
  if (qkv_cols > static_cast<std::uint64_t>(kMaxTokens))  // a GEMM dimension's limit
    n.fail_key("heads", "the QKV projection's (heads + 2 x kv_heads) x head_dim = " + std::to_string(qkv_cols) +
                            " columns exceed " + std::to_string(kMaxTokens));
}

LayerShape parse_layer_shape(const ConfigNode& n) {
  n.allow_keys({"kind", "model", "d", "f", "gated", "heads", "kv_heads", "head_dim", "phase", "batch", "seq", "context",
                "layers", "dtype", "residual", "kernels"});
  LayerShape s;
  parse_dims(n, s);
  // decode: a step of `seq` (default 1) new tokens per sequence after `context` cached ones.
  const bool decode = n.choice_or("phase", "prefill", {"prefill", "decode"}) == "decode";
  s.batch = static_cast<std::uint32_t>(n.integer_or("batch", 1, 1, 65535));
  s.seq = static_cast<std::uint32_t>(decode ? n.integer_or("seq", 1, 1, kMaxTokens) : n.integer("seq", 1, kMaxTokens));
  s.context = static_cast<std::uint32_t>(decode ? n.integer("context", 1, kMaxTokens) : n.integer_or("context", 0, 0, kMaxTokens));
  if (std::uint64_t{s.batch} * s.seq > kMaxTokens)
    n.fail_key("seq", "batch x seq = " + std::to_string(std::uint64_t{s.batch} * s.seq) + " tokens exceeds " +
                          std::to_string(kMaxTokens));
  if (std::uint64_t{s.context} + s.seq > kMaxTokens)
    n.fail_key("context", "context + seq exceeds " + std::to_string(kMaxTokens) + " positions");
  s.layers = static_cast<std::uint32_t>(n.integer_or("layers", 1, 1, 1024));
  // One element size for every activation: the attention's O (fp16 or bf16) is the output
  // projection's A.
  s.dtype = n.choice_or("dtype", "fp16", {"fp16", "bf16"});
  s.residual = n.boolean_or("residual", true);
  return s;
}

// A sub-node of `kernels` rebuilt as the generator's own node: the layer's shape keys plus the
// user's keys (shared, so errors keep their lines), `order` set aside for the caller.
ConfigNode sub_node(const ConfigNode& kernels, const char* key, YAML::Node y, const std::vector<std::string>& allowed,
                    std::optional<ConfigNode>& order) {
  if (auto user = kernels.find(key)) {
    user->expect_map();
    user->allow_keys(allowed);
    for (const auto& kv : user->raw())
      if (kv.first.as<std::string>() != "order") y[kv.first.as<std::string>()] = kv.second;
    order = user->find("order");
  }
  return ConfigNode(y, kernels.file(), kernels.path_of(key));
}

// Everything parsed once and used for every layer.
struct LayerPlan {
  LayerShape shape;
  AttentionSpec attention;
  GemmSpec qkv, out_proj, g0, g1;
  FfnShape ffn;
  std::optional<ConfigNode> ffn_node;
  std::optional<ConfigNode> qkv_order, attention_order, out_proj_order, ffn_order;  // the kernels' own
};

void parse_ffn(const ConfigNode& kernels, const ArchSpec& arch, LayerPlan& p) {
  const LayerShape& s = p.shape;
  YAML::Node y(YAML::NodeType::Map);
  y["kind"] = "ffn";
  y["d"] = s.dims.d;
  y["f"] = s.dims.f;
  y["m"] = s.tokens();
  y["dtype"] = s.dtype;
  y["gated"] = s.dims.gated;
  p.ffn_node = sub_node(kernels, "ffn", y, {"gated", "gate_fusion", "gemm0", "gemm1", "mainloop", "order"}, p.ffn_order);
  p.ffn = parse_ffn_shape(*p.ffn_node);
  p.g0 = projection_gemm_spec(*p.ffn_node, "gemm0", s.tokens(), s.dims.f, s.dims.d, s.dtype, arch);
  p.g1 = projection_gemm_spec(*p.ffn_node, "gemm1", s.tokens(), s.dims.d, s.dims.f, s.dtype, arch);
  check_ffn_gemms(*p.ffn_node, p.ffn, p.g0, p.g1, arch);
}

LayerPlan parse_layer(const ConfigNode& n, const ArchSpec& arch) {
  LayerPlan p;
  p.shape = parse_layer_shape(n);
  const LayerShape& s = p.shape;
  const ConfigNode kernels = n.has("kernels") ? n.at("kernels")
                                              : ConfigNode(YAML::Node(YAML::NodeType::Map), n.file(), n.path_of("kernels"));
  kernels.expect_map();
  kernels.allow_keys({"qkv", "attention", "out_proj", "ffn"});
  const std::uint32_t T = s.tokens(), d = s.dims.d, hd = s.dims.heads * s.dims.head_dim;
  for (const char* key : {"qkv", "out_proj"})
    if (auto g = kernels.find(key)) g->expect_map();
  p.qkv = projection_gemm_spec(kernels, "qkv", T, s.qkv_cols(), d, s.dtype, arch, true);
  if (auto g = kernels.find("qkv")) p.qkv_order = g->find("order");
  p.out_proj = projection_gemm_spec(kernels, "out_proj", T, d, hd, s.dtype, arch, true);
  if (auto g = kernels.find("out_proj")) p.out_proj_order = g->find("order");
  YAML::Node y(YAML::NodeType::Map);
  y["kind"] = "attention";
  y["batch"] = s.batch;
  y["heads"] = s.dims.heads;
  y["kv_heads"] = s.dims.kv_heads;
  y["seq_q"] = s.seq;
  y["seq_kv"] = s.context + s.seq;
  y["head_dim"] = s.dims.head_dim;
  y["dtype"] = s.dtype;
  y["causal"] = true;  // a decoder's self-attention
  p.attention = parse_attention(
      sub_node(kernels, "attention", y,
               {"form", "causal", "split_kv", "block_q", "block_kv", "stages", "threads", "registers_per_thread",
                "blocks_per_sm", "shared_memory_bytes", "mainloop", "persistent", "masked_loop", "qk", "pv", "softmax",
                "order"},
               p.attention_order),
      arch);
  parse_ffn(kernels, arch, p);
  return p;
}

// A kernel's launch order: its own `order:`, else the experiment's (row by default). A chain
// order file orders one fused FFN kernel's tickets (`kind: ffn`), which a layer does not take.
struct KernelOrder {
  std::optional<ConfigNode> node;
  std::unique_ptr<LaunchOrder> order;
};

KernelOrder kernel_order(const WorkloadContext& ctx, const std::optional<ConfigNode>& own) {
  KernelOrder o;
  o.node = own ? *own : order_node_or_row(ctx);
  if (chain_order_of(*o.node, ctx.base_dir))
    o.node->fail("a chain order file orders the tickets of `kind: ffn`'s fused kernel; a layer takes a launch order "
                 "per kernel");
  o.order = make_order(*o.node, ctx.base_dir);
  return o;
}

struct LayerOrders {
  KernelOrder qkv, attention, out_proj, ffn;
};

std::uint32_t add_view(Workload& w, std::uint32_t parent, const std::string& name, std::uint32_t col0,
                       std::uint32_t cols, std::uint32_t heads) {
  w.tensors.push_back(column_view(w.tensors[parent], name, col0, cols, heads));
  return static_cast<std::uint32_t>(w.tensors.size() - 1);
}

// Moves the kernels appended to `w` since `first` out of it.
std::vector<Kernel> take_kernels(Workload& w, std::size_t first) {
  std::vector<Kernel> out(std::make_move_iterator(w.kernels.begin() + static_cast<std::ptrdiff_t>(first)),
                          std::make_move_iterator(w.kernels.end()));
  w.kernels.resize(first);
  for (Kernel& k : out) k.stream = kUnplacedStream;
  return out;
}

// The attention of layer `prefix` on QKV: Q, K, V as views by head, the KV cache before them,
// and O's view by head, which it stores.
void add_layer_attention(const LayerPlan& p, const LayerOrders& o, const std::string& base_dir, std::uint32_t qkv,
                         std::uint32_t o_full, const std::string& prefix, Workload& w, DeviceAllocator& alloc,
                         LayerKernels& lk) {
  const LayerShape& s = p.shape;
  const std::uint32_t H = s.dims.heads, Hkv = s.dims.kv_heads, D = s.dims.head_dim;
  const auto operand = [&](std::uint32_t tensor, std::uint32_t heads) {
    AttentionOperand op;
    op.tensor = tensor;
    op.token_major = true;
    op.heads = heads;
    op.seq = s.seq;
    return op;
  };
  AttentionIo io;
  io.q = operand(add_view(w, qkv, prefix + "Q", 0, D, H), H);
  io.k = operand(add_view(w, qkv, prefix + "K", H * D, D, Hkv), Hkv);
  io.v = operand(add_view(w, qkv, prefix + "V", (H + Hkv) * D, D, Hkv), Hkv);
  if (s.context) {
    const auto bits = static_cast<std::uint16_t>(dtype_bits(*dtype_from_name(s.dtype)));
    io.k_cache = add_matrix(w, alloc, prefix + "K_cache", s.context, D, bits, false, s.batch * Hkv);
    io.v_cache = add_matrix(w, alloc, prefix + "V_cache", s.context, D, bits, false, s.batch * Hkv);
    io.context = s.context;
  }
  // With one head O itself is the view (a dense one-batch view would not be told from a tensor).
  lk.o_heads = H > 1 ? add_view(w, o_full, prefix + "O_heads", 0, D, H) : o_full;
  io.o = operand(lk.o_heads, H);
  const std::size_t first = w.kernels.size();
  add_attention_kernels(p.attention, io, *o.attention.order, *o.attention.node, base_dir, w, alloc, prefix);
  lk.attention = take_kernels(w, first);
}

// Layer `l`'s tensors and kernels, reading `x` [tokens x d]; returns its output Y.
std::uint32_t add_layer(const LayerPlan& p, const LayerOrders& o, const std::string& base_dir, std::uint32_t l,
                        std::uint32_t x, Workload& w, DeviceAllocator& alloc, LayerKernels& lk) {
  const LayerShape& s = p.shape;
  const std::string prefix = "L" + std::to_string(l) + ".";
  const std::uint32_t T = s.tokens(), d = s.dims.d, hd = s.dims.heads * s.dims.head_dim;
  const auto bits = static_cast<std::uint16_t>(dtype_bits(*dtype_from_name(s.dtype)));
  const std::uint32_t w_qkv = add_matrix(w, alloc, prefix + "W_qkv", d, s.qkv_cols(), bits, true);
  const std::uint32_t qkv = add_matrix(w, alloc, prefix + "QKV", T, s.qkv_cols(), bits, false);
  std::size_t first = w.kernels.size();
  add_gemm_kernel(p.qkv, {x, w_qkv, qkv}, *o.qkv.order, w, prefix + "qkv");
  lk.qkv = take_kernels(w, first);

  const std::uint32_t o_full = add_matrix(w, alloc, prefix + "O", T, hd, bits, false);
  add_layer_attention(p, o, base_dir, qkv, o_full, prefix, w, alloc, lk);

  const std::uint32_t w_o = add_matrix(w, alloc, prefix + "W_o", hd, d, bits, true);
  const std::uint32_t r = add_matrix(w, alloc, prefix + "R", T, d, bits, false);
  GemmOperands out{o_full, w_o, r};
  if (s.residual) out.epilogue_load = x;  // R = X + O.W_o
  first = w.kernels.size();
  add_gemm_kernel(p.out_proj, out, *o.out_proj.order, w, prefix + "out_proj");
  lk.out_proj = take_kernels(w, first);

  ChainPair pair;
  lk.g0 = p.g0;
  lk.g1 = p.g1;
  first = w.kernels.size();
  add_ffn_kernels(*p.ffn_node, p.ffn, lk.g0, lk.g1, *o.ffn.order, w, pair, alloc,
                  FfnInput{r, s.residual ? r : kNoTensor, prefix});  // Y = R + FFN(R)
  lk.ffn_producers = take_kernels(w, first);
  lk.ffn_consumer.push_back(std::move(lk.ffn_producers.back()));
  lk.ffn_producers.pop_back();
  lk.ffn_stride_tiles = pair.producer_stride_tiles;
  lk.ffn_separate = p.ffn.gated && p.ffn.fusion == "separate";
  lk.out_proj_spec = p.out_proj;
  lk.prefix = prefix;
  lk.heads = s.dims.heads;
  lk.head_dim = s.dims.head_dim;
  return static_cast<std::uint32_t>(w.tensors.size() - 1);  // Y, the FFN's last tensor
}

// Persistent GEMMs become their programs after the sync policies have put their waits and
// posts on the tiles' steps (as `kind: ffn` does); the attention's are made by its builder.
void make_layer_programs(const LayerPlan& p, const LayerOrders& o, std::size_t first, Workload& w) {
  for (std::size_t i = first; i < w.kernels.size(); ++i) {
    Kernel& k = w.kernels[i];
    const std::string name = k.name.substr(k.name.find('.') + 1);
    const GemmSpec* g = name == "qkv" ? &p.qkv : name == "out_proj" ? &p.out_proj
                      : name == "gemm1" ? &p.g1
                      : (name == "gemm0" || name == "gate_up" || name == "gate" || name == "up") ? &p.g0 : nullptr;
    if (!g || !g->persistent) continue;
    const LaunchOrder& order = name == "qkv" ? *o.qkv.order : name == "out_proj" ? *o.out_proj.order : *o.ffn.order;
    make_persistent(k, g->persistent, order.sequence(k.grid_m, k.grid_n), order.dynamic());
  }
}

// What the sync boundaries cannot combine with the kernels' settings.
void check_layer_sync(const ConfigNode& n, const LayerPlan& p, const LayerSync& sync) {
  const auto kind = [](const std::optional<ConfigNode>& s) { return s ? s->string_or("kind", "stream") : "stream"; };
  const std::string at_out = kind(sync.attention_out_proj), out_ffn = kind(sync.out_proj_ffn), ffn = kind(sync.ffn);
  const std::string kernels = n.path_of("kernels");
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw InputError(n.file() + ": " + kernels + "." + key + ": " + what);
  };
  if (out_ffn == "dataflow" && (p.out_proj.persistent || p.g0.persistent))
    fail(p.out_proj.persistent ? "out_proj.persistent" : "ffn.gemm0.persistent",
         "persistent GEMMs with sync out_proj_ffn: dataflow are not modelled (the fused kernel's blocks take tickets)");
  if (ffn == "dataflow" && (p.g0.persistent || p.g1.persistent))
    fail(p.g0.persistent ? "ffn.gemm0.persistent" : "ffn.gemm1.persistent",
         "persistent GEMMs with sync ffn: dataflow are not modelled (the fused kernel's blocks take tickets)");
  if (at_out != "stream" && p.out_proj.split_k > 1)
    fail("out_proj.split_k", "the output projection waits for the attention's rows per k-step; use split_k 1 with sync " +
                                 at_out);
  if (out_ffn != "stream" && p.out_proj.split_k > 1)
    fail("out_proj.split_k", "a producer with split-K posts its tiles only after the last slice; use split_k 1 with sync " +
                                 out_ffn);
  if (ffn != "stream" && p.g0.split_k > 1)
    fail("ffn.gemm0.split_k", "a producer with split-K posts its tiles only after the last slice; use split_k 1 with "
                              "sync " + ffn);
  if (out_ffn != "stream" && p.out_proj.bm != p.g0.bm)
    fail("ffn.gemm0.tile", "bm (" + std::to_string(p.g0.bm) + ") must equal out_proj's (" + std::to_string(p.out_proj.bm) +
                               ") for sync out_proj_ffn: " + out_ffn + " (consumer rows match producer rows)");
  if (out_ffn != "stream" && p.ffn.gated && p.ffn.fusion == "separate")
    fail("ffn.gate_fusion", "with separate gate and up kernels the FFN's input feeds two consumers; sync out_proj_ffn: " +
                                out_ffn + " needs gate_fusion fused or concat");
  if (out_ffn == "dataflow" && ffn == "dataflow")
    fail("ffn", "dataflow on both out_proj_ffn and ffn would fuse three GEMMs into one kernel, which is not modelled");
  if (out_ffn == "dataflow" && ffn != "stream")
    fail("ffn", "with out_proj_ffn: dataflow the FFN's first GEMM is inside that fused kernel, whose output-projection "
                "tiles would post as its producer too; sync ffn: " + ffn + " needs out_proj_ffn stream, rowsync or tilesync");
}

Workload build_layer(const WorkloadContext& ctx) {
  const LayerPlan p = parse_layer(ctx.workload, ctx.arch);
  const LayerSync sync = parse_layer_sync(ctx.sync);
  check_layer_sync(ctx.workload, p, sync);
  LayerOrders o{kernel_order(ctx, p.qkv_order), kernel_order(ctx, p.attention_order),
                kernel_order(ctx, p.out_proj_order), kernel_order(ctx, p.ffn_order)};
  Workload w;
  DeviceAllocator alloc;
  const auto bits = static_cast<std::uint16_t>(dtype_bits(*dtype_from_name(p.shape.dtype)));
  std::uint32_t x = add_matrix(w, alloc, "X", p.shape.tokens(), p.shape.dims.d, bits, false);
  for (std::uint32_t l = 0; l < p.shape.layers; ++l) {
    LayerKernels lk;
    x = add_layer(p, o, ctx.base_dir, l, x, w, alloc, lk);  // the next layer reads this one's Y
    const std::size_t first = w.kernels.size();
    append_layer(sync, lk, w);
    make_layer_programs(p, o, first, w);
  }
  return w;
}

const bool registered = register_workload("layer",
    "transformer layers: QKV projection, attention, output projection and FFN as one chain of kernels", build_layer);

}  // namespace

}  // namespace tilesim
