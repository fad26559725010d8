// The attention's kernels (`kind: attention`, and a layer's attention): the unfused form's
// batched GEMMs and softmax, the fused flash-attention kernel, flash-decoding's combine. Where
// the operands live is the caller's (AttentionIo): the standalone generator's slabs, or views
// of a layer's activations with a KV cache.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "workloads/attention.hpp"
#include "workloads/orders/order.hpp"
#include "workloads/workload.hpp"

namespace tilesim {

namespace {

// Softmax work, in fp32 FLOP per element of S: the statistics (max, subtract, exp, add) and
// the write (subtract, exp, scale). The combine kernel's work per partial element: scale, add.
constexpr std::uint64_t kSoftmaxStatFlops = 4, kSoftmaxWriteFlops = 3, kCombineFlops = 2;

std::string str(std::uint64_t v) { return std::to_string(v); }
std::uint16_t bits_of(Dtype d) { return static_cast<std::uint16_t>(dtype_bits(d)); }

}  // namespace

TileAccess AttentionOperand::rect(std::uint32_t z, std::uint32_t r0, std::uint32_t n, std::uint32_t c0,
                                  std::uint32_t cols, AccessKind kind) const {
  if (!token_major) return {tensor, z, r0, c0, n, cols, kind};
  return {tensor, z % heads, z / heads * seq + r0, c0, n, cols, kind};
}

namespace {

/// The scratch tensors of a form: S and P (unfused), O_partial and LSE (split_kv).
struct Scratch {
  std::uint32_t s = 0, p = 0, o_partial = 0, lse = 0;
};

/// Positions [p0, p0 + n) x columns [c0, c0 + cols) of KV slab z of K or V: those before
/// `context` from the cache, the rest from `fresh` (the step's own K or V).
void push_kv(Kernel& K, const AttentionIo& io, const AttentionOperand& fresh, std::uint32_t cache, std::uint32_t z,
             std::uint32_t p0, std::uint32_t n, std::uint32_t c0, std::uint32_t cols) {
  const std::uint32_t cached = p0 < io.context ? std::min(n, io.context - p0) : 0;
  if (cached) K.accesses.push_back({cache, z, p0, c0, cached, cols, AccessKind::load});
  if (cached < n) K.accesses.push_back(fresh.rect(z, p0 + cached - io.context, n - cached, c0, cols, AccessKind::load));
}

/// The dispatch order of a kernel: the policy orders each z-slice's grid_m x grid_n tiles, z slowest.
std::vector<TileCoord> sequence_of(const Kernel& K, const LaunchOrder& order, const ConfigNode& order_node,
                                   const std::string& what, const GridContext& ctx) {
  try {
    return order.sequence_in(K.grid_m, K.grid_n, ctx);
  } catch (const InputError& e) {
    if (std::string_view(e.what()).starts_with(order_node.file())) throw;  // already names its key
    order_node.fail("for the " + what + " (" + str(K.grid_m) + "x" + str(K.grid_n) + " tile grid): " + e.what());
  }
}

void set_dispatch(Kernel& K, const std::vector<TileCoord>& seq) {
  K.dispatch.reserve(seq.size() * K.grid_z);
  for (std::uint32_t z = 0; z < K.grid_z; ++z)
    for (const TileCoord& t : seq)
      K.dispatch.push_back(!is_tile(t) ? kNoBlock : (z * K.grid_m + t.m) * K.grid_n + t.n);
}

void linear_dispatch(Kernel& K) {
  K.dispatch.resize(K.blocks.size());
  for (std::uint32_t i = 0; i < K.dispatch.size(); ++i) K.dispatch[i] = i;
}

Block open_block(const Kernel& K, std::uint32_t tm, std::uint32_t tn, std::uint32_t tz) {
  Block b;
  b.first_step = static_cast<std::uint32_t>(K.steps.size());
  b.tile_m = tm;
  b.tile_n = tn;
  b.tile_z = tz;
  return b;
}

void close_block(Kernel& K, Block b) {
  b.num_steps = static_cast<std::uint32_t>(K.steps.size()) - b.first_step;
  K.blocks.push_back(b);
}

/// A step over the accesses appended to K since `first_access`.
void close_step(Kernel& K, std::uint32_t first_access, std::uint64_t flops, std::uint32_t softmax_elems = 0,
                std::uint32_t epilogue_elems = 0) {
  Step s;
  s.first_access = first_access;
  s.num_accesses = static_cast<std::uint32_t>(K.accesses.size()) - first_access;
  s.flops = flops;
  s.softmax_elems = softmax_elems;
  s.epilogue_elems = epilogue_elems;
  K.steps.push_back(s);
}

void add_step(Kernel& K, std::initializer_list<TileAccess> accesses, std::uint64_t flops,
              std::uint32_t softmax_elems = 0, std::uint32_t epilogue_elems = 0) {
  const auto first = static_cast<std::uint32_t>(K.accesses.size());
  for (const TileAccess& a : accesses) K.accesses.push_back(a);
  close_step(K, first, flops, softmax_elems, epilogue_elems);
}

std::uint32_t access_count(const Kernel& K) { return static_cast<std::uint32_t>(K.accesses.size()); }

/// One of the unfused batched GEMMs over z = b*H + h. QK^T: A = Q, B = K^T (K read as [n, k]
/// rectangles of KV slab z / group), C = S; causal skips the output tiles wholly above the
/// diagonal (they exit at once). PV: A = P, B = V, C = O; causal stops the k loop at the
/// diagonal. Partially masked tiles are computed whole.
void add_attention_gemm(const AttentionSpec& a, const GemmSpec& g, bool qk, const AttentionOperand& A,
                        const AttentionIo& io, const AttentionOperand& C, const LaunchOrder& order,
                        const ConfigNode& order_node, Workload& w, const std::string& name) {
  Kernel K;
  K.name = name;
  K.grid_m = g.tiles_m();
  K.grid_n = g.tiles_n();
  K.grid_z = g.batch;
  {
    const std::uint64_t blocks = std::uint64_t{K.grid_m} * K.grid_n * K.grid_z;
    check_workload_memory("this attention GEMM (" + name + ")", blocks, blocks * g.tiles_k(), 3 * blocks * g.tiles_k(),
                          "reduce seq_q, seq_kv, the heads or the batch");
  }
  K.compute_dtype = g.dtype;
  K.stages = g.stages;
  K.resources = g.resources;
  K.blocks_per_sm = g.blocks_per_sm;
  K.total_flops = 2ull * a.pairs_per_head() * a.head_dim * a.batch_heads();
  const std::uint64_t step_flops = 2ull * g.bm * g.bn * g.bk;
  const std::uint32_t group = a.group();
  for (std::uint32_t z = 0; z < K.grid_z; ++z)
    for (std::uint32_t tm = 0; tm < K.grid_m; ++tm)
      for (std::uint32_t tn = 0; tn < K.grid_n; ++tn) {
        Block b = open_block(K, tm, tn, z);
        const std::uint32_t m0 = tm * g.bm, rows = std::min(g.bm, g.m - m0);
        const std::uint32_t n0 = tn * g.bn, cols = std::min(g.bn, g.n - n0);
        const std::uint32_t visible = a.kv_end(m0 + rows);  // keys the tile's last query row sees
        if (qk && n0 >= visible) {                           // wholly masked: early exit
          close_block(K, b);
          continue;
        }
        const std::uint32_t k_end = qk ? g.k : visible;
        for (std::uint32_t k0 = 0; k0 < k_end; k0 += g.bk) {
          const std::uint32_t depth = std::min(g.bk, g.k - k0);
          const std::uint32_t first = access_count(K);
          K.accesses.push_back(A.rect(z, m0, rows, k0, depth, AccessKind::load));
          // B: K's positions n0.. (head dims k0..) for QK^T, V's positions k0.. (dims n0..) for PV.
          if (qk) push_kv(K, io, io.k, io.k_cache, z / group, n0, cols, k0, depth);
          else push_kv(K, io, io.v, io.v_cache, z / group, k0, depth, n0, cols);
          close_step(K, first, step_flops);
        }
        add_step(K, {C.rect(z, m0, rows, n0, cols, AccessKind::store)}, 0);
        close_block(K, b);
      }
  set_dispatch(K, sequence_of(K, order, order_node, name + " GEMM", {}));
  w.kernels.push_back(std::move(K));
}

/// softmax(S) -> P: a block per `rows` rows of one head's S, in `chunk`-column steps over the
/// columns its last row sees. Single pass: each chunk is loaded once into shared memory (all in
/// flight at once), then each P chunk is computed and stored. Two passes: the chunks stream
/// through `stages` buffers computing the running max and sum, then stream again to write P.
void add_softmax(const AttentionSpec& a, const Scratch& t, Workload& w, const std::string& name) {
  const SoftmaxSpec& s = a.softmax;
  Kernel K;
  K.name = name;
  K.grid_m = (a.seq_q + s.rows - 1) / s.rows;
  K.grid_n = 1;
  K.grid_z = a.batch_heads();
  K.compute_dtype = Dtype::fp32;
  K.resources = s.resources;
  K.blocks_per_sm = s.blocks_per_sm;
  K.total_flops = (kSoftmaxStatFlops + kSoftmaxWriteFlops) * a.pairs_per_head() * a.batch_heads();
  const std::uint64_t chunk_elems = static_cast<std::uint64_t>(s.rows) * s.chunk;
  std::uint32_t max_chunks = 1;
  for (std::uint32_t z = 0; z < K.grid_z; ++z)
    for (std::uint32_t tm = 0; tm < K.grid_m; ++tm) {
      Block b = open_block(K, tm, 0, z);
      const std::uint32_t r0 = tm * s.rows, rows = std::min(s.rows, a.seq_q - r0);
      const std::uint32_t extent = a.kv_end(r0 + rows);
      const std::uint32_t chunks = (extent + s.chunk - 1) / s.chunk;
      max_chunks = std::max(max_chunks, chunks);
      const auto rect = [&](std::uint32_t tensor, std::uint32_t c, AccessKind kind) {
        const std::uint32_t c0 = c * s.chunk;
        return TileAccess{tensor, z, r0, c0, rows, std::min(s.chunk, extent - c0), kind};
      };
      for (std::uint32_t c = 0; c < chunks; ++c) add_step(K, {rect(t.s, c, AccessKind::load)}, kSoftmaxStatFlops * chunk_elems);
      for (std::uint32_t c = 0; c < chunks; ++c) {
        if (s.single_pass) add_step(K, {rect(t.p, c, AccessKind::store)}, kSoftmaxWriteFlops * chunk_elems);
        else add_step(K, {rect(t.s, c, AccessKind::load), rect(t.p, c, AccessKind::store)}, kSoftmaxWriteFlops * chunk_elems);
      }
      close_block(K, b);
    }
  // Single pass: the whole row tile has a place in shared memory, so every chunk load is in flight at once.
  K.stages = s.single_pass ? max_chunks : s.stages;
  linear_dispatch(K);
  w.kernels.push_back(std::move(K));
}

/// What a fused attention block's program depends on: held by value, so a lazy kernel's source
/// can generate programs after the builder has returned.
struct FusedLayout {
  AttentionSpec a;
  AttentionIo io;
  Scratch t;
  std::uint32_t per_split = 0;
  std::uint64_t mma_flops = 0;  ///< of a whole score tile, as the MMAs run
};

/// The query rows of Q tile tm and the KV tiles [j0, j1) split z of it reads (causal: up to
/// the diagonal; empty for a split past it), and the tile before which the masked tiles' loop
/// restarts the pipeline (`masked_loop: separate`: the first tile crossing the diagonal, when
/// tiles before it run in the first loop; else j1, none).
struct FusedSpan {
  std::uint32_t m0, rows, j0, j1, restart;
};
FusedSpan fused_span(const FusedLayout& f, std::uint32_t z, std::uint32_t tm) {
  const AttentionSpec& a = f.a;
  const std::uint32_t m0 = tm * a.block_q, rows = std::min(a.block_q, a.seq_q - m0);
  const std::uint32_t kv_tiles = (a.kv_end(m0 + rows) + a.block_kv - 1) / a.block_kv;
  const std::uint32_t j0 = z * f.per_split, j1 = std::min(kv_tiles, j0 + f.per_split);
  // Query row m0 sees keys [0, first_hidden): the tile holding key first_hidden is masked.
  const std::uint32_t first_hidden = a.kv_end(m0 + 1);
  const std::uint32_t masked =
      a.causal && a.masked_loop_separate && first_hidden < a.seq_kv ? first_hidden / a.block_kv : j1;
  return {m0, rows, j0, j1, masked > j0 && masked < j1 ? masked : j1};
}

/// Appends the steps and accesses of block (z, tm, bh) of the fused kernel to K's (not a Block).
void append_fused_program(Kernel& K, const FusedLayout& f, std::uint32_t z, std::uint32_t tm, std::uint32_t bh) {
  const AttentionSpec& a = f.a;
  const std::uint32_t D = a.head_dim, bh_count = a.batch_heads();
  const auto [m0, rows, j0, j1, restart] = fused_span(f, z, tm);
  const std::uint32_t kvb = bh / a.group();
  if (j0 < j1) {  // an empty split (causal, early Q tiles) only writes its zero partial
    add_step(K, {f.io.q.rect(bh, m0, rows, 0, D, AccessKind::load)}, 0);
    for (std::uint32_t j = j0; j < j1; ++j) {
      const std::uint32_t n0 = j * a.block_kv, kv_rows = std::min(a.block_kv, a.seq_kv - n0);
      if (j == restart) add_step(K, {}, 0);  // the masked tiles' loop: an empty step marks its new pipeline
      // The online softmax runs on each score tile between the two MMAs.
      std::uint32_t first = access_count(K);
      push_kv(K, f.io, f.io.k, f.io.k_cache, kvb, n0, kv_rows, 0, D);
      close_step(K, first, f.mma_flops, a.block_q * a.block_kv);
      first = access_count(K);
      push_kv(K, f.io, f.io.v, f.io.v_cache, kvb, n0, kv_rows, 0, D);
      close_step(K, first, f.mma_flops);
    }
  }
  if (a.split_kv > 1)
    add_step(K, {{f.t.o_partial, z * bh_count + bh, m0, 0, rows, D, AccessKind::store},
                 {f.t.lse, 0, z * bh_count + bh, m0, 1, rows, AccessKind::store}}, 0, 0, a.block_q * D);
  else
    add_step(K, {f.io.o.rect(bh, m0, rows, 0, D, AccessKind::store)}, 0, 0, a.block_q * D);
}

/// How many accesses, MMA steps and steps block (z, tm, *) of the fused kernel has, without
/// building it (what append_fused_program appends): Q, two steps per KV tile of the split, the
/// masked loop's restart marker, the store. A KV tile that straddles the cache and the fresh
/// rows reads each of K and V in two rectangles.
struct FusedProgramSize {
  std::uint64_t accesses, mma_steps, steps;
};
FusedProgramSize fused_program_size(const FusedLayout& f, std::uint32_t z, std::uint32_t tm) {
  const AttentionSpec& a = f.a;
  const auto [m0, rows, j0, j1, restart] = fused_span(f, z, tm);
  std::uint64_t accesses = a.split_kv > 1 ? 2 : 1, mma = 0, steps = 1;
  if (j0 < j1) {
    const std::uint32_t ctx = f.io.context, straddle = ctx / a.block_kv;
    const bool split_tile = ctx % a.block_kv != 0 && ctx < a.seq_kv && straddle >= j0 && straddle < j1;
    accesses += 1 + 2ull * (j1 - j0) + (split_tile ? 2 : 0);
    mma = 2ull * (j1 - j0);
    steps += 1 + mma + (restart < j1 ? 1 : 0);
  }
  return {accesses, mma, steps};
}

/// A lazy fused kernel's programs (issue 15): each block's generated when dispatched, with the
/// access identities the kernel held whole would give it (its accesses' index in the kernel).
class FusedPrograms final : public ProgramSource {
 public:
  FusedPrograms(FusedLayout f, std::uint32_t grid_m, std::uint32_t grid_n, std::vector<std::uint64_t> access_base,
                std::uint64_t mma_steps)
      : f_(std::move(f)), grid_m_(grid_m), grid_n_(grid_n), access_base_(std::move(access_base)), mma_steps_(mma_steps) {}
  void emit(std::uint32_t block, ProgramBuffer& out) const override {
    // The builders append to a Kernel's arrays: lend them the buffer's (capacity kept).
    Kernel scratch;
    scratch.steps.swap(out.steps);
    scratch.accesses.swap(out.accesses);
    scratch.steps.clear();
    scratch.accesses.clear();
    const std::uint32_t per_z = grid_m_ * grid_n_, rest = block % per_z;
    append_fused_program(scratch, f_, block / per_z, rest / grid_n_, rest % grid_n_);
    out.steps.swap(scratch.steps);
    out.accesses.swap(scratch.accesses);
    out.access_id_base = access_base_[block];
  }
  std::uint64_t mma_steps() const override { return mma_steps_; }

 private:
  FusedLayout f_;
  std::uint32_t grid_m_, grid_n_;
  std::vector<std::uint64_t> access_base_;  ///< per block: accesses of the blocks before it
  std::uint64_t mma_steps_;
};

/// The flash-attention kernel: grid_m = Q tiles, grid_n = B*H (tile_n = b*H + h), grid_z = the
/// KV splits. Steps: load Q; per KV tile, load K (QK^T MMA), load V (PV MMA); store O (or, with
/// split_kv, the fp32 partial O tile and its LSE row). Stages count steps, two per KV tile.
/// With `allow_lazy` (nothing rewrites the kernel's steps afterwards: no sync of a layer), a
/// kernel whose programs would exceed lazy_program_bytes() and that is not persistent is lazy:
/// its blocks' programs are generated when dispatched.
void add_fused(const AttentionSpec& a, const AttentionIo& io, const Scratch& t, const LaunchOrder& order,
               const ConfigNode& order_node, Workload& w, const std::string& prefix, bool allow_lazy) {
  Kernel K;
  const bool split = a.split_kv > 1;
  K.name = prefix + (split ? "attention_split" : "attention");
  K.grid_m = a.q_tiles();
  K.grid_n = a.batch_heads();
  K.grid_z = a.split_kv;
  K.compute_dtype = a.dtype;
  K.mainloop = a.mainloop.kind;
  K.mainloop_efficiency = a.mainloop.efficiency;
  K.single_fragments = a.mainloop.single_fragments;
  K.l2_prefetch_bytes = a.mainloop.l2_prefetch;
  // QK^T's instructions are block_kv wide, PV's head_dim: their harmonic mean gives a KV
  // tile's instruction count over its two steps.
  if (a.mainloop.serialized)
    K.serialized_mma_cols = static_cast<std::uint32_t>(
        std::lround(2.0 / (1.0 / std::min(a.block_kv, 256u) + 1.0 / std::min(a.head_dim, 256u))));
  K.stages = 2 * a.stages;
  K.resources = a.resources;
  K.blocks_per_sm = a.blocks_per_sm;
  K.total_flops = 4ull * a.pairs_per_head() * a.head_dim * a.batch_heads();
  FusedLayout f{a, io, t, (a.kv_tiles() + a.split_kv - 1) / a.split_kv, 2ull * a.block_q * a.block_kv * a.head_dim};
  const std::uint64_t blocks = std::uint64_t{K.grid_m} * K.grid_n * K.grid_z;
  // Two steps per KV tile, plus Q's and the store's; an access per step, but for the KV tile
  // that straddles the cache and the fresh rows (two for K, two for V) and a split's store.
  // (and the masked loop's restart marker: one more step, no access)
  const std::uint64_t accesses = blocks * (2ull * f.per_split + 5), steps = blocks * (2ull * f.per_split + 3);
  const bool lazy = allow_lazy && a.persistent == 0 &&
                    sizeof(Step) * steps + sizeof(TileAccess) * accesses > lazy_program_bytes();
  check_workload_memory("this attention kernel", blocks, steps, accesses,
                        "reduce seq_q, seq_kv, the heads or the batch, or use larger block_q/block_kv", "workload",
                        lazy);
  // A lazy kernel keeps, per block, the index its first access would have in the whole kernel
  // (the step noise's key): blocks differ in length (causal), so it is counted, not computed.
  std::vector<std::uint64_t> access_base;
  std::uint64_t accesses_before = 0, mma_steps = 0;
  if (lazy) access_base.reserve(blocks);
  for (std::uint32_t z = 0; z < K.grid_z; ++z)
    for (std::uint32_t tm = 0; tm < K.grid_m; ++tm) {
      const auto [block_accesses, block_mma, block_steps] = fused_program_size(f, z, tm);
      for (std::uint32_t bh = 0; bh < K.grid_n; ++bh) {
        Block b = open_block(K, tm, bh, z);
        if (lazy) {
          b.first_step = 0;
          b.num_steps = static_cast<std::uint32_t>(block_steps);
          access_base.push_back(accesses_before);
          accesses_before += block_accesses;
          mma_steps += block_mma;
        } else {
          append_fused_program(K, f, z, tm, bh);
          b.num_steps = static_cast<std::uint32_t>(K.steps.size()) - b.first_step;
        }
        K.blocks.push_back(b);
      }
    }
  if (lazy) K.source = std::make_shared<FusedPrograms>(f, K.grid_m, K.grid_n, std::move(access_base), mma_steps);
  // FlashAttention-3's LPT scheduler sizes its L2 sections by one KV head's K and V.
  const GridContext ctx{a.heads, a.group(), 2ull * a.seq_kv * a.head_dim * dtype_bits(a.dtype) / 8};
  const std::vector<TileCoord> seq = sequence_of(K, order, order_node, "attention kernel", ctx);
  set_dispatch(K, seq);
  if (a.persistent) make_persistent(K, a.persistent, seq, order.dynamic());
  w.kernels.push_back(std::move(K));
}

/// Flash-decoding's combine: a block per output tile of the attention grid reads the N LSE
/// rows and the N fp32 partial O tiles (all in flight at once) and writes the O tile.
void add_combine(const AttentionSpec& a, const AttentionIo& io, const Scratch& t, const LaunchOrder& order,
                 const ConfigNode& order_node, Workload& w, const std::string& prefix) {
  Kernel K;
  K.name = prefix + "attention_combine";
  K.grid_m = a.q_tiles();
  K.grid_n = a.batch_heads();
  K.grid_z = 1;
  K.compute_dtype = Dtype::fp32;
  K.stages = a.split_kv + 1;
  K.resources.threads = 128;
  K.resources.regs_per_thread = 64;
  K.resources.smem_bytes = static_cast<std::uint64_t>(a.split_kv) * a.block_q * 4;  // the LSE scales
  K.total_flops = kCombineFlops * a.split_kv * static_cast<std::uint64_t>(a.seq_q) * a.head_dim * a.batch_heads();
  const std::uint32_t N = a.split_kv, bh_count = a.batch_heads(), D = a.head_dim;
  for (std::uint32_t tm = 0; tm < K.grid_m; ++tm)
    for (std::uint32_t bh = 0; bh < K.grid_n; ++bh) {
      Block b = open_block(K, tm, bh, 0);
      const std::uint32_t m0 = tm * a.block_q, rows = std::min(a.block_q, a.seq_q - m0);
      Step lse;
      lse.first_access = static_cast<std::uint32_t>(K.accesses.size());
      for (std::uint32_t s = 0; s < N; ++s) K.accesses.push_back({t.lse, 0, s * bh_count + bh, m0, 1, rows, AccessKind::load});
      lse.num_accesses = N;
      K.steps.push_back(lse);
      for (std::uint32_t s = 0; s < N; ++s)
        add_step(K, {{t.o_partial, s * bh_count + bh, m0, 0, rows, D, AccessKind::load}},
                 kCombineFlops * static_cast<std::uint64_t>(rows) * D);
      add_step(K, {io.o.rect(bh, m0, rows, 0, D, AccessKind::store)}, 0);
      close_block(K, b);
    }
  set_dispatch(K, sequence_of(K, order, order_node, "combine kernel", {}));
  w.kernels.push_back(std::move(K));
}

}  // namespace

void add_attention_kernels(const AttentionSpec& a, AttentionIo io, const LaunchOrder& order,
                           const ConfigNode& order_node, const std::string& base_dir, Workload& w,
                           DeviceAllocator& alloc, const std::string& prefix, bool allow_lazy) {
  Scratch t;
  const std::uint32_t bh = a.batch_heads(), D = a.head_dim;
  const auto slab = [](std::uint32_t tensor) {
    AttentionOperand op;
    op.tensor = tensor;
    return op;
  };
  if (a.form == AttentionForm::unfused) {
    t.s = add_matrix(w, alloc, prefix + "S", a.seq_q, a.seq_kv, bits_of(a.score_dtype()), false, bh);
    t.p = add_matrix(w, alloc, prefix + "P", a.seq_q, a.seq_kv, bits_of(a.dtype), false, bh);
    if (io.o.tensor == kNoTensor)
      io.o = slab(add_matrix(w, alloc, prefix + "O", a.seq_q, D, bits_of(a.score_dtype()), false, bh));
    const auto qk_order = a.qk_order ? make_order(*a.qk_order, base_dir) : nullptr;
    const auto pv_order = a.pv_order ? make_order(*a.pv_order, base_dir) : nullptr;
    add_attention_gemm(a, a.qk, true, io.q, io, slab(t.s), qk_order ? *qk_order : order,
                       a.qk_order.value_or(order_node), w, prefix + "qk");
    add_softmax(a, t, w, prefix + "softmax");
    add_attention_gemm(a, a.pv, false, slab(t.p), io, io.o, pv_order ? *pv_order : order,
                       a.pv_order.value_or(order_node), w, prefix + "pv");
    return;
  }
  if (a.split_kv > 1) {
    t.o_partial = add_matrix(w, alloc, prefix + "O_partial", a.seq_q, D, bits_of(Dtype::fp32), false, a.split_kv * bh);
    t.lse = add_matrix(w, alloc, prefix + "LSE", a.split_kv * bh, a.seq_q, bits_of(Dtype::fp32), false, 1);
  }
  if (io.o.tensor == kNoTensor)
    io.o = slab(add_matrix(w, alloc, prefix + "O", a.seq_q, D, bits_of(a.score_dtype()), false, bh));
  add_fused(a, io, t, order, order_node, w, prefix, allow_lazy);
  if (a.split_kv > 1) add_combine(a, io, t, order, order_node, w, prefix);
}

}  // namespace tilesim
