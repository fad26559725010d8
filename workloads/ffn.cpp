// `kind: ffn`: a transformer feed-forward block, GEMM0 [M x d].[d x f] -> activation ->
// GEMM1 [M x f].[f x d], run under a `sync:` policy (stream, rowsync, tilesync, dataflow).
// Gated (SwiGLU) models multiply an activated gate projection into an up projection: fused
// (one kernel whose blocks multiply the same X tile with both weight tiles and write H) or
// separate (a gate kernel writes G, then the up kernel's epilogue reads G and writes H).
// The activation itself is element-wise in an epilogue and costs no memory traffic.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "workloads/ffn.hpp"
#include "workloads/model_presets.hpp"
#include "workloads/sync/sync.hpp"
#include "workloads/workload.hpp"

namespace tilesim {

GemmSpec projection_gemm_spec(const ConfigNode& ffn, const char* key, std::uint32_t m, std::uint32_t n,
                              std::uint32_t k, const std::string& dtype, const ArchSpec& arch, bool own_order) {
  // The GEMM keys a user may give per projection (the shape comes from the chain).
  std::vector<std::string> keys{"tile", "stages", "split_k", "blocks_per_sm", "threads", "registers_per_thread",
                                "shared_memory_bytes", "mainloop", "persistent", "schedule"};
  if (own_order) keys.push_back("order");
  YAML::Node node(YAML::NodeType::Map);
  if (auto user = ffn.find(key)) {
    user->allow_keys(keys);
    node = YAML::Clone(user->raw());
    node.remove("order");  // the caller's: a launch order, not a GEMM key
  }
  if (!node["tile"]) node["tile"] = YAML::Load("[" + std::to_string(default_tile_rows(m, arch)) + ", 128, 64]");
  // The FFN's `mainloop:` applies to both projections unless one names its own.
  if (!node["mainloop"] && ffn.has("mainloop")) node["mainloop"] = YAML::Clone(ffn.at("mainloop").raw());
  node["kind"] = "gemm";
  node["m"] = m;
  node["n"] = n;
  node["k"] = k;
  node["dtype"] = dtype;
  node["layout"] = YAML::Load("{a: row, b: col, c: row}");  // nn.Linear weights: [out x in] row-major
  return parse_gemm(ConfigNode(node, ffn.file(), ffn.path_of(key)), arch);
}

namespace {

// Persistent GEMMs (gemm0/gemm1 `persistent:`): after the sync policy, which places its waits
// and posts on the tiles' steps, each GEMM kernel becomes its programs; the waits and posts
// travel with the steps, so a program that waits holds its SM slot, as on the hardware.
void make_programs(const ConfigNode& n, const GemmSpec& g0, const GemmSpec& g1, const LaunchOrder& order, Workload& w) {
  if (!g0.persistent && !g1.persistent) return;
  for (Kernel& k : w.kernels) {
    const bool consumer = k.name == "gemm1";
    const bool producer = k.name == "gemm0" || k.name == "gate_up" || k.name == "gate" || k.name == "up";
    if (k.name == "dataflow")
      n.fail_key(g0.persistent ? "gemm0" : "gemm1", "persistent GEMMs (persistent:, or a CUTLASS 3 schedule) with sync: dataflow are not modelled (the "
                                                     "fused kernel's blocks take tickets, not a fixed tile sequence)");
    const std::uint32_t programs = consumer ? g1.persistent : producer ? g0.persistent : 0;
    if (programs) make_persistent(k, programs, order.sequence(k.grid_m, k.grid_n), order.dynamic());
  }
}

}  // namespace

FfnShape parse_ffn_shape(const ConfigNode& n) {
  n.allow_keys({"kind", "model", "d", "f", "m", "dtype", "gated", "gate_fusion", "gemm0", "gemm1", "mainloop"});
  FfnShape s;
  if (n.has("model")) {
    std::vector<std::string> names;
    for (const ModelPreset& p : model_presets()) names.push_back(p.name);
    s.dims = *find_model_preset(n.choice("model", names));
  } else if (!n.has("d") || !n.has("f")) {
    n.fail("expected `model:` (" + model_preset_names() + ") or both `d:` and `f:`");
  }
  s.dims.d = static_cast<std::uint32_t>(n.integer_or("d", s.dims.d, 1, 1 << 20));
  s.dims.f = static_cast<std::uint32_t>(n.integer_or("f", s.dims.f, 1, 1 << 20));
  s.gated = n.boolean_or("gated", s.dims.gated);
  s.fusion = n.choice_or("gate_fusion", "fused", {"fused", "separate", "concat"});
  if (n.has("gate_fusion") && !s.gated) n.fail_key("gate_fusion", "only meaningful with gated: true");
  s.m = static_cast<std::uint32_t>(n.integer("m", 1, 1 << 22));
  s.dtype = n.string_or("dtype", "fp16");
  return s;
}

// What the two projections must agree on, and the fused gate+up kernel's doubled weight stages.
void check_ffn_gemms(const ConfigNode& n, const FfnShape& s, GemmSpec& g0, const GemmSpec& g1, const ArchSpec& arch) {
  if (g0.bm != g1.bm)
    n.fail_key("gemm1", "tile bm (" + std::to_string(g1.bm) + ") must equal gemm0's (" + std::to_string(g0.bm) +
                            ") so that consumer rows match producer rows");
  if (s.gated && s.fusion == "fused" && !(n.has("gemm0") && n.at("gemm0").has("shared_memory_bytes"))) {
    // Both weight tiles live in shared memory: the B part of each stage doubles.
    g0.resources.smem_bytes += static_cast<std::uint64_t>(g0.stages) * g0.bk * g0.bn * dtype_bits(g0.b_dtype()) / 8;
    if (g0.resources.smem_bytes > arch.sm.max_shared_memory_per_block)
      n.fail_key("gemm0", "the fused gate+up projection needs " + std::to_string(g0.resources.smem_bytes) +
                              " bytes of shared memory per block, over " + arch.name + "'s limit of " +
                              std::to_string(arch.sm.max_shared_memory_per_block));
  }
}

namespace {

// The launch order of each GEMM and, for a chain order file, the fused kernel's ticket order;
// refuses what the sync policy cannot combine with them.
struct FfnOrder {
  std::optional<ChainOrder> chain;
  std::unique_ptr<LaunchOrder> order;
};

FfnOrder resolve_ffn_order(const WorkloadContext& ctx, const GemmSpec& g0) {
  const ConfigNode order_node = order_node_or_row(ctx);
  FfnOrder o;
  o.chain = chain_order_of(order_node, ctx.base_dir);
  // A chain order file orders the fused kernel's tickets (sync: dataflow); each GEMM alone keeps
  // row order, which only the chain's validation and persistent programs would look at.
  o.order = make_order(o.chain ? ConfigNode(YAML::Load("{kind: row}"), ctx.workload.file(), "order") : order_node,
                       ctx.base_dir);
  const std::optional<ConfigNode>& sync = ctx.sync;
  if (o.chain && (!sync || sync->string_or("kind", "stream") != "dataflow"))
    order_node.at("path").fail("'" + o.chain->name + "' is a chain order file: it orders the tiles of one fused kernel, " +
                               "so it needs `sync: {kind: dataflow}` (two kernels interleave as the hardware runs them)");
  if (sync && sync->string_or("kind", "stream") != "stream" && g0.split_k > 1)
    ctx.workload.at("gemm0").fail_key("split_k", "a producer with split-K posts its tiles only after the last slice; use split_k 1 with sync " +
                                                     sync->string_or("kind", ""));
  return o;
}

}  // namespace

void add_ffn_kernels(const ConfigNode& n, const FfnShape& s, GemmSpec& g0, const GemmSpec& g1, const LaunchOrder& order,
                     Workload& w, ChainPair& pair, DeviceAllocator& alloc, const FfnInput& in) {
  const auto bits = static_cast<std::uint16_t>(dtype_bits(g0.a_dtype()));
  const auto add = [&](const std::string& name, std::uint32_t rows, std::uint32_t cols, bool col_major) {
    return add_matrix(w, alloc, in.prefix + name, rows, cols, bits, col_major);
  };
  const std::uint32_t m = s.m, d = s.dims.d, f = s.dims.f;
  const std::uint32_t x = in.x != kNoTensor ? in.x : add("X", m, d, false);
  if (!s.gated) {
    const std::uint32_t w0 = add("W0", d, f, true), h = add("H", m, f, false);
    add_gemm_kernel(g0, {x, w0, h}, order, w, in.prefix + "gemm0", in.allow_lazy);
  } else if (s.fusion == "fused") {
    const std::uint32_t wg = add("W_gate", d, f, true), wu = add("W_up", d, f, true);
    const std::uint32_t h = add("H", m, f, false);
    GemmOperands ops{x, wg, h};
    ops.b2 = wu;
    add_gemm_kernel(g0, ops, order, w, in.prefix + "gate_up", in.allow_lazy);
  } else if (s.fusion == "concat") {
    // One GEMM with the gate and up weights side by side writes [G | U]; GEMM1 reads both halves.
    if (f % g0.bn)
      n.fail_key("gate_fusion", "concat needs f (" + std::to_string(f) + ") to be a multiple of gemm0's bn (" +
                                    std::to_string(g0.bn) + ") so no tile straddles the two halves");
    GemmSpec wide = g0;
    wide.n = 2 * f;
    const std::uint32_t wgu = add("W_gate_up", d, 2 * f, true), gu = add("GU", m, 2 * f, false);
    add_gemm_kernel(wide, {x, wgu, gu}, order, w, in.prefix + "gate_up", in.allow_lazy);
    pair.producer_stride_tiles = f / g0.bn;
    g0 = wide;
  } else {
    const std::uint32_t wg = add("W_gate", d, f, true), wu = add("W_up", d, f, true);
    const std::uint32_t gt = add("G", m, f, false), h = add("H", m, f, false);
    add_gemm_kernel(g0, {x, wg, gt}, order, w, in.prefix + "gate", in.allow_lazy);
    GemmOperands up{x, wu, h};
    up.epilogue_load = gt;
    add_gemm_kernel(g0, up, order, w, in.prefix + "up", in.allow_lazy);
  }
  const std::uint32_t h = static_cast<std::uint32_t>(w.tensors.size() - 1);
  const std::uint32_t w1 = add("W1", f, d, true), y = add("Y", m, d, false);
  GemmOperands down{h, w1, y};
  if (s.gated && s.fusion == "concat") down.a_second_col_offset = f;
  down.epilogue_load = in.residual;
  add_gemm_kernel(g1, down, order, w, in.prefix + "gemm1", in.allow_lazy);
}

namespace {

// Hands the kernels to the sync policy, which decides streams, semaphores and fusion.
void apply_ffn_sync(const WorkloadContext& ctx, const GemmSpec& g0, const GemmSpec& g1, std::optional<ChainOrder> chain,
                    ChainPair& pair, Workload& w) {
  pair.consumer = std::move(w.kernels.back());
  w.kernels.pop_back();
  for (Kernel& k : w.kernels) pair.producers.push_back(std::move(k));
  w.kernels.clear();
  pair.tiles_m = g0.tiles_m();
  pair.producer_tiles_n = g0.tiles_n();  // for concat: both halves
  pair.producer_bn = g0.bn;
  pair.consumer_bk = g1.bk;
  pair.consumer_tiles_k = g1.tiles_k();
  pair.consumer_split_k = g1.split_k;
  pair.chain_order = std::move(chain);
  apply_sync(ctx.sync ? &*ctx.sync : nullptr, pair, w);
}

Workload build_ffn(const WorkloadContext& ctx) {
  const ConfigNode& n = ctx.workload;
  const FfnShape s = parse_ffn_shape(n);
  GemmSpec g0 = projection_gemm_spec(n, "gemm0", s.m, s.dims.f, s.dims.d, s.dtype, ctx.arch);
  const GemmSpec g1 = projection_gemm_spec(n, "gemm1", s.m, s.dims.d, s.dims.f, s.dtype, ctx.arch);
  check_ffn_gemms(n, s, g0, g1, ctx.arch);
  FfnOrder o = resolve_ffn_order(ctx, g0);
  Workload w;
  ChainPair pair;
  DeviceAllocator alloc;
  FfnInput in;
  // Stream order leaves the kernels as built; other syncs add semaphores, persistence rewrites them.
  in.allow_lazy = (!ctx.sync || ctx.sync->string_or("kind", "stream") == "stream") && !g0.persistent && !g1.persistent;
  add_ffn_kernels(n, s, g0, g1, *o.order, w, pair, alloc, in);
  apply_ffn_sync(ctx, g0, g1, std::move(o.chain), pair, w);
  make_programs(n, g0, g1, *o.order, w);
  return w;
}

const bool registered = register_workload("ffn",
    "a transformer FFN: two chained GEMMs (gated or not) under a sync policy", build_ffn);

}  // namespace

}  // namespace tilesim
