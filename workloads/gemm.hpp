#pragma once
// The GEMM generator: C[M x N] = A[M x K] . B[K x N] (batched, split-K, W4A16), tiled into
// bm x bn output tiles with bk-deep k-steps. Each block is K/bk load+MMA steps and an epilogue
// step that stores its C tile (serial split-K: later slices wait, read the partial, rewrite;
// parallel split-K: each slice stores an fp32 partial, and a second kernel sums them into C).
#include <algorithm>
#include <cstdint>
#include <string>

#include "common/config_node.hpp"
#include "models/arch.hpp"
#include "workloads/kernel.hpp"
#include "workloads/orders/order.hpp"
#include "workloads/stream_k.hpp"
#include "workloads/workload.hpp"

namespace tilesim {

struct GemmSpec {
  std::uint32_t m = 0, n = 0, k = 0, batch = 1;
  Dtype dtype = Dtype::fp16;      ///< compute type (w4a16: fp16 A, int4 B with fp16 group scales)
  Dtype out_dtype = Dtype::fp16;
  bool a_col_major = false, b_col_major = false, c_col_major = false;
  std::uint32_t bm = 128, bn = 128, bk = 64;
  std::uint32_t stages = 3;
  std::uint32_t split_k = 1;
  /// How split-K slices meet (workload.split_k_mode): serial (false: each later slice waits on
  /// the tile's semaphore, reads the partial in C back and rewrites it) or parallel (true: each
  /// slice stores its fp32 partial to a workspace, and a second kernel sums them into C, as
  /// CUTLASS's GemmSplitKParallel with ReduceSplitK and cuBLAS's splitKreduce_kernel do).
  bool split_k_parallel = false;
  std::uint32_t group_size = 128;  ///< W4A16 quantisation group along K
  /// W4A16 with row-major B (workload.weight_pack): how many 4-bit weights along K share one
  /// stored word, which sets the byte rectangle a B tile is: 1 (`n`: weights adjacent along N,
  /// the int4 [K, N] bytes, AWQ's qweight), 2 (`k2`: [K/2, N] bytes, two k-rows a byte: the
  /// project's Triton kernel) or 8 (`k8`: [K/8, N] 32-bit words, GPTQ's qweight).
  std::uint32_t weight_pack_k = 1;
  BlockResources resources;
  std::uint32_t blocks_per_sm = 0;
  MainLoopChoice mainloop;        ///< the kernel's main-loop kind (unset: the arch's default)
  /// Persistent kernel: this many programs (0: one block per tile); program p computes the
  /// order's tiles p, p + P, p + 2P, ... one after another on its SM slot.
  std::uint32_t persistent = 0;
  /// With `persistent`: whether a program's next tile's loads overlap the previous tile's last
  /// steps (a flattened loop, true) or wait for them (a loop per tile, false).
  bool persistent_overlap = true;
  /// Thread-block cluster (workload.cluster): tiles [cluster_m x cluster_n] run together and
  /// share their A rows and B columns through TMA multicast (each block reads its slice of a
  /// shared tile from the L2 and receives the others' slices).
  std::uint32_t cluster_m = 1, cluster_n = 1;
  /// Rows past M and columns past N of a ragged tile (workload.ragged): false (mask) leaves them
  /// unread; true (wrap) reads them modulo M and N, as Triton's tutorial kernels index A and B
  /// (`offs_am % M`): a 128-row tile over M = 16 loads the 16 rows eight times.
  bool wrap_ragged = false;
  /// CUTLASS 3 warp-specialised schedule (workload.schedule): cooperative (two consumer
  /// warpgroups split one tile; the epilogue holds them between tiles) or pingpong (each takes
  /// every other tile; one's epilogue runs under the other's MMA). none: not a CUTLASS 3 kernel.
  enum class Schedule : std::uint8_t { none, cooperative, pingpong } schedule = Schedule::none;
  /// CUTLASS 3's stream-K scheduler (workload.stream_k): the decomposition asked for, its
  /// split-K factor and whether peers add their partials in k order (docs/stream_k.md).
  struct StreamK {
    bool enabled = false;
    StreamKMode mode = StreamKMode::heuristic;
    std::uint32_t splits = 1;
    bool deterministic = true;
  } stream_k;

  Dtype a_dtype() const { return dtype == Dtype::w4a16 ? Dtype::fp16 : dtype == Dtype::tf32 ? Dtype::fp32 : dtype; }
  Dtype b_dtype() const {
    if (dtype != Dtype::w4a16) return a_dtype();
    return weight_pack_k == 8 ? Dtype::int32 : weight_pack_k == 2 ? Dtype::int8 : Dtype::int4;
  }
  /// B's stored rows for k-rows [k0, k0 + depth): packed along K, a word holds weight_pack_k.
  std::uint32_t b_row(std::uint32_t k0) const { return k0 / weight_pack_k; }
  std::uint32_t b_rows(std::uint32_t k0, std::uint32_t depth) const {
    return (k0 + depth + weight_pack_k - 1) / weight_pack_k - k0 / weight_pack_k;
  }
  std::uint32_t tiles_m() const { return (m + bm - 1) / bm; }
  std::uint32_t tiles_n() const { return (n + bn - 1) / bn; }
  std::uint32_t tiles_k() const { return (k + bk - 1) / bk; }
  /// Shared memory one block needs: `stages` buffers of an A and a B tile (plus scales).
  std::uint64_t smem_bytes() const;
};

/// The tile height a GEMM of M rows gets by default where tilesim picks it (an FFN's
/// projections, a layer's GEMMs in `tilesim tune --model`): 128, or M rounded up to the MMA
/// granularity when M is smaller (decode).
std::uint32_t default_tile_rows(std::uint32_t m, const ArchSpec& arch);

/// Parses and validates a GEMM node (`kind: gemm` keys) against the arch.
GemmSpec parse_gemm(const ConfigNode& node, const ArchSpec& arch);

/// Tensor ids of a GEMM's operands in a Workload (`scales` only for W4A16). `b2`, when set,
/// is a second B of the same shape multiplied with the same A tile in the same block (a fused
/// gate+up projection: twice the MMA work per k-step); `epilogue_load`, when set, is an
/// [M x N] tensor the epilogue reads before storing C (e.g. the gate, to multiply into up).
inline constexpr std::uint32_t kNoTensor = 0xffffffffu;
struct GemmOperands {
  std::uint32_t a = 0, b = 0, c = 0, scales = 0;
  std::uint32_t b2 = kNoTensor;
  std::uint32_t epilogue_load = kNoTensor;
  /// Parallel split-K's workspace: one fp32 [M x N] partial per (batch, slice), z = batch x
  /// split_k + slice.
  std::uint32_t partials = kNoTensor;
  /// When non-zero, every k-step also loads A's columns shifted by this much: a consumer of a
  /// concatenated [gate | up] output reads both halves and applies the activation itself.
  std::uint32_t a_second_col_offset = 0;
};

/// Adds A, B, C (and scales) to `w`, allocated by `alloc`.
GemmOperands add_gemm_tensors(const GemmSpec& g, Workload& w, DeviceAllocator& alloc, const std::string& prefix);
/// A GEMM kernel's name, compute type, main loop, stages, resources and FLOP count (grid,
/// blocks and steps are the caller's).
Kernel gemm_kernel_shell(const GemmSpec& g, const GemmOperands& ops, const std::string& name);
/// Appends the k-steps [k_begin, k_end) of tile (tm, tn) of batch `batch` to K: each loads its
/// A and B tiles (cluster slices, scales, a second operand as the kernel has them) and runs
/// the tile's whole MMA.
/// Calls f(start, length) for each run of the indices [begin, begin + len) inside [0, extent):
/// the part before the edge (mask), or every index taken modulo extent (wrap). `begin` < extent.
template <class F>
void for_each_span(std::uint32_t begin, std::uint32_t len, std::uint32_t extent, bool wrap, F&& f) {
  if (!wrap || len <= extent - begin) {
    f(begin, std::min(len, extent - begin));
    return;
  }
  for (std::uint64_t at = begin, end = std::uint64_t{begin} + len; at < end;) {
    const auto start = static_cast<std::uint32_t>(at % extent);
    const auto run = static_cast<std::uint32_t>(std::min<std::uint64_t>(end - at, extent - start));
    f(start, run);
    at += run;
  }
}
/// The runs for_each_span calls f with.
std::uint32_t span_count(std::uint32_t begin, std::uint32_t len, std::uint32_t extent, bool wrap);

void append_k_steps(Kernel& K, const GemmSpec& g, const GemmOperands& ops, std::uint32_t batch, std::uint32_t tm,
                    std::uint32_t tn, std::uint32_t k_begin, std::uint32_t k_end);
/// The same into separate step and access arrays (first_access from accesses' size).
void append_k_steps(std::vector<Step>& steps, std::vector<TileAccess>& accesses, const GemmSpec& g,
                    const GemmOperands& ops, std::uint32_t batch, std::uint32_t tm, std::uint32_t tn, std::uint32_t k_begin,
                    std::uint32_t k_end);
/// Appends the stream-K kernel of `plan` (plan_stream_k over the scheduler's grid) over
/// existing operands: one block per persistent program, running its pieces in turn; pieces of a
/// split tile reduce their fp32 partials through a workspace tensor, ordered by a semaphore per
/// tile. `seq` maps the scheduler's linear tile ids to tiles (kPaddedTile: outside the problem).
void add_stream_k_kernel(const GemmSpec& g, const GemmOperands& ops, const std::vector<TileCoord>& seq,
                         const StreamKPlan& plan, Workload& w, DeviceAllocator& alloc, const std::string& name);
/// Appends parallel split-K's reduction kernel (ops.partials set): a block per output tile reads
/// the tile's split_k fp32 partials (all in flight at once), adds them and stores C.
void add_split_k_reduction(const GemmSpec& g, const GemmOperands& ops, Workload& w, const std::string& name);
/// Appends the GEMM kernel over existing operands, blocks dispatched in `order`. With
/// `allow_lazy` (the caller changes nothing in the kernel afterwards: no sync, no persistence),
/// a kernel whose programs would take more than lazy_program_bytes() is lazy
/// (Kernel::source): its blocks' programs are generated when asked for.
void add_gemm_kernel(const GemmSpec& g, const GemmOperands& ops, const LaunchOrder& order, Workload& w,
                     const std::string& name, bool allow_lazy = false);
/// Programs larger than this make a GEMM kernel lazy (64 MiB; tests lower it to compare a lazy
/// kernel with the same kernel held whole).
std::uint64_t lazy_program_bytes();
void set_lazy_program_bytes(std::uint64_t bytes);
/// Turns a one-block-per-tile kernel into `programs` persistent programs: program p runs the
/// work units at positions p, p + P, ... of `seq` (the order's sequence over the kernel's grid)
/// back to back, or with `dynamic` (an atomic tile counter) unit p and then each unit in turn
/// to the program that frees up first by its MMA work. Semaphore waits and posts stay with
/// their tiles' steps.
void make_persistent(Kernel& k, std::uint32_t programs, const std::vector<TileCoord>& seq, bool dynamic = false);

}  // namespace tilesim
