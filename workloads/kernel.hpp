#pragma once
// The workload representation every stage shares: tensors in device memory, kernels as grids
// of blocks, blocks as programs of steps, steps as tile accesses plus MMA work. Flat arrays
// indexed by integers, so the simulator's hot path never touches strings or allocates.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "common/types.hpp"
#include "models/block_resources.hpp"
#include "models/compute/mainloop.hpp"

namespace tilesim {

/// A 2-D (optionally batched) tensor at a fixed place in device memory. Rows are the first
/// index; `col_major` says which index is contiguous. Batches are `batch_stride` bytes apart.
struct Tensor {
  std::string name;            ///< "A", "B", "C", "B_scales", ...
  Addr base = 0;               ///< byte address of element (0, 0) of batch 0
  std::uint32_t rows = 0;
  std::uint32_t cols = 0;
  std::uint32_t batch = 1;
  std::uint16_t elem_bits = 16;
  bool col_major = false;
  std::uint64_t ld = 0;        ///< leading dimension in elements (>= cols row-major, >= rows col-major)
  std::uint64_t batch_stride = 0;  ///< bytes between batches

  std::uint64_t bytes_per_batch() const { return (ld * (col_major ? cols : rows) * elem_bits + 7) / 8; }
  /// Batches side by side within each row (a view of heads as batches, see column_view): closer
  /// together than a whole batch's rows.
  bool interleaved() const { return batch > 1 && batch_stride < bytes_per_batch(); }
  /// Bytes from `base` to the end of the last element.
  std::uint64_t footprint() const {
    if (!interleaved()) return batch_stride * (batch - 1) + bytes_per_batch();
    const std::uint64_t lines = col_major ? cols : rows, line = col_major ? rows : cols;
    return batch_stride * (batch - 1) + (lines - 1) * (ld * elem_bits / 8) + (line * elem_bits + 7) / 8;
  }
  bool operator==(const Tensor&) const = default;
};

/// A view of columns [col0, col0 + heads x cols) of row-major `parent` as `heads` batches of
/// [rows x cols] (a layer's Q, K and V heads inside its QKV projection's output): the same
/// bytes, so the L2 sees the parent's addresses. The parent's rows must be whole bytes apart.
Tensor column_view(const Tensor& parent, const std::string& name, std::uint32_t col0, std::uint32_t cols,
                   std::uint32_t heads);

/// For every tensor, the tensor whose bytes hold it: itself, or, for a view (a tensor whose rows
/// are narrower than their pitch or whose batches interleave, as column_view makes), the
/// largest tensor whose byte range contains its range (the lowest index among equal ranges).
/// Generators allocate distinct tensors apart (DeviceAllocator), so only views share bytes;
/// accounting that keys on tensors (bounds, intermediates, write-back attribution) keys on
/// these roots.
std::vector<std::uint32_t> storage_roots(const std::vector<Tensor>& tensors);

/// `multicast`: a slice of the block's load that another block of its thread-block cluster
/// requests from the L2 and the TMA multicasts to both: it crosses this SM's port and is ready
/// when the other block's request is, with no L2 lookup of its own (workload.cluster).
enum class AccessKind : std::uint8_t { load = 0, store = 1, multicast = 2 };

/// A rectangle of one tensor, [row0, row0+rows) x [col0, col0+cols) of batch `batch`.
/// Ragged edges are already clipped by the generator: only real elements are named.
struct TileAccess {
  std::uint32_t tensor = 0;
  std::uint32_t batch = 0;
  std::uint32_t row0 = 0, col0 = 0;
  std::uint32_t rows = 0, cols = 0;
  AccessKind kind = AccessKind::load;
  bool operator==(const TileAccess&) const = default;
};

/// Synchronisation attached to a step: before issuing, wait until semaphore `wait_sem`
/// holds at least `wait_value`; after the step's stores complete, add 1 to `post_sem`.
/// Semaphores belong to the workload (Workload::num_semaphores, all 0 at its start), so a
/// consumer kernel can wait on a producer kernel's posts.
inline constexpr std::uint32_t kNoSem = 0xffffffffu;

/// One step of a block program: load tiles, then compute `flops` on the SM's MMA pipe,
/// then store tiles. Loads of step i may be issued while step i-stages+1.. computes
/// (software pipelining, see Kernel::stages).
struct Step {
  std::uint32_t first_access = 0;  ///< index into Kernel::accesses
  std::uint32_t num_accesses = 0;
  std::uint64_t flops = 0;
  /// Elements the main loop works on besides its MMA, by kind (the arch says how many
  /// operations each costs: compute.alu_ops_per_element).
  std::uint32_t dequant_elems = 0;   ///< 4-bit weights dequantised
  std::uint32_t softmax_elems = 0;   ///< attention scores through the online softmax
  std::uint32_t epilogue_elems = 0;  ///< accumulator elements converted and staged for the store
  std::uint32_t wait_sem = kNoSem;
  std::uint32_t wait_value = 0;
  std::uint32_t post_sem = kNoSem;
  bool operator==(const Step&) const = default;
  /// A step with nothing to load, compute or signal: it marks where the main loop starts a new
  /// software pipeline (a second loop after the first has drained): the step after it issues
  /// its loads only once every earlier step of the block has computed.
  bool restarts_pipeline() const {
    return num_accesses == 0 && flops == 0 && dequant_elems == 0 && softmax_elems == 0 && epilogue_elems == 0 &&
           wait_sem == kNoSem && post_sem == kNoSem;
  }
};

/// A thread block: its steps, and the output tile it computes (for reports and orders).
struct Block {
  std::uint32_t first_step = 0;
  std::uint32_t num_steps = 0;
  std::uint32_t tile_m = 0, tile_n = 0, tile_z = 0;
  bool operator==(const Block&) const = default;
};

/// One block's program: its steps, and the accesses their `first_access` index into.
struct ProgramView {
  const Step* steps = nullptr;
  std::uint32_t num_steps = 0;
  const TileAccess* accesses = nullptr;
  /// What first_access + this would be in a kernel holding every program: an access's identity
  /// across blocks (the engine draws a step's time noise from it), the same lazy or whole.
  std::uint64_t access_id_base = 0;
};

/// Where a lazy kernel writes one block's program (reused from block to block, so a walk over
/// every block allocates only while the largest program grows it).
struct ProgramBuffer {
  std::vector<Step> steps;
  std::vector<TileAccess> accesses;
  std::uint64_t access_id_base = 0;  ///< ProgramView::access_id_base of the block written
};

/// Generates blocks' programs on demand, for a kernel too large to hold all of them (issue 15:
/// memory independent of the problem's size). The engine asks when it dispatches a block;
/// analyses that need every access walk the blocks one at a time (for_each_program). A lazy
/// kernel's blocks neither wait on nor post semaphores, nor receive multicast slices.
class ProgramSource {
 public:
  virtual ~ProgramSource() = default;
  /// Replaces `out`'s contents with block `block`'s steps and accesses (first_access from 0) and
  /// sets its access_id_base.
  virtual void emit(std::uint32_t block, ProgramBuffer& out) const = 0;
  /// Steps with MMA work over all blocks (Kernel::mma_steps).
  virtual std::uint64_t mma_steps() const = 0;
};

/// A dispatch entry for a launched block that computes nothing and exits at once.
inline constexpr std::uint32_t kNoBlock = 0xffffffffu;

/// A kernel launch: a grid of blocks in block-index order, and the dispatch order chosen by a
/// launch-order policy (dispatch[i] = the block the i-th dispatched block computes).
struct Kernel {
  std::string name;
  std::uint32_t grid_m = 1, grid_n = 1, grid_z = 1;  ///< tiles along M and N; z = batch x split-K
  Dtype compute_dtype = Dtype::fp16;
  std::optional<MainLoop> mainloop;   ///< the main-loop kind; unset: the arch's default kind
  double mainloop_efficiency = 0;     ///< overrides the arch's efficiency for the kind (0: the arch's)
  bool single_fragments = false;      ///< mma_sync warps that load no fragments ahead (MainLoopSpec)
  /// The loads' prefetch size in bytes (cp.async.L2::64B/128B; MainLoopChoice::l2_prefetch): a
  /// read miss fetches at least this much around its sector; 0: the L2's own fill.
  std::uint32_t l2_prefetch_bytes = 0;
  /// The loads go through L1 (plain or .nc ld.global, as the stream kernel's): the L2's request
  /// coalescer merges none of them (measured: 0-6.5% of the stream kernel's reads merged, against
  /// 21-45% of cp.async matmuls': docs/validation.md, "The coalescer's window is its queue");
  /// cp.async, .cg loads and bulk copies bypass L1 and merge.
  bool cached_loads = false;
  /// The block's output tile as its main loop computes it per k-step (rows, and columns of
  /// every B operand together), for the arch's measured per-tile ceilings; 0: not a GEMM tile.
  std::uint32_t mma_tile_rows = 0, mma_tile_cols = 0;
  /// The main loop waits for each MMA instruction before issuing the next (ptxas serialised its
  /// wgmma): the columns N of one instruction (wgmma m64nNk16; where steps differ, the value
  /// that gives a k-step's instruction count on average); 0: the MMAs are pipelined.
  std::uint32_t serialized_mma_cols = 0;
  std::uint32_t stages = 1;
  /// A program's software pipeline restarts at every tile: the step after an epilogue (a step
  /// without MMA work) issues its loads only once every earlier step has computed. A persistent
  /// loop that is not flattened (Triton's `persistent_overlap: false`) drains between tiles.
  bool drain_between_tiles = false;
  BlockResources resources;
  std::uint32_t blocks_per_sm = 0;  ///< 0: computed from resources and the arch
  /// Blocks of one thread-block cluster: consecutive in `dispatch`, placed together on distinct
  /// SMs of one GPC where the arch names its GPCs (sm.gpcs).
  std::uint32_t cluster_blocks = 1;
  std::uint32_t stream = 0;         ///< kernels of one stream run in order; of different streams, concurrently
  std::uint64_t total_flops = 0;

  std::vector<Block> blocks;        ///< block index = tile_z * grid_m * grid_n + tile_m * grid_n + tile_n
  std::vector<Step> steps;
  std::vector<TileAccess> accesses;
  std::vector<std::uint32_t> dispatch;  ///< may hold kNoBlock (early-exit blocks of a padded grid)
  /// Set for a lazy kernel: `blocks` hold their step counts (first_step 0), `steps` and
  /// `accesses` stay empty, and a block's program is generated when asked for (program()).
  std::shared_ptr<const ProgramSource> source;

  bool lazy() const { return source != nullptr; }
  /// Block `b`'s program: a view of the arrays, or, for a lazy kernel, generated into `buf`.
  ProgramView program(std::uint32_t b, ProgramBuffer& buf) const {
    const Block& blk = blocks[b];
    if (!source) return {steps.data() + blk.first_step, blk.num_steps, accesses.data()};
    source->emit(b, buf);
    return {buf.steps.data(), static_cast<std::uint32_t>(buf.steps.size()), buf.accesses.data(), buf.access_id_base};
  }
  std::uint32_t num_blocks() const { return static_cast<std::uint32_t>(blocks.size()); }
  std::uint32_t warps() const { return (resources.threads + 31) / 32; }
  /// Steps with MMA work (k-steps): each pays its main loop's fixed per-step cost.
  std::uint64_t mma_steps() const {
    if (source) return source->mma_steps();
    std::uint64_t n = 0;
    for (const Step& st : steps) n += st.flops ? 1 : 0;
    return n;
  }
  bool operator==(const Kernel&) const = default;
};

/// Everything a simulation replays: the tensors and the kernels in launch order.
struct Workload {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Kernel> kernels;
  std::uint32_t num_semaphores = 0;  ///< shared by all kernels, each starting at 0
  bool operator==(const Workload&) const = default;
  /// Dispatches of all kernels (early-exit blocks included): what a progress bar counts.
  std::uint64_t dispatch_positions() const {
    std::uint64_t n = 0;
    for (const Kernel& k : kernels) n += k.dispatch.size();
    return n;
  }
};

/// Calls f(block, ProgramView) for every block of `k` in block order; a lazy kernel's programs
/// are generated one at a time into one buffer (valid until the next call).
template <class F>
void for_each_program(const Kernel& k, F&& f) {
  ProgramBuffer buf;
  for (std::uint32_t b = 0; b < k.num_blocks(); ++b) f(b, k.program(b, buf));
}

/// Calls f(TileAccess) for every access of every block of `k` (block order, then step order).
template <class F>
void for_each_access(const Kernel& k, F&& f) {
  if (!k.lazy()) {
    for (const TileAccess& a : k.accesses) f(a);
    return;
  }
  for_each_program(k, [&](std::uint32_t, const ProgramView& p) {
    for (std::uint32_t s = 0; s < p.num_steps; ++s)
      for (std::uint32_t i = 0; i < p.steps[s].num_accesses; ++i) f(p.accesses[p.steps[s].first_access + i]);
  });
}

/// One more than the highest semaphore any step waits on or posts (0 when none): what a
/// simulator must allocate. Workload::num_semaphores is only a declared upper bound, and a
/// corrupt or hand-written one may be huge.
std::uint32_t semaphores_used(const Workload& w);

/// Checks the structural invariants (indices in range, dispatch a permutation, accesses inside
/// their tensors); throws InputError naming `origin` and the first violation.
void validate_workload(const Workload& w, const std::string& origin);

/// Refuses, before anything is allocated, a kernel whose arrays would not fit in the memory
/// this machine has available now: `blocks` blocks with `steps` steps and `accesses` tile
/// accesses in all take about blocks x 24 + steps x 32 + accesses x 32 bytes (and the launch
/// order's sequence 8 bytes a tile). The error says what `what` (e.g. "this GEMM") needs and
/// what is available, and `advice`, as "KEY: ..." (the key or option that sets the size;
/// "workload" gets the file and point where the experiment is built). With `generated` (a lazy
/// kernel: Kernel::source) only the blocks count, and the message says so.
void check_workload_memory(const std::string& what, std::uint64_t blocks, std::uint64_t steps, std::uint64_t accesses,
                           const std::string& advice = "reduce m, n, k or the batch, or use larger tiles",
                           const std::string& key = "workload", bool generated = false);

}  // namespace tilesim
