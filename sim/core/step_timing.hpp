#pragma once
// A k-step's time on an SM at the SM's full rate: its MMA at the dense peak times the kernel's
// efficiency (kernel_efficiency: its main-loop kind's, or the measured ceiling of its tile), the
// kind's fixed per-iteration cost, plus the main loop's other element work (dequantisation,
// softmax, epilogue conversion) on the FP32/INT lanes. How the rate is shared
// by the blocks resident on the SM is the simulator's (sim/core/sm_pipe.hpp); a main loop that
// waits for each MMA caps its block's share (StepTiming::share).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/dtype.hpp"
#include "common/types.hpp"
#include "models/arch.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

/// Whether a kernel takes its main loop's single_fragments figures (an mma_sync loop that loads
/// no fragments ahead, on an arch that gives them): latency, not shared memory, binds it.
inline bool single_fragment_figures(const MainLoopSpec& ml, const Kernel& k) {
  return k.single_fragments && ml.single_fragment_efficiency > 0;
}
/// The share of the peak shared memory lets a kernel's tile reach (MainLoopSpec::
/// smem_bytes_per_clk); 1 for a kernel with its own efficiency or a measured tile ceiling,
/// which already say what the tile reaches.
inline double kernel_smem_ceiling(const ArchSpec& arch, const Kernel& k) {
  const MainLoop kind = k.mainloop.value_or(arch.compute.default_mainloop);
  const MainLoopSpec& ml = arch.compute.mainloop(kind);
  if (k.mainloop_efficiency > 0 || ml.tile_ceiling(k.mma_tile_rows, k.mma_tile_cols, k.warps()) ||
      single_fragment_figures(ml, k))
    return 1.0;
  return smem_ceiling(ml.smem_bytes_per_clk, arch.flops_per_cycle(k.compute_dtype), k.mma_tile_rows,
                      k.mma_tile_cols, k.warps(), dtype_bits(k.compute_dtype) / 8.0);
}
/// The fraction of the dense peak a kernel's MMA runs at: its own override, else the arch's
/// measured ceiling for its block tile, else its main-loop kind's efficiency times the
/// shared-memory ceiling above. The simulator and tune's heuristic both take it from here.
inline double kernel_efficiency(const ArchSpec& arch, const Kernel& k) {
  const MainLoop kind = k.mainloop.value_or(arch.compute.default_mainloop);
  const MainLoopSpec& ml = arch.compute.mainloop(kind);
  if (k.mainloop_efficiency <= 0 && single_fragment_figures(ml, k)) return ml.single_fragment_efficiency;
  return arch.compute.efficiency(kind, k.mainloop_efficiency, k.mma_tile_rows, k.mma_tile_cols, k.warps()) *
         kernel_smem_ceiling(arch, k);
}
/// The most of its SM's pipe (the rate kernel_efficiency gives) one block keeps busy alone: its
/// main loop's block share, measured against a pipe that shared memory may already have slowed.
inline double kernel_block_share(const ArchSpec& arch, const Kernel& k) {
  const MainLoopSpec& ml = arch.compute.mainloop(k.mainloop.value_or(arch.compute.default_mainloop));
  if (single_fragment_figures(ml, k)) return std::min(1.0, std::max(1u, k.warps()) / ml.single_fragment_saturating_warps);
  return std::min(1.0, ml.block_share(k.mma_tile_rows, k.mma_tile_cols, k.warps()) / kernel_smem_ceiling(arch, k));
}

class StepTiming {
 public:
  StepTiming() = default;
  StepTiming(const ArchSpec& arch, const Kernel& k)
      : efficiency_(kernel_efficiency(arch, k)),
        ps_per_flop_(1e6 / (arch.flops_per_cycle(k.compute_dtype) * efficiency_ * arch.sm.clock_mhz)) {
    const MainLoop kind = k.mainloop.value_or(arch.compute.default_mainloop);
    const double ps_per_cycle = 1e6 / arch.sm.clock_mhz;
    ps_step_overhead_ = arch.compute.mainloop(kind).step_overhead_cycles * ps_per_cycle;
    const double ps_per_op = 1e6 / (arch.compute.alu_ops_per_cycle * arch.sm.clock_mhz);
    ps_dequant_ = arch.compute.alu_ops_per_element.dequant_w4 * ps_per_op;
    ps_softmax_ = arch.compute.alu_ops_per_element.softmax * ps_per_op;
    ps_epilogue_ = arch.compute.alu_ops_per_element.epilogue * ps_per_op;
    if (k.serialized_mma_cols) {
      // One instruction: mma_m rows x its columns x the K one instruction spans, 2 FLOP per FMA.
      const double k_elems = arch.compute.mma_k_bytes * 8.0 / dtype_bits(k.compute_dtype);
      const double instr_flops = 2.0 * arch.compute.mma_m * k.serialized_mma_cols * k_elems;
      wait_ps_per_flop_ = arch.compute.mainloop(kind).serialized_wait_cycles * ps_per_cycle / instr_flops;
      warpgroups_ = std::max(1.0, k.warps() / 4.0);
    }
  }
  /// The most of the SM's pipe a block's step keeps busy, at most `block_share`: a main loop
  /// that waits for each MMA instruction leaves the pipe idle for the wait unless its other
  /// warpgroups fill it. Alone on its SM the step takes its other work plus
  /// max(MMA, (MMA + waits) / warpgroups), warpgroups splitting the instructions; the share is
  /// its work over that time, and other blocks on the SM may use the rest.
  double share(const Step& st, double block_share) const {
    if (wait_ps_per_flop_ <= 0 || st.flops == 0) return block_share;
    const double work = static_cast<double>(duration(st));
    const double mma = static_cast<double>(st.flops) * ps_per_flop_;
    const double waits = static_cast<double>(st.flops) * wait_ps_per_flop_;
    const double alone = work - mma + std::max(mma, (mma + waits) / warpgroups_);
    return std::min(block_share, work / alone);
  }
  /// The fraction of the dense peak its MMA runs at.
  double efficiency() const { return efficiency_; }
  /// Picoseconds one SM needs for a step's MMA and its other element work (rounded up; at
  /// least 1 ps for non-zero work).
  Time duration(const Step& st) const {
    // A k-step (one with MMA work) also pays the main loop's fixed per-iteration cost.
    const double ps = static_cast<double>(st.flops) * ps_per_flop_ + (st.flops ? ps_step_overhead_ : 0.0) +
                      st.dequant_elems * ps_dequant_ + st.softmax_elems * ps_softmax_ +
                      st.epilogue_elems * ps_epilogue_;
    return ps > 0 ? static_cast<Time>(std::ceil(ps)) : 0;
  }

 private:
  double efficiency_ = 0;
  double ps_per_flop_ = 0;
  double ps_dequant_ = 0, ps_softmax_ = 0, ps_epilogue_ = 0;
  double ps_step_overhead_ = 0;
  double wait_ps_per_flop_ = 0;  ///< serialised MMA: the waits per FLOP of MMA (0: pipelined)
  double warpgroups_ = 1;        ///< the block's warpgroups, which fill each other's waits
};

}  // namespace tilesim
