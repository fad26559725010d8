#pragma once
// The kinds of GEMM main loop a kernel runs, and what an arch sustains with each.
//
// The compute rate is a property of the kernel's main loop, not only of the GPU: on an H100 the
// same tile runs at about a third of the tensor peak with warp-level mma.sync, at two thirds with
// Triton's warpgroup wgmma fed by asynchronous copies, and near three quarters with wgmma fed by
// TMA under warp specialisation (cuBLAS, CUTLASS 3). docs/archs.md gives each preset's figures
// and their sources.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilesim {

enum class MainLoop : std::uint8_t {
  mma_sync,        ///< warp-level mma.sync fed by cp.async and ldmatrix (CUTLASS 2, the project's kernels)
  wgmma_cp_async,  ///< warpgroup wgmma fed by cp.async copies, software-pipelined (Triton's tl.dot on Hopper)
  wgmma_tma_ws,    ///< wgmma fed by TMA, producer/consumer warp specialisation (CUTLASS 3, cuBLAS)
};
inline constexpr int kNumMainLoops = 3;

std::string_view mainloop_name(MainLoop k);
std::optional<MainLoop> mainloop_from_name(std::string_view name);
std::vector<std::string> mainloop_names();

/// How the blocks resident on one SM share its pipe (sim/core/sm_pipe.hpp): synchronous MMA is
/// issued by the warp schedulers, which favour older warps (greedy-then-oldest), so the older
/// block runs ahead; asynchronous wgmma queues on the tensor core, which serves warpgroups alike.
enum class PipeArbitration : std::uint8_t { oldest_first, fair };

std::string_view arbitration_name(PipeArbitration a);
std::optional<PipeArbitration> arbitration_from_name(std::string_view name);

/// The main loop's own ceiling for blocks of one output tile (rows x columns) and warp count:
/// the fraction of the dense peak the SM's pipe reaches with every operand resident in the L2,
/// all blocks that fit on the SM running (calibration/production/tile_ceiling_probe.py). Small
/// tiles stay far below `efficiency`: the main loop's per-k-step work besides the MMA is not
/// hidden by co-resident blocks as a large tile's MMA hides it.
struct TileEfficiency {
  std::uint32_t rows = 0, cols = 0, warps = 0;
  double efficiency = 0;
};

/// What one SM sustains with one main-loop kind.
struct MainLoopSpec {
  bool supported = false;
  /// Fraction of the dense tensor peak the pipe sustains when its warps keep it busy (issue,
  /// operand staging, synchronisation of the main loop).
  double efficiency = 1.0;
  /// Measured ceilings of particular tiles: they replace `efficiency` for kernels of that tile.
  std::vector<TileEfficiency> tile_efficiency;
  /// The measured ceiling of blocks of `rows` x `cols` with `warps` warps, or null.
  const TileEfficiency* tile_ceiling(std::uint32_t rows, std::uint32_t cols, std::uint32_t warps) const {
    for (const TileEfficiency& t : tile_efficiency)
      if (t.rows == rows && t.cols == cols && t.warps == warps) return &t;
    return nullptr;
  }
  /// The efficiency of blocks of `rows` x `cols` with `warps` warps: the measured tile's, else
  /// `efficiency`.
  double efficiency_for(std::uint32_t rows, std::uint32_t cols, std::uint32_t warps) const {
    const TileEfficiency* t = tile_ceiling(rows, cols, warps);
    return t ? t->efficiency : efficiency;
  }
  /// Shared-memory bytes the SM moves per clock (0: not a limit for this kind). A warp-level
  /// MMA reads both operands of its warp tile from shared memory (ldmatrix) for every k it
  /// multiplies, and the block's copies write them there, so a tile whose warps hold small
  /// warp tiles needs more shared-memory bytes per FLOP and can reach only
  /// smem_bytes_per_clk / (bytes per FLOP x the dense FLOPs per clock) of the peak
  /// (smem_ceiling below); `efficiency` is then the ceiling of a tile that shared memory does
  /// not bind. wgmma reads its operands from shared memory by descriptor and is not bound so.
  double smem_bytes_per_clk = 0;
  /// Warps of one block that keep the pipe busy: a block of fewer warps gets at most
  /// warps / saturating_warps of it, whatever else runs on the SM.
  double saturating_warps = 1.0;
  /// Output elements of one block tile that keep the pipe busy (0: count warps instead). A
  /// warp-level MMA loop keeps the pipe as busy as its warps have independent MMAs in flight,
  /// which its accumulators count, however its warps split the tile: alone, a block of rows x
  /// cols outputs runs at most rows x cols / saturating_elements of `efficiency` x the peak.
  double saturating_elements = 0;
  /// A loop whose warps wait for each k-slice's operand fragments (ldmatrix) before issuing its
  /// MMAs, with no fragments loaded ahead (workload `mainloop: {fragments: single}`, the
  /// project's own mma.sync kernels): latency, not shared memory, bounds it, so these two replace
  /// `efficiency` and `saturating_warps` and no shared-memory ceiling applies (0: the kind's own).
  double single_fragment_efficiency = 0;
  double single_fragment_saturating_warps = 0;
  /// The fraction of the peak one block of `rows` x `cols` outputs and `warps` warps reaches by
  /// itself, relative to `efficiency` (before any shared-memory ceiling).
  double block_share(std::uint32_t rows, std::uint32_t cols, std::uint32_t warps) const {
    if (saturating_elements > 0 && rows > 0 && cols > 0)
      return std::min(1.0, static_cast<double>(rows) * cols / saturating_elements);
    return std::min(1.0, std::max(1u, warps) / saturating_warps);
  }
  PipeArbitration arbitration = PipeArbitration::fair;
  /// SM clocks of pipe time each k-step costs besides its MMA, whatever the tile: the main loop's
  /// per-iteration work that does not overlap the tensor core (waiting for the stage's copies,
  /// the barrier, issuing and retiring the MMA group, advancing the pointers). It is why a small
  /// tile runs at a smaller fraction of the peak than a large one (docs/archs.md).
  double step_overhead_cycles = 0;
  /// How many times the SM's L2 port rate (sm.l2_port_bytes_per_clk, measured with load
  /// instructions) this main loop's copies reach: TMA's bulk tensor copies move more per SM.
  double l2_port_factor = 1.0;
  /// When > 0, this main loop's copies reach the L2 at this many GB/s per SM whatever the SM
  /// clock (it takes precedence over l2_port_factor, so an override can set it on a preset that
  /// gives a factor): a port in a clock domain of its own. Tried for TMA's bulk copies at 108
  /// GB/s and not adopted (docs/validation.md, "The TMA main loop: a latency, not 90 clocks").
  /// The SM's fast-port weights still apply.
  double l2_port_gbps = 0;
  /// The port rate this main loop's copies reach, over the SM's at `sm_port_mbps` (MB/s).
  double port_factor(double sm_port_mbps) const {
    return l2_port_gbps > 0 && sm_port_mbps > 0 ? l2_port_gbps * 1000.0 / sm_port_mbps : l2_port_factor;
  }
  /// Copies are bulk tensor copies (TMA): one request per tile, whose sectors reach the L2 over
  /// the copy's transfer time through the port, so the request coalescer merges another SM's
  /// request for the same tile in proportion to how much of that time is still to come.
  bool bulk_copies = false;
  /// Nanoseconds from a stage's last byte reaching the SM to the main loop being able to use
  /// it, which deeper pipelines hide and a lone block pays in full: the copies' completion
  /// wait, the block's barrier, the fence into the tensor core's proxy (docs/archs.md).
  double load_use_ns = 0;
  /// When a stage's loads issue. `when_free` (false): as soon as its buffer is free, that is
  /// when the step that used it has computed, so `stages` loads are in flight while a step
  /// waits (Triton's software pipeline issues the copies of step i + stages - 1 at the top of
  /// iteration i, before waiting for step i's data; TMA producers likewise). `after_wait`
  /// (true): the loads of step i + stages - 1 issue only once step i's data has arrived and
  /// step i starts, so a step waiting for its data has stages - 1 loads in flight, and a
  /// latency-bound loop's step lasts latency / (stages - 1) (CUTLASS 2's multistage main
  /// loop and the project's kernels: cp.async.wait_group, __syncthreads, then the next copies;
  /// docs/archs.md).
  bool prefetch_after_wait = false;
  /// How much SMs differ in speed for this main loop while each holds two or more of its
  /// blocks: the standard deviation of a per-SM factor on their k-steps' pipe time (a fraction;
  /// 0: none). Triton's per-program timelines show an SM's blocks running lastingly faster or
  /// slower than other SMs' when blocks share SMs, a block alone on its SM as fast on any; it is
  /// what dissolves a long kernel's waves, so that blocks sharing a panel start apart and stop
  /// sharing it (docs/validation.md). Each SM's deviation is drawn once per run from (seed, SM).
  double coresident_rate_sd = 0;
  /// How much of its warps' part of the SM's pipe a block of this main loop keeps while it waits
  /// for its next step's data (0: none, the others may use the whole pipe; 1: all of it, its
  /// warps over the warps resident on the SM). Measured on one SM (docs/validation.md, "Two
  /// blocks that share a port"): a synchronous block's MMAs run 1.4 times as long while the
  /// other block on its SM waits on a copy, and Triton's persistent matmul with two one-stage
  /// programs per SM takes 1.22 times as long per tile. h100 and h200 set 1 for wgmma_cp_async.
  double waiting_holds = 0;
  /// SM clocks a warpgroup waits for each MMA instruction's results beyond the instruction's
  /// own tensor time, when its kernel waits for every MMA before issuing the next (ptxas
  /// serialises wgmma: in SASS each HGMMA is followed by its own WARPGROUP.DEPBAR). The pipe
  /// then idles those clocks unless another warpgroup on the SM fills them (0: the kind cannot
  /// run serialised, or it was not measured). docs/archs.md.
  double serialized_wait_cycles = 0;
};

/// Shared-memory bytes per FLOP of a block tile of `rows` x `cols` outputs computed by `warps`
/// warps with operands of `elem_bytes`: per k, each warp reads its warp tile's A rows and B
/// columns (ldmatrix) and the block's copies write the tile's A and B once. The warps split
/// the tile wm x wn (wm * wn = warps) the way that reads the least, as CUTLASS's warp layouts do
/// (128x128 with 4 warps: 64x64 warp tiles; with 8: 64x32). 0 for an empty tile.
inline double smem_bytes_per_flop(std::uint32_t rows, std::uint32_t cols, std::uint32_t warps, double elem_bytes) {
  if (rows == 0 || cols == 0 || warps == 0) return 0;
  double reads = 0;
  for (std::uint32_t wm = 1; wm <= warps; ++wm) {
    if (warps % wm) continue;
    const double r = static_cast<double>(warps / wm) * rows + static_cast<double>(wm) * cols;  // warps x (WM + WN)
    if (reads == 0 || r < reads) reads = r;
  }
  return elem_bytes * (reads + rows + cols) / (2.0 * rows * cols);
}

/// The fraction of the dense peak (`flops_per_clk` per SM) that shared memory lets such a tile
/// reach: 1 when it is not the limit (or `smem_bytes_per_clk` is 0).
inline double smem_ceiling(double smem_bytes_per_clk, double flops_per_clk, std::uint32_t rows, std::uint32_t cols,
                           std::uint32_t warps, double elem_bytes) {
  const double bpf = smem_bytes_per_flop(rows, cols, warps, elem_bytes);
  if (smem_bytes_per_clk <= 0 || bpf <= 0 || flops_per_clk <= 0) return 1.0;
  return std::min(1.0, smem_bytes_per_clk / (bpf * flops_per_clk));
}

/// Work besides the MMA that main loops do, in element operations on the SM's FP32/INT lanes
/// (ComputeSpec::alu_ops_per_cycle), per element of the tile they touch.
struct AluWorkSpec {
  double dequant_w4 = 0;  ///< per 4-bit weight element dequantised (unpack, convert, zero point, scale)
  double softmax = 0;     ///< per attention score (scale, running max, exp2, sum, rescale, convert)
  double epilogue = 0;    ///< per output element (convert and stage the accumulator)
};

}  // namespace tilesim
