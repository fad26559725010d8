#pragma once
// The attention generator (`kind: attention`): O = softmax(Q K^T) V for batch B, heads H and
// KV heads Hkv (GQA: query head h reads KV head h / (H / Hkv)), optionally causal.
//
//   unfused: three kernels on one stream: S = Q K^T (batched GEMM), softmax(S) -> P, O = P V.
//   fused:   one flash-attention kernel; a block owns one Q tile of one (b, h) and streams the
//            K and V tiles through shared memory, so S and P never leave the SM.
//   split_kv (fused only): flash-decoding; N blocks per Q tile each cover 1/N of the KV tiles
//            and write an fp32 partial O tile and its log-sum-exp, then a combine kernel on the
//            same stream reads the N partials of each output tile and writes O.
//
// Layouts: Q and O are [B*H slabs of seq_q x head_dim], K and V [B*Hkv slabs of seq_kv x
// head_dim], all row-major (batch index b*H + h, resp. b*Hkv + kvh). The query heads of a GQA
// group read the very same K/V slab, so the L2 sees identical addresses. The modelling choices
// are documented in docs/configuration.md ("workload: {kind: attention}").
#include <cstdint>
#include <optional>

#include "common/config_node.hpp"
#include "models/arch.hpp"
#include "workloads/gemm.hpp"
#include "workloads/kernel.hpp"
#include "workloads/orders/order.hpp"
#include "workloads/workload.hpp"

namespace tilesim {

enum class AttentionForm : std::uint8_t { unfused, fused };

/// The unfused form's softmax kernel: a block per `rows` rows of S of one head, in `chunk`-
/// column steps. A row tile of at most `single_pass_bytes` is kept in shared memory (one
/// pass: load every chunk, then write every P chunk); a larger one takes two passes over S
/// (online max/sum, then reload, normalise, write).
struct SoftmaxSpec {
  std::uint32_t rows = 4;             ///< rows of S per block (clipped to seq_q)
  std::uint32_t chunk = 1024;         ///< columns per step (clipped to seq_kv)
  std::uint32_t stages = 2;           ///< chunks in flight in the two-pass form
  std::uint64_t single_pass_bytes = 48 * 1024;
  bool single_pass = true;            ///< derived: rows x seq_kv x S element fits single_pass_bytes
  BlockResources resources;
  std::uint32_t blocks_per_sm = 0;
};

struct AttentionSpec {
  std::uint32_t batch = 1, heads = 1, kv_heads = 1;
  std::uint32_t seq_q = 1, seq_kv = 1, head_dim = 64;
  Dtype dtype = Dtype::fp16;
  bool causal = false;
  AttentionForm form = AttentionForm::fused;
  std::uint32_t split_kv = 1;

  // Fused form.
  std::uint32_t block_q = 128, block_kv = 128, stages = 2;
  BlockResources resources;
  std::uint32_t blocks_per_sm = 0;
  MainLoopChoice mainloop;
  /// Causal: the KV tiles that cross the diagonal run in a loop of their own, whose software
  /// pipeline starts only after the first loop's has drained (`masked_loop: separate`, Triton's
  /// flash attention: the off-diagonal loop, then the masked one); `shared`: one pipeline.
  bool masked_loop_separate = false;
  /// Persistent programs (`persistent:`, fused form, 0: one block per tile), FlashAttention-3's
  /// grid: they take the order's tiles by stride, or from a counter (`order: {kind: fa3,
  /// scheduler: lpt}`).
  std::uint32_t persistent = 0;

  // Unfused form: the two GEMMs (m, n, k, batch = B*H filled in) and the softmax.
  GemmSpec qk, pv;
  SoftmaxSpec softmax;
  /// `qk.order` / `pv.order`: a GEMM's own launch order, overriding the experiment's `order:`.
  std::optional<ConfigNode> qk_order, pv_order;

  std::uint32_t group() const { return heads / kv_heads; }
  std::uint32_t batch_heads() const { return batch * heads; }
  std::uint32_t q_tiles() const { return (seq_q + block_q - 1) / block_q; }
  std::uint32_t kv_tiles() const { return (seq_kv + block_kv - 1) / block_kv; }
  /// KV rows [0, kv_end) that q rows [.., q_end) attend to: causal query i sees kv j <= i + (seq_kv - seq_q).
  std::uint32_t kv_end(std::uint32_t q_end) const;
  /// Unmasked (query, key) pairs of one head: seq_q x seq_kv, or fewer when causal.
  std::uint64_t pairs_per_head() const;
  /// S's element type (unfused): fp16 for fp16, else bf16. O's type is the same.
  Dtype score_dtype() const { return dtype == Dtype::fp16 ? Dtype::fp16 : Dtype::bf16; }
  /// Shared memory of the fused kernel's block: stages x (K tile + V tile) + the Q tile.
  std::uint64_t fused_smem_bytes() const;
};

/// Parses and validates a `kind: attention` node against the arch; errors name the key.
AttentionSpec parse_attention(const ConfigNode& node, const ArchSpec& arch);

/// Where one of the attention's [rows x head_dim] operands (Q, K, V, O) lives, per slab
/// z = b x heads + h (heads: H for Q and O, Hkv for K and V).
struct AttentionOperand {
  std::uint32_t tensor = kNoTensor;
  /// false: slab z is batch z of the tensor (the standalone generator's contiguous slabs).
  /// true: the tensor is a view of a layer's token-major activations [tokens x heads*D] with one
  /// batch per head (column_view); slab z is batch h at rows [b x seq, (b + 1) x seq).
  bool token_major = false;
  std::uint32_t heads = 1;  ///< token-major: heads per token
  std::uint32_t seq = 0;    ///< token-major: rows (tokens) per sequence
  /// Rows [r0, r0 + n) x columns [c0, c0 + cols) of slab z.
  TileAccess rect(std::uint32_t z, std::uint32_t r0, std::uint32_t n, std::uint32_t c0, std::uint32_t cols,
                  AccessKind kind) const;
};

/// The attention's operands. K and V hold positions [context, seq_kv) of each sequence; the
/// positions before `context` come from a KV cache (k_cache, v_cache: slabs [B*Hkv x context x
/// D], batch b*Hkv + kv head), which a decode step reads besides its own new K and V.
struct AttentionIo {
  AttentionOperand q, k, v;
  AttentionOperand o;  ///< tensor kNoTensor: add_attention_kernels allocates O as B*H slabs
  std::uint32_t k_cache = kNoTensor, v_cache = kNoTensor;
  std::uint32_t context = 0;
};

/// Appends the attention's kernels (unfused: qk, softmax, pv; fused: attention, and with
/// split_kv its combine), named and with their scratch tensors (S, P, O_partial, LSE) named
/// `prefix` + the standalone generator's names. `order` orders every kernel's grid (the
/// unfused GEMMs' own `order:` replaces it, resolved against `base_dir`). With `allow_lazy`
/// (the caller rewrites no step afterwards) a large fused kernel generates its blocks' programs
/// when dispatched (Kernel::source; lazy_program_bytes() in gemm.hpp).
void add_attention_kernels(const AttentionSpec& a, AttentionIo io, const LaunchOrder& order,
                           const ConfigNode& order_node, const std::string& base_dir, Workload& w,
                           DeviceAllocator& alloc, const std::string& prefix, bool allow_lazy = false);

}  // namespace tilesim
