#include "workloads/attention.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "workloads/orders/order.hpp"
#include "workloads/workload.hpp"

namespace tilesim {

namespace {

constexpr std::int64_t kMaxSeq = 1 << 22;


std::string str(std::uint64_t v) { return std::to_string(v); }

/// MMA granularity along K for the dtype, in elements (16 fp16/bf16, 32 fp8).
std::uint32_t k_granule(const ArchSpec& arch, Dtype d) {
  return std::max(1u, arch.compute.mma_k_bytes * 8 / static_cast<std::uint32_t>(dtype_bits(d)));
}

/// Builds the `kind: gemm` node of one of the unfused GEMMs and parses it with parse_gemm, so
/// the tile, stage and resource rules are the GEMM generator's. The user's keys are shared
/// (not copied) into the new node, so errors keep their line numbers; the path is workload.qk/pv.
GemmSpec parse_sub_gemm(const ConfigNode& parent, const char* key, std::uint32_t m, std::uint32_t n, std::uint32_t k,
                        std::uint32_t batch, Dtype dtype, const ArchSpec& arch, std::optional<ConfigNode>& order) {
  YAML::Node y(YAML::NodeType::Map);
  y["kind"] = "gemm";
  y["m"] = m;
  y["n"] = n;
  y["k"] = k;
  y["dtype"] = std::string(dtype_name(dtype));
  bool has_tile = false;
  if (auto sub = parent.find(key)) {
    sub->allow_keys({"tile", "stages", "threads", "registers_per_thread", "blocks_per_sm", "shared_memory_bytes", "order"});
    for (const auto& kv : sub->raw()) {
      const std::string name = kv.first.as<std::string>();
      if (name == "order") continue;
      y[name] = kv.second;
    }
    has_tile = sub->has("tile");
    order = sub->find("order");
  }
  if (!has_tile) {
    // Default: 128 x 128 x 64, shrunk to the padded problem where it is smaller.
    const std::uint32_t mg = std::max(16u, arch.compute.mma_m), ng = std::max(8u, arch.compute.mma_n);
    const std::uint32_t kg = k_granule(arch, dtype);
    YAML::Node t(YAML::NodeType::Sequence);
    t.push_back(std::min(128u, round_up(m, mg)));
    t.push_back(std::min(128u, round_up(n, ng)));
    t.push_back(std::min(round_up(64u, kg), round_up(k, kg)));
    y["tile"] = t;
  }
  GemmSpec g = parse_gemm(ConfigNode(y, parent.file(), parent.path_of(key)), arch);
  g.batch = batch;
  g.out_dtype = dtype == Dtype::fp16 ? Dtype::fp16 : Dtype::bf16;
  return g;
}

void fused_only(const ConfigNode& n, const char* key) {
  if (n.has(key)) n.fail_key(key, std::string(key) + " is only meaningful with form: fused");
}
void unfused_only(const ConfigNode& n, const char* key) {
  if (n.has(key)) n.fail_key(key, std::string(key) + " is only meaningful with form: unfused");
}

}  // namespace

std::uint32_t AttentionSpec::kv_end(std::uint32_t q_end) const {
  if (!causal) return seq_kv;
  return std::min<std::uint64_t>(seq_kv, static_cast<std::uint64_t>(q_end) + (seq_kv - seq_q));
}

std::uint64_t AttentionSpec::pairs_per_head() const {
  if (!causal) return static_cast<std::uint64_t>(seq_q) * seq_kv;
  // Row i sees i + 1 + (seq_kv - seq_q) keys, never more than seq_kv (causal needs seq_kv >= seq_q).
  const std::uint64_t off = seq_kv - seq_q;
  return static_cast<std::uint64_t>(seq_q) * off + static_cast<std::uint64_t>(seq_q) * (seq_q + 1) / 2;
}

std::uint64_t AttentionSpec::fused_smem_bytes() const {
  const std::uint64_t bits = static_cast<std::uint64_t>(dtype_bits(dtype));
  const std::uint64_t kv_tile = static_cast<std::uint64_t>(block_kv) * head_dim * bits / 8;
  const std::uint64_t q_tile = static_cast<std::uint64_t>(block_q) * head_dim * bits / 8;
  return stages * 2 * kv_tile + q_tile;
}

namespace {

/// The problem itself: batch, heads, sequence lengths, head size, dtype and masking, each
/// checked as it is read (so the first bad key is the one reported).
void parse_problem(const ConfigNode& n, const ArchSpec& arch, AttentionSpec& a) {
  a.batch = static_cast<std::uint32_t>(n.integer_or("batch", 1, 1, 65535));
  a.heads = static_cast<std::uint32_t>(n.integer("heads", 1, 4096));
  a.kv_heads = static_cast<std::uint32_t>(n.integer_or("kv_heads", a.heads, 1, 4096));
  if (a.heads % a.kv_heads)
    n.fail_key("kv_heads", "kv_heads " + str(a.kv_heads) + " does not divide heads " + str(a.heads) +
                               " (each KV head serves heads / kv_heads query heads)");
  if (static_cast<std::uint64_t>(a.batch) * a.heads > (1u << 24))
    n.fail_key("heads", "batch x heads = " + str(static_cast<std::uint64_t>(a.batch) * a.heads) + " exceeds 16777216");
  a.seq_q = static_cast<std::uint32_t>(n.integer("seq_q", 1, kMaxSeq));
  a.seq_kv = static_cast<std::uint32_t>(n.integer_or("seq_kv", a.seq_q, 1, kMaxSeq));
  a.head_dim = static_cast<std::uint32_t>(n.integer("head_dim", 8, 1024));
  if (a.head_dim % 8) n.fail_key("head_dim", "head_dim must be a multiple of 8, got " + str(a.head_dim));
  a.dtype = *dtype_from_name(n.choice_or("dtype", "fp16", {"fp16", "bf16", "fp8"}));
  if (!arch.supports(a.dtype))
    n.fail_key("dtype", "dtype " + std::string(dtype_name(a.dtype)) + " is not supported by arch " + arch.name);
  a.causal = n.boolean_or("causal", false);
  if (a.causal && a.seq_q > a.seq_kv)
    n.fail_key("causal", "causal attention needs seq_kv >= seq_q (got seq_q " + str(a.seq_q) + ", seq_kv " +
                             str(a.seq_kv) + "): the first query rows would see no key");
}

/// The unfused form's softmax kernel: its row tile, and whether that tile fits in shared
/// memory whole (one pass over S) or streams through `stages` chunk buffers (two passes).
/// Errors name keys of `softmax:` even when the section is absent (the defaults don't fit).
void parse_softmax(const ConfigNode& n, const ArchSpec& arch, AttentionSpec& a) {
  SoftmaxSpec& s = a.softmax;
  const std::uint64_t s_bits = static_cast<std::uint64_t>(dtype_bits(a.score_dtype()));
  if (auto sm = n.find("softmax")) {
    sm->allow_keys({"rows", "chunk", "stages", "single_pass_bytes", "threads", "registers_per_thread", "blocks_per_sm"});
    s.rows = static_cast<std::uint32_t>(sm->integer_or("rows", 4, 1, 4096));
    s.chunk = static_cast<std::uint32_t>(sm->integer_or("chunk", 1024, 1, 1 << 20));
    s.stages = static_cast<std::uint32_t>(sm->integer_or("stages", 2, 1, 16));
    s.single_pass_bytes = sm->bytes_or("single_pass_bytes", s.single_pass_bytes, 0, 1ull << 30);
    s.resources.threads = static_cast<std::uint32_t>(sm->integer_or("threads", 256, 32, 1024));
    s.resources.regs_per_thread = static_cast<std::uint32_t>(sm->integer_or("registers_per_thread", 64, 16, 255));
    s.blocks_per_sm = static_cast<std::uint32_t>(sm->integer_or("blocks_per_sm", 0, 0, arch.sm.max_blocks));
  } else {
    s.resources.threads = 256;
    s.resources.regs_per_thread = 64;
  }
  const ConfigNode sm_node = n.has("softmax") ? n.at("softmax") : ConfigNode(YAML::Node(), n.file(), n.path_of("softmax"));
  s.rows = std::min(s.rows, a.seq_q);
  s.chunk = std::min(s.chunk, a.seq_kv);
  if (s.single_pass_bytes > arch.sm.max_shared_memory_per_block)
    sm_node.fail_key("single_pass_bytes", "exceeds " + arch.name + "'s shared memory limit of " +
                                              str(arch.sm.max_shared_memory_per_block) + " bytes per block");
  const std::uint64_t row_tile = s.rows * static_cast<std::uint64_t>(a.seq_kv) * s_bits / 8;
  s.single_pass = row_tile <= s.single_pass_bytes;
  s.resources.smem_bytes = s.single_pass ? row_tile : s.stages * (s.rows * static_cast<std::uint64_t>(s.chunk) * s_bits / 8);
  if (s.resources.smem_bytes > arch.sm.max_shared_memory_per_block)
    sm_node.fail_key("chunk", "two-pass softmax needs " + str(s.resources.smem_bytes) + " bytes of shared memory (" +
                                  str(s.stages) + " stages of " + str(s.rows) + " x " + str(s.chunk) +
                                  " S elements), more than " + arch.name + "'s limit of " +
                                  str(arch.sm.max_shared_memory_per_block));
  if (s.resources.regs_per_thread > arch.sm.max_registers_per_thread)
    sm_node.fail_key("registers_per_thread", "exceeds " + arch.name + "'s limit of " + str(arch.sm.max_registers_per_thread));
}

/// form: unfused: QK^T and PV as batched GEMMs (the GEMM generator's rules) around a softmax
/// kernel; the fused kernel's keys are refused first.
void parse_unfused(const ConfigNode& n, const ArchSpec& arch, AttentionSpec& a) {
  for (const char* key : {"split_kv", "block_q", "block_kv", "stages", "threads", "registers_per_thread", "blocks_per_sm",
                          "mainloop", "shared_memory_bytes", "persistent", "masked_loop"})
    fused_only(n, key);
  const std::uint32_t bh = a.batch_heads();
  a.qk = parse_sub_gemm(n, "qk", a.seq_q, a.seq_kv, a.head_dim, bh, a.dtype, arch, a.qk_order);
  a.pv = parse_sub_gemm(n, "pv", a.seq_q, a.head_dim, a.seq_kv, bh, a.dtype, arch, a.pv_order);
  parse_softmax(n, arch, a);
}

/// The fused kernel's tiles: block_q and block_kv, each a whole number of MMAs and no larger
/// than its sequence padded to them, and the pipeline depth; defaults are then shrunk until
/// the tiles fit in shared memory (a value the user gave is never changed).
void parse_fused_tiles(const ConfigNode& n, const ArchSpec& arch, AttentionSpec& a) {
  const std::uint32_t mg = std::max(16u, arch.compute.mma_m);
  const std::uint32_t kvg = std::max(16u, k_granule(arch, a.dtype));
  const std::uint32_t q_pad = round_up(a.seq_q, mg), kv_pad = round_up(a.seq_kv, kvg);
  a.block_q = static_cast<std::uint32_t>(n.integer_or("block_q", std::min(128u, q_pad), 16, 4096));
  if (a.block_q % 16) n.fail_key("block_q", "block_q must be a multiple of 16, got " + str(a.block_q));
  if (a.block_q > q_pad)
    n.fail_key("block_q", "block_q " + str(a.block_q) + " is larger than seq_q=" + str(a.seq_q) +
                              " padded to the MMA granularity (" + str(q_pad) + ")");
  a.block_kv = static_cast<std::uint32_t>(n.integer_or("block_kv", std::min(128u, kv_pad), 16, 4096));
  if (a.block_kv % kvg)
    n.fail_key("block_kv", "block_kv must be a multiple of " + str(kvg) + " for " + std::string(dtype_name(a.dtype)) +
                               " MMAs, got " + str(a.block_kv));
  if (a.block_kv > kv_pad)
    n.fail_key("block_kv", "block_kv " + str(a.block_kv) + " is larger than seq_kv=" + str(a.seq_kv) +
                               " padded to the MMA granularity (" + str(kv_pad) + ")");
  a.stages = static_cast<std::uint32_t>(n.integer_or("stages", 2, 1, 16));
  // Defaults shrink to the arch's shared memory (FlashAttention-2 runs 128 x 64 tiles on the
  // 100 KiB parts): block_kv halves down to 64, then stages drop to 1, then block_kv halves on.
  const bool auto_kv = !n.has("block_kv"), auto_stages = !n.has("stages");
  while (a.fused_smem_bytes() > arch.sm.max_shared_memory_per_block) {
    if (auto_kv && a.block_kv > 64 && a.block_kv % (2 * kvg) == 0) a.block_kv /= 2;
    else if (auto_stages && a.stages > 1) --a.stages;
    else if (auto_kv && a.block_kv % (2 * kvg) == 0) a.block_kv /= 2;
    else break;
  }
}

/// split_kv (flash-decoding): read after the tiles are final, since it counts KV tiles; every
/// split must get at least one of them.
void parse_split_kv(const ConfigNode& n, AttentionSpec& a) {
  a.split_kv = static_cast<std::uint32_t>(n.integer_or("split_kv", 1, 1, 256));
  const std::uint32_t kt = a.kv_tiles();
  if (a.split_kv > kt)
    n.fail_key("split_kv", "split_kv " + str(a.split_kv) + " exceeds the " + str(kt) + " KV tiles (seq_kv " +
                               str(a.seq_kv) + " / block_kv " + str(a.block_kv) + ")");
  if (static_cast<std::uint64_t>(a.split_kv) * a.batch_heads() > (1u << 30))
    n.fail_key("split_kv", "split_kv x batch x heads exceeds 2^30 partial tiles");
  const std::uint32_t per = (kt + a.split_kv - 1) / a.split_kv;
  if ((a.split_kv - 1) * per >= kt)
    n.fail_key("split_kv", "split_kv " + str(a.split_kv) + " leaves an empty split of the " + str(kt) + " KV tiles");
}

/// The fused kernel's launch: threads, registers and shared memory checked against the arch,
/// occupancy, main loop and persistence.
void parse_fused_launch(const ConfigNode& n, const ArchSpec& arch, AttentionSpec& a) {
  const std::uint32_t warps = std::clamp(a.block_q / 16u, 4u, 8u);
  a.resources.threads = static_cast<std::uint32_t>(n.integer_or("threads", warps * 32, 32, 1024));
  a.resources.regs_per_thread = static_cast<std::uint32_t>(n.integer_or("registers_per_thread", 128, 16, 255));
  if (a.resources.regs_per_thread > arch.sm.max_registers_per_thread)
    n.fail_key("registers_per_thread", "exceeds " + arch.name + "'s limit of " + str(arch.sm.max_registers_per_thread));
  a.resources.smem_bytes = n.bytes_or("shared_memory_bytes", a.fused_smem_bytes(), 0, 1ull << 30);
  if (a.resources.smem_bytes > arch.sm.max_shared_memory_per_block)
    n.fail_key(n.has("shared_memory_bytes") ? "shared_memory_bytes" : "stages", "shared memory per block " + str(a.resources.smem_bytes) + " bytes (" + str(a.stages) +
                             " stages of a K and a V tile plus the Q tile) exceeds " + arch.name + "'s limit of " +
                             str(arch.sm.max_shared_memory_per_block) + " bytes");
  a.blocks_per_sm = static_cast<std::uint32_t>(n.integer_or("blocks_per_sm", 0, 0, arch.sm.max_blocks));
  a.mainloop = parse_mainloop(n, arch);
  // Triton's kernels (the wgmma_cp_async kind is its tl.dot) mask the diagonal in a loop of its
  // own; the others pipeline every KV tile in one loop.
  const bool triton = a.mainloop.kind.value_or(arch.compute.default_mainloop) == MainLoop::wgmma_cp_async;
  a.masked_loop_separate = n.choice_or("masked_loop", triton ? "separate" : "shared", {"separate", "shared"}) == "separate";
  if (n.has("persistent") && a.split_kv > 1)
    n.fail_key("persistent", "a persistent kernel with split_kv > 1 is not modelled (FlashAttention-3 launches "
                             "one block per tile when it splits)");
  a.persistent = parse_persistent(n, arch, a.resources, a.blocks_per_sm, "attention");
}

}  // namespace

AttentionSpec parse_attention(const ConfigNode& n, const ArchSpec& arch) {
  n.allow_keys({"kind", "batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "dtype", "causal", "form",
                "split_kv", "block_q", "block_kv", "stages", "threads", "registers_per_thread", "blocks_per_sm", "qk",
                "pv", "softmax", "mainloop", "shared_memory_bytes", "persistent", "masked_loop"});
  AttentionSpec a;
  parse_problem(n, arch, a);
  a.form = n.choice_or("form", "fused", {"unfused", "fused"}) == "fused" ? AttentionForm::fused : AttentionForm::unfused;
  if (a.form == AttentionForm::unfused) {
    parse_unfused(n, arch, a);
    return a;
  }
  for (const char* key : {"qk", "pv", "softmax"}) unfused_only(n, key);
  parse_fused_tiles(n, arch, a);
  parse_split_kv(n, a);
  parse_fused_launch(n, arch, a);
  return a;
}

namespace {

Workload build_attention(const WorkloadContext& ctx) {
  require_stream_sync(ctx);  // one kernel, or kernels in plain stream order
  const AttentionSpec a = parse_attention(ctx.workload, ctx.arch);
  const ConfigNode order_node = order_node_or_row(ctx);
  const auto order = make_order(order_node, ctx.base_dir);

  Workload w;
  DeviceAllocator alloc;
  const std::uint32_t bh = a.batch_heads(), bkv = a.batch * a.kv_heads, D = a.head_dim;
  // Contiguous slabs: batch index b*H + h (Q, O), b*Hkv + h / group (K, V).
  AttentionIo io;
  const auto bits = static_cast<std::uint16_t>(dtype_bits(a.dtype));
  io.q.tensor = add_matrix(w, alloc, "Q", a.seq_q, D, bits, false, bh);
  io.k.tensor = add_matrix(w, alloc, "K", a.seq_kv, D, bits, false, bkv);
  io.v.tensor = add_matrix(w, alloc, "V", a.seq_kv, D, bits, false, bkv);
  // Standalone: nothing rewrites the kernels afterwards, so a large fused kernel may be lazy.
  add_attention_kernels(a, io, *order, order_node, ctx.base_dir, w, alloc, "", true);
  return w;
}

const bool registered = register_workload("attention",
    "multi-head attention: fused (FlashAttention-style) or unfused", build_attention);

}  // namespace

}  // namespace tilesim
