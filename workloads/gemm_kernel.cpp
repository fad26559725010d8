// A GEMM kernel's block programs: each block's k-steps (A and B tiles, cluster slices, scales)
// and its epilogue, built whole into the kernel or, for a kernel too large to hold them,
// generated block by block at dispatch (a lazy kernel, Kernel::source).
#include <algorithm>
#include <memory>

#include "workloads/gemm.hpp"

namespace tilesim {

namespace {

// A load of a tile that `sharers` blocks of a cluster need: split into that many slices along
// its non-K dimension (rows for A, columns for B); the block of rank `rank` loads its slice and
// receives the others by multicast. With one sharer it is a plain load.
void add_shared_load(std::vector<TileAccess>& out, TileAccess a, bool split_rows, std::uint32_t sharers,
                     std::uint32_t rank) {
  if (sharers == 1) {
    out.push_back(a);
    return;
  }
  const std::uint32_t extent = split_rows ? a.rows : a.cols, start = split_rows ? a.row0 : a.col0;
  for (std::uint32_t j = 0; j < sharers; ++j) {
    const std::uint32_t lo = static_cast<std::uint32_t>(std::uint64_t{extent} * j / sharers);
    const std::uint32_t hi = static_cast<std::uint32_t>(std::uint64_t{extent} * (j + 1) / sharers);
    if (hi == lo) continue;
    TileAccess s = a;
    (split_rows ? s.row0 : s.col0) = start + lo;
    (split_rows ? s.rows : s.cols) = hi - lo;
    s.kind = j == rank ? AccessKind::load : AccessKind::multicast;
    out.push_back(s);
  }
}

// How many blocks of the cluster holding tile `t` (clusters of `size` along a dimension of
// `tiles`) compute tiles of the problem: fewer than `size` in an edge cluster of a grid that
// clusters do not divide, whose other blocks compute padded tiles and read nothing.
std::uint32_t cluster_members(std::uint32_t t, std::uint32_t size, std::uint32_t tiles) {
  return std::min(size, tiles - t / size * size);
}

}  // namespace

std::uint32_t span_count(std::uint32_t begin, std::uint32_t len, std::uint32_t extent, bool wrap) {
  std::uint32_t c = 0;
  for_each_span(begin, len, extent, wrap, [&](std::uint32_t, std::uint32_t) { ++c; });
  return c;
}

void append_k_steps(std::vector<Step>& steps, std::vector<TileAccess>& accesses, const GemmSpec& g,
                    const GemmOperands& ops, std::uint32_t batch, std::uint32_t tm, std::uint32_t tn, std::uint32_t k_begin,
                    std::uint32_t k_end) {
  const std::uint64_t operand_sets = ops.b2 == kNoTensor ? 1 : 2;
  // The MMA pipe computes whole tiles: ragged edges are zero-padded in shared memory.
  const std::uint64_t step_flops = 2ull * g.bm * g.bn * g.bk * operand_sets;
  const std::uint32_t m0 = tm * g.bm, n0 = tn * g.bn;
  const auto rows = [&](auto f) { for_each_span(m0, g.bm, g.m, g.wrap_ragged, f); };
  const auto cols = [&](auto f) { for_each_span(n0, g.bn, g.n, g.wrap_ragged, f); };
  const std::uint32_t a_sharers = cluster_members(tn, g.cluster_n, g.tiles_n());
  const std::uint32_t b_sharers = cluster_members(tm, g.cluster_m, g.tiles_m());
  for (std::uint32_t kk = k_begin; kk < k_end; ++kk) {
    Step s;
    s.first_access = static_cast<std::uint32_t>(accesses.size());
    const std::uint32_t k0 = kk * g.bk, depth = std::min(g.bk, g.k - k0);
    // A is shared by the cluster's blocks of one tile row (cluster_n of them), B by those
    // of one tile column; each reads its own slice and receives the others'. A wrapped tile's
    // repeated rows come one after another, as its warps issue them (the engine's coalescer
    // folds repeats of one rectangle).
    // W4A16 with weight_pack k2 pairs k-rows kk and kk + bk/2 in a byte, so its k-slice is two
    // dots of bk/2: A is loaded in those two halves (matmul_w4a16_kernel's a_lo and a_hi).
    const std::uint32_t a_half = g.weight_pack_k == 2 ? (depth + 1) / 2 : depth;
    for (std::uint32_t a0 = 0; a0 < depth; a0 += a_half)
      rows([&](std::uint32_t r0, std::uint32_t nr) {
        add_shared_load(accesses, {ops.a, batch, r0, k0 + a0, nr, std::min(a_half, depth - a0), AccessKind::load}, true,
                        a_sharers, tn % g.cluster_n);
      });
    if (ops.a_second_col_offset)
      rows([&](std::uint32_t r0, std::uint32_t nr) {
        accesses.push_back({ops.a, batch, r0, k0 + ops.a_second_col_offset, nr, depth, AccessKind::load});
      });
    cols([&](std::uint32_t c0, std::uint32_t nc) {
      add_shared_load(accesses, {ops.b, batch, g.b_row(k0), c0, g.b_rows(k0, depth), nc, AccessKind::load}, false, b_sharers,
                      tm % g.cluster_m);
    });
    if (ops.b2 != kNoTensor)
      cols([&](std::uint32_t c0, std::uint32_t nc) { accesses.push_back({ops.b2, batch, k0, c0, depth, nc, AccessKind::load}); });
    if (g.dtype == Dtype::w4a16) {
      const std::uint32_t g0 = k0 / g.group_size, g1 = (k0 + depth - 1) / g.group_size;
      cols([&](std::uint32_t c0, std::uint32_t nc) {
        accesses.push_back({ops.scales, batch, g0, c0, g1 - g0 + 1, nc, AccessKind::load});
      });
    }
    s.num_accesses = static_cast<std::uint32_t>(accesses.size()) - s.first_access;
    s.flops = step_flops;
    // W4A16: the main loop dequantises the B tile it loaded (every element, ragged or not).
    if (g.dtype == Dtype::w4a16) s.dequant_elems = g.bk * g.bn * static_cast<std::uint32_t>(operand_sets);
    steps.push_back(s);
  }
}

void append_k_steps(Kernel& K, const GemmSpec& g, const GemmOperands& ops, std::uint32_t batch, std::uint32_t tm,
                    std::uint32_t tn, std::uint32_t k_begin, std::uint32_t k_end) {
  append_k_steps(K.steps, K.accesses, g, ops, batch, tm, tn, k_begin, k_end);
}

Kernel gemm_kernel_shell(const GemmSpec& g, const GemmOperands& ops, const std::string& name) {
  Kernel K;
  K.name = name;
  K.compute_dtype = g.dtype;
  K.mainloop = g.mainloop.kind;
  K.mainloop_efficiency = g.mainloop.efficiency;
  K.single_fragments = g.mainloop.single_fragments;
  K.l2_prefetch_bytes = g.mainloop.l2_prefetch;
  K.stages = g.stages;
  K.resources = g.resources;
  K.blocks_per_sm = g.blocks_per_sm;
  K.cluster_blocks = g.cluster_m * g.cluster_n;
  const std::uint64_t operand_sets = ops.b2 == kNoTensor ? 1 : 2;
  K.total_flops = 2ull * g.m * g.n * g.k * g.batch * operand_sets;
  // A gated kernel's two B tiles make one k-step of a tile twice as wide.
  K.mma_tile_rows = g.bm;
  K.mma_tile_cols = g.bn * static_cast<std::uint32_t>(operand_sets);
  // One wgmma spans the tile's columns up to its widest form (n = 256).
  if (g.mainloop.serialized) K.serialized_mma_cols = std::min<std::uint32_t>(g.bn, 256);
  return K;
}

namespace {

// Where a GEMM block's program lives in its grid: the batch and split-K slice of its z, the
// k-steps of a slice, and the semaphores of serial split-K (from `sem_base`).
struct GemmLayout {
  std::uint32_t grid_m = 0, grid_n = 0, tiles_k = 0, per_slice = 0, sem_base = 0;
};

// Appends the program of tile (tm, tn) of z-slice z: its k-steps and its epilogue.
void append_gemm_block(std::vector<Step>& steps, std::vector<TileAccess>& accesses, const GemmSpec& g,
                       const GemmOperands& ops, const GemmLayout& lay, std::uint32_t z, std::uint32_t tm, std::uint32_t tn) {
  const std::uint32_t batch = z / g.split_k, slice = z % g.split_k;
  const std::uint32_t m0 = tm * g.bm, rows = std::min(g.bm, g.m - m0);
  const std::uint32_t n0 = tn * g.bn, cols = std::min(g.bn, g.n - n0);
  const std::uint32_t k_begin = slice * lay.per_slice, k_end = std::min(lay.tiles_k, k_begin + lay.per_slice);
  append_k_steps(steps, accesses, g, ops, batch, tm, tn, k_begin, k_end);
  // Epilogue: store C; serial split-K slices take turns on the tile's semaphore and the
  // later ones read the partial sum back before rewriting it. Parallel split-K slices store
  // their partials to the workspace, for the reduction kernel to sum.
  Step e;
  e.first_access = static_cast<std::uint32_t>(accesses.size());
  // Ping-pong: the epilogue's conversion runs on one consumer warpgroup's FP32 lanes while
  // the other's MMA holds the tensor core (sm90_gemm_tma_warpspecialized_pingpong.hpp),
  // so it takes no pipe time; only its stores remain.
  e.epilogue_elems = g.schedule == GemmSpec::Schedule::pingpong ? 0 : g.bm * g.bn;
  if (ops.partials != kNoTensor) {
    accesses.push_back({ops.partials, z, m0, n0, rows, cols, AccessKind::store});
    e.num_accesses = 1;
    steps.push_back(e);
    return;
  }
  if (slice > 0) accesses.push_back({ops.c, batch, m0, n0, rows, cols, AccessKind::load});
  if (ops.epilogue_load != kNoTensor && slice + 1 == g.split_k)
    accesses.push_back({ops.epilogue_load, batch, m0, n0, rows, cols, AccessKind::load});
  accesses.push_back({ops.c, batch, m0, n0, rows, cols, AccessKind::store});
  e.num_accesses = static_cast<std::uint32_t>(accesses.size()) - e.first_access;
  if (g.split_k > 1) {
    const std::uint32_t sem = lay.sem_base + (batch * lay.grid_m + tm) * lay.grid_n + tn;
    if (slice > 0) {
      e.wait_sem = sem;
      e.wait_value = slice;
    }
    e.post_sem = sem;
  }
  steps.push_back(e);
}

// A lazy GEMM kernel's programs: the same append_gemm_block, one block at a time.
class GemmPrograms final : public ProgramSource {
 public:
  GemmPrograms(const GemmSpec& g, const GemmOperands& ops, const GemmLayout& lay, std::uint64_t mma_steps)
      : g_(g), ops_(ops), lay_(lay), mma_steps_(mma_steps) {
    // Wrapped ragged tiles read their edge in more rectangles than inner tiles: the blocks'
    // access counts differ, so their ids start at a running sum (one entry per block).
    if (g.wrap_ragged && (g.m % g.bm || g.n % g.bn)) {
      const std::uint32_t blocks = lay.grid_m * lay.grid_n;
      access_base_.reserve(blocks);
      std::uint64_t at = 0;
      for (std::uint32_t b = 0; b < blocks; ++b) {
        access_base_.push_back(at);
        at += block_accesses(b / lay.grid_n, b % lay.grid_n);
      }
      per_z_accesses_ = at;
    }
  }
  void emit(std::uint32_t block, ProgramBuffer& out) const override {
    out.steps.clear();
    out.accesses.clear();
    const std::uint32_t per_z = lay_.grid_m * lay_.grid_n, rest = block % per_z;
    append_gemm_block(out.steps, out.accesses, g_, ops_, lay_, block / per_z, rest / lay_.grid_n, rest % lay_.grid_n);
    // Held whole, the kernel's accesses of block b would start where block b - 1's end: at b
    // times the common count when every block has as many (ragged edges clip rectangles).
    out.access_id_base = access_base_.empty() ? std::uint64_t{block} * out.accesses.size()
                                              : block / per_z * per_z_accesses_ + access_base_[rest];
  }
  std::uint64_t mma_steps() const override { return mma_steps_; }

 private:
  // The accesses append_gemm_block gives tile (tm, tn) of a lazy kernel (one z-slice, no split-K).
  std::uint64_t block_accesses(std::uint32_t tm, std::uint32_t tn) const {
    const std::uint64_t ra = span_count(tm * g_.bm, g_.bm, g_.m, true), rb = span_count(tn * g_.bn, g_.bn, g_.n, true);
    const std::uint64_t per_step = ra * (ops_.a_second_col_offset ? 2 : 1) +
                                   rb * (1 + (ops_.b2 != kNoTensor) + (g_.dtype == Dtype::w4a16));
    return lay_.tiles_k * per_step + 1 + (ops_.epilogue_load != kNoTensor);
  }

  GemmSpec g_;
  GemmOperands ops_;
  GemmLayout lay_;
  std::uint64_t mma_steps_;
  std::vector<std::uint64_t> access_base_;  // per tile of one z-slice; empty: uniform counts
  std::uint64_t per_z_accesses_ = 0;
};

std::uint64_t lazy_bytes = std::uint64_t{64} << 20;

}  // namespace

void set_lazy_program_bytes(std::uint64_t bytes) { lazy_bytes = bytes; }
std::uint64_t lazy_program_bytes() { return lazy_bytes; }

void add_gemm_kernel(const GemmSpec& g, const GemmOperands& ops, const LaunchOrder& order, Workload& w,
                     const std::string& name, bool allow_lazy) {
  Kernel K = gemm_kernel_shell(g, ops, name);
  K.grid_m = g.tiles_m();
  K.grid_n = g.tiles_n();
  K.grid_z = g.batch * g.split_k;
  GemmLayout lay{K.grid_m, K.grid_n, g.tiles_k(), (g.tiles_k() + g.split_k - 1) / g.split_k, w.num_semaphores};
  // Serial split-K: one semaphore per output tile, from the workload's shared pool.
  if (g.split_k > 1 && ops.partials == kNoTensor) w.num_semaphores += K.grid_m * K.grid_n * g.batch;
  const std::uint64_t blocks = std::uint64_t{K.grid_m} * K.grid_n * K.grid_z;
  // Accesses per k-step: A, B and a third (scales, or a second operand); a wrapped ragged tile
  // reads its edge in more rectangles (at most the last tile row's and column's).
  const std::uint64_t per_step = span_count((K.grid_m - 1) * g.bm, g.bm, g.m, g.wrap_ragged) +
                                 span_count((K.grid_n - 1) * g.bn, g.bn, g.n, g.wrap_ragged) + 1;
  const std::uint64_t steps = blocks * lay.per_slice, accesses = per_step * steps;
  // A kernel whose programs would take more than lazy_program_bytes() is lazy: its blocks'
  // programs are generated when dispatched (not with semaphores: serial split-K stays whole).
  const bool lazy = allow_lazy && g.split_k == 1 && g.cluster_m * g.cluster_n == 1 &&
                    sizeof(Step) * steps + sizeof(TileAccess) * accesses > lazy_bytes;
  check_workload_memory("this GEMM (" + name + ")", blocks, steps, accesses, "reduce m, n, k or the batch, or use larger tiles",
                        "workload", lazy);
  K.blocks.reserve(blocks);
  for (std::uint32_t z = 0; z < K.grid_z; ++z)
    for (std::uint32_t tm = 0; tm < K.grid_m; ++tm)
      for (std::uint32_t tn = 0; tn < K.grid_n; ++tn) {
        Block b;
        b.tile_m = tm;
        b.tile_n = tn;
        b.tile_z = z;
        if (lazy) {
          const std::uint32_t slice = z % g.split_k, k_begin = slice * lay.per_slice;
          b.num_steps = std::min(lay.tiles_k, k_begin + lay.per_slice) - k_begin + 1;
        } else {
          b.first_step = static_cast<std::uint32_t>(K.steps.size());
          append_gemm_block(K.steps, K.accesses, g, ops, lay, z, tm, tn);
          b.num_steps = static_cast<std::uint32_t>(K.steps.size()) - b.first_step;
        }
        K.blocks.push_back(b);
      }
  if (lazy) {
    std::uint64_t mma = 0;
    for (const Block& b : K.blocks) mma += b.num_steps - 1;
    K.source = std::make_shared<GemmPrograms>(g, ops, lay, mma);
  }
  // Dispatch: the policy orders each z-slice's tile grid; z is the slowest grid dimension.
  const std::vector<TileCoord> seq = order.sequence(K.grid_m, K.grid_n);
  K.dispatch.reserve(seq.size() * K.grid_z);
  for (std::uint32_t z = 0; z < K.grid_z; ++z)
    for (const TileCoord& t : seq)
      K.dispatch.push_back(!is_tile(t) ? kNoBlock : (z * K.grid_m + t.m) * K.grid_n + t.n);
  w.kernels.push_back(std::move(K));
  if (ops.partials != kNoTensor) add_split_k_reduction(g, ops, w, name + "_reduce");
}

void add_split_k_reduction(const GemmSpec& g, const GemmOperands& ops, Workload& w, const std::string& name) {
  Kernel K;
  K.name = name;
  K.compute_dtype = Dtype::fp32;
  K.grid_m = g.tiles_m();
  K.grid_n = g.tiles_n();
  K.grid_z = g.batch;
  K.stages = g.split_k + 1;  // every partial in flight at once
  K.resources.threads = 256;
  K.resources.regs_per_thread = 32;
  K.resources.smem_bytes = 0;
  K.total_flops = std::uint64_t{g.split_k} * g.m * g.n * g.batch;  // one add per partial element
  for (std::uint32_t batch = 0; batch < g.batch; ++batch)
    for (std::uint32_t tm = 0; tm < K.grid_m; ++tm)
      for (std::uint32_t tn = 0; tn < K.grid_n; ++tn) {
        const std::uint32_t m0 = tm * g.bm, rows = std::min(g.bm, g.m - m0);
        const std::uint32_t n0 = tn * g.bn, cols = std::min(g.bn, g.n - n0);
        Block b{static_cast<std::uint32_t>(K.steps.size()), 2, tm, tn, batch};
        Step sum;
        sum.first_access = static_cast<std::uint32_t>(K.accesses.size());
        for (std::uint32_t s = 0; s < g.split_k; ++s)
          K.accesses.push_back({ops.partials, batch * g.split_k + s, m0, n0, rows, cols, AccessKind::load});
        if (ops.epilogue_load != kNoTensor) K.accesses.push_back({ops.epilogue_load, batch, m0, n0, rows, cols, AccessKind::load});
        sum.num_accesses = static_cast<std::uint32_t>(K.accesses.size()) - sum.first_access;
        sum.flops = std::uint64_t{g.split_k} * rows * cols;
        K.steps.push_back(sum);
        Step store;
        store.first_access = static_cast<std::uint32_t>(K.accesses.size());
        K.accesses.push_back({ops.c, batch, m0, n0, rows, cols, AccessKind::store});
        store.num_accesses = 1;
        store.epilogue_elems = rows * cols;
        K.steps.push_back(store);
        K.dispatch.push_back(static_cast<std::uint32_t>(K.blocks.size()));
        K.blocks.push_back(b);
      }
  w.kernels.push_back(std::move(K));
}

}  // namespace tilesim
