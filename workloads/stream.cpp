// `kind: stream`: the L2-capacity microbenchmark of calibration/kernels/l2_stream.cu. A buffer of
// `bytes` is cut into nchunks = bytes / chunk_bytes chunks; one kernel of passes x nchunks blocks
// on a 1-D grid, where block p reads chunk p mod nchunks once, in order, computes nothing and
// writes 4 bytes to out[p]. Dispatched in block-index order, the blocks sweep the buffer
// `passes` times: once the buffer outgrows what the L2 keeps, the later passes miss. With
// `stride_bytes`, chunk c starts at c x stride_bytes (l2_stream.cu --stride): the same data spread
// like a matrix's rows, which tests how the set hash spreads power-of-two strides.
#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "workloads/orders/order.hpp"
#include "workloads/workload.hpp"

namespace tilesim {

namespace {

// One load instruction of l2_stream.cu moves 16 bytes (a uint4) per thread.
constexpr std::uint64_t kLoadBytes = 16;
// l2_stream.cu instantiates at most 64 loads per thread (MAX_PER_THREAD, CHUNK up to 256 KiB).
constexpr std::uint64_t kMaxLoadsPerThread = 64;
// Size limits. No other kind bounds its block count (a GEMM's bound is m, n, k <= 2^22 each);
// 2^22 blocks is the same figure as that per-dimension bound, and the load-step bound keeps the
// workload's arrays (about 64 bytes per step) within a couple of GiB.
constexpr std::uint64_t kMaxBlocks = std::uint64_t{1} << 22;
constexpr std::uint64_t kMaxLoadSteps = std::uint64_t{1} << 25;
// ptxas (nvcc 13.0, -arch=sm_90, calibration/measurements/h100/results.tar.gz build_l2_stream.log)
// reports 30 registers for the 8..64 loads-per-thread instances (64 KiB chunks use 16) and fewer
// for smaller chunks: 30 covers all of them, and 30 x 32 rounds to the same 1024-register warp
// allocation as 32 would.
constexpr std::int64_t kDefaultRegisters = 30;

std::string str(std::uint64_t v) { return std::to_string(v); }

struct StreamSpec {
  std::uint64_t bytes = 0;
  std::uint64_t chunk_bytes = 65536;
  std::uint64_t stride_bytes = 65536;  ///< address distance between consecutive chunks
  std::uint32_t passes = 1;
  std::uint32_t nchunks = 0;
  std::uint32_t blocks = 0;
  std::uint32_t loads = 0;        ///< load steps per block: ceil(chunk_bytes / (16 x threads))
  std::uint32_t load_bytes = 0;   ///< bytes one load instruction of the whole block reads: 16 x threads
  BlockResources resources;
  std::uint32_t blocks_per_sm = 0;
};

StreamSpec parse_stream(const ConfigNode& n, const ArchSpec& arch) {
  n.allow_keys({"kind", "bytes", "passes", "chunk_bytes", "threads", "registers_per_thread", "shared_memory_bytes",
                "blocks_per_sm", "stride_bytes"});
  StreamSpec s;
  const std::uint64_t sector = arch.l2.sector_bytes;
  s.bytes = n.bytes("bytes", 1, std::uint64_t{1} << 36);
  s.chunk_bytes = n.bytes_or("chunk_bytes", 65536, 1, std::uint64_t{1} << 30);
  if (s.chunk_bytes % sector)
    n.fail_key("chunk_bytes", "chunk_bytes must be a positive multiple of " + arch.name + "'s " + str(sector) +
                                  "-byte L2 sector, got " + str(s.chunk_bytes));
  if (s.bytes % s.chunk_bytes)
    n.fail_key("bytes", "bytes " + str(s.bytes) + " is not a multiple of chunk_bytes (" + str(s.chunk_bytes) + ")");
  s.stride_bytes = n.bytes_or("stride_bytes", s.chunk_bytes, 1, std::uint64_t{1} << 30);
  if (s.stride_bytes % s.chunk_bytes)
    n.fail_key("stride_bytes", "stride_bytes must be a multiple of chunk_bytes (" + str(s.chunk_bytes) + "), got " +
                                   str(s.stride_bytes));
  if (s.bytes / s.chunk_bytes * s.stride_bytes > (std::uint64_t{1} << 40))
    n.fail_key("stride_bytes", "bytes / chunk_bytes x stride_bytes spans " +
                                   str(s.bytes / s.chunk_bytes * s.stride_bytes) +
                                   " bytes of address space, more than the limit of 2^40");
  s.resources.threads = static_cast<std::uint32_t>(n.integer_or("threads", 256, 32, 1024));
  s.load_bytes = static_cast<std::uint32_t>(kLoadBytes * s.resources.threads);
  const std::uint64_t loads = (s.chunk_bytes + s.load_bytes - 1) / s.load_bytes;
  if (loads > kMaxLoadsPerThread)
    n.fail_key("chunk_bytes", "chunk_bytes " + str(s.chunk_bytes) + " needs " + str(loads) + " 16-byte loads per thread at " +
                                  str(s.resources.threads) + " threads; at most " + str(kMaxLoadsPerThread) +
                                  " (l2_stream.cu's limit), i.e. chunk_bytes <= " +
                                  str(kMaxLoadsPerThread * s.load_bytes));
  s.loads = static_cast<std::uint32_t>(loads);
  s.passes = static_cast<std::uint32_t>(n.integer("passes", 1, kMaxBlocks));
  const std::uint64_t nchunks = s.bytes / s.chunk_bytes;
  const std::uint64_t blocks = nchunks * s.passes;
  // The block count is passes x nchunks: blame passes, unless a single pass is already too many.
  const char* blame = s.passes > 1 ? "passes" : "chunk_bytes";
  if (blocks > kMaxBlocks)
    n.fail_key(blame, "passes x bytes / chunk_bytes = " + str(s.passes) + " x " + str(nchunks) + " = " + str(blocks) +
                          " blocks, more than the limit of " + str(kMaxBlocks));
  if (blocks * s.loads > kMaxLoadSteps)
    n.fail_key(blame, str(blocks) + " blocks of " + str(s.loads) + " load steps each = " + str(blocks * s.loads) +
                          " load steps, more than the limit of " + str(kMaxLoadSteps));
  s.nchunks = static_cast<std::uint32_t>(nchunks);
  s.blocks = static_cast<std::uint32_t>(blocks);

  s.resources.regs_per_thread =
      static_cast<std::uint32_t>(n.integer_or("registers_per_thread", kDefaultRegisters, 16, 255));
  if (s.resources.regs_per_thread > arch.sm.max_registers_per_thread)
    n.fail_key("registers_per_thread", "exceeds " + arch.name + "'s limit of " + str(arch.sm.max_registers_per_thread));
  // Static shared memory: the kernel's per-warp reduction array, 4 bytes per warp (32 at 256 threads).
  const std::uint64_t warps = (s.resources.threads + 31) / 32;
  s.resources.smem_bytes = n.bytes_or("shared_memory_bytes", 4 * warps, 0, std::uint64_t{1} << 30);
  if (s.resources.smem_bytes > arch.sm.max_shared_memory_per_block)
    n.fail_key("shared_memory_bytes", "shared memory per block " + str(s.resources.smem_bytes) + " bytes exceeds " +
                                          arch.name + "'s limit of " + str(arch.sm.max_shared_memory_per_block) +
                                          " bytes");
  s.blocks_per_sm = parse_blocks_per_sm(n, arch, s.resources, "stream", "threads");
  return s;
}

Workload build_stream(const WorkloadContext& ctx) {
  require_stream_sync(ctx);  // one kernel, or kernels in plain stream order
  const StreamSpec s = parse_stream(ctx.workload, ctx.arch);
  const ConfigNode order_node = order_node_or_row(ctx);
  const auto order = make_order(order_node, ctx.base_dir);

  Workload w;
  DeviceAllocator alloc;
  // The buffer as bytes, one row per chunk (so a chunk's loads name row `chunk`), rows
  // stride_bytes apart; out as uint32.
  const std::uint32_t buf =
      add_matrix(w, alloc, "buf", s.nchunks, static_cast<std::uint32_t>(s.chunk_bytes), 8, false, 1, s.stride_bytes);
  const std::uint32_t out = add_matrix(w, alloc, "out", 1, s.blocks, 32);

  Kernel K;
  K.name = "stream";
  K.cached_loads = true;  // l2_stream.cu's plain loads, through L1: measured 0-6.5% merged (docs/validation.md)
  // A 1-D grid as a single row of grid_n blocks: tile (0, p) is block p, and `row` (like
  // `column`, `grouped` and `hilbert` on one row) dispatches in block-index order, as the
  // hardware dispatches blockIdx.x.
  K.grid_m = 1;
  K.grid_n = s.blocks;
  K.grid_z = 1;
  K.compute_dtype = Dtype::fp32;  // no MMA work; the XOR reduction is not modelled
  K.resources = s.resources;
  K.blocks_per_sm = s.blocks_per_sm;
  K.total_flops = 0;
  // How the loads are expressed. Each thread of l2_stream.cu issues all of its chunk/(16 x
  // threads) uint4 loads before it uses any; load instruction i of the block reads bytes
  // [i x 16 x threads, (i + 1) x 16 x threads) of the chunk, coalesced. Each instruction is one
  // step with one access, and the kernel is as many stages deep as a block has steps (loads +
  // the store), so the simulator issues every load of a block the moment it is placed: all in
  // flight together, the store after the last arrives (steps complete in order). One step per
  // instruction rather than one step holding all the accesses, because the simulator tracks
  // in-flight DRAM fills per accessed rectangle and per step (at most 8 missing rectangles of a
  // step are recorded), and a block of a later pass that reads the same chunk while it is still
  // being filled must find every slice's fill; it also gives each instruction its own arrival.
  K.stages = s.loads + 1;
  K.blocks.reserve(s.blocks);
  K.steps.reserve(static_cast<std::size_t>(s.blocks) * (s.loads + 1));
  K.accesses.reserve(static_cast<std::size_t>(s.blocks) * (s.loads + 1));
  const auto chunk = static_cast<std::uint32_t>(s.chunk_bytes);
  for (std::uint32_t p = 0; p < s.blocks; ++p) {
    Block b;
    b.first_step = static_cast<std::uint32_t>(K.steps.size());
    b.tile_n = p;
    const std::uint32_t c = p % s.nchunks;
    for (std::uint32_t i = 0; i < s.loads; ++i) {
      Step st;
      st.first_access = static_cast<std::uint32_t>(K.accesses.size());
      st.num_accesses = 1;
      const std::uint32_t c0 = i * s.load_bytes;
      K.accesses.push_back({buf, 0, c, c0, 1, std::min(s.load_bytes, chunk - c0), AccessKind::load});
      K.steps.push_back(st);
    }
    Step st;
    st.first_access = static_cast<std::uint32_t>(K.accesses.size());
    st.num_accesses = 1;
    K.accesses.push_back({out, 0, 0, p, 1, 1, AccessKind::store});
    K.steps.push_back(st);
    b.num_steps = s.loads + 1;
    K.blocks.push_back(b);
  }

  std::vector<TileCoord> seq;
  try {
    seq = order->sequence(K.grid_m, K.grid_n);
  } catch (const InputError& e) {
    order_node.fail("for the stream kernel (1x" + str(K.grid_n) + " grid): " + e.what());
  }
  K.dispatch.reserve(seq.size());
  for (const TileCoord& t : seq) K.dispatch.push_back(!is_tile(t) ? kNoBlock : t.m * K.grid_n + t.n);
  w.kernels.push_back(std::move(K));
  return w;
}

const bool registered = register_workload("stream",
    "the L2-capacity microbenchmark: passes over a buffer in chunks", build_stream);

}  // namespace

}  // namespace tilesim
