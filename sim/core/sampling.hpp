#pragma once
// Sampled mode (sim.mode: sampled): fast-forwarding the repeating middle of a kernel's
// dispatch sequence. Internal to sim/core; docs/architecture.md ("Sampled mode") says why it
// is sound and where it does not apply.
//
// A kernel's dispatch sequence has period P when the block dispatched at position p + P runs
// the program of the block at p with every tensor's accesses moved by one constant offset per
// tensor, and every tensor that moves leaves the region it used behind (the next period's
// rectangles never overlap this one's). Then the run from p + P on is the run from p with
// those tensors relabelled: the tensors that do not move are read at the same addresses and
// find the L2 in the same state, the ones that move find nothing of their own region in the L2
// either way. Once consecutive spans of periods cost the same time and traffic (the steady
// state), the engine skips whole periods: it dispatches position p + N P where it would have
// dispatched p, adds N periods' counters and time, and simulates the end of the kernel (its
// drain) exactly. This is intra-launch thread-block sampling (TBPoint, Huang et al. 2014) with
// a structural check in place of clustering, so that the skipped periods are exact replicas
// and the L2 needs no functional warming.
//
// A kernel with no such period but many windows (its slots' worth of positions) is judged by
// its rates instead (KernelPeriod::statistical): boundaries every window, and a skip of the
// room before its drain once the latest windows' rates of time, L2 read hits and DRAM bytes
// hold level and the skip's error (twice the rates' standard error, plus the drift over the
// whole history carried across the skip) stays within the tolerance of the projected total.
// The L2 is then not a relabelled replica; what the skip leaves is a transient of one window's
// reuse, of the size another noise seed moves the run by (docs/architecture.md).
#include <cstdint>
#include <string>
#include <vector>

#include "models/arch.hpp"
#include "sim/core/stats.hpp"
#include "workloads/kernel.hpp"

namespace tilesim::detail {

/// What find_period finds for one kernel.
struct KernelPeriod {
  std::uint32_t period = 0;     ///< P in dispatch positions; 0: none, see `why_not`
  std::uint64_t periodic = 0;   ///< positions [0, periodic) are pairwise periodic (p, p + P)
  std::string why_not;          ///< why the kernel is simulated exactly (period 0)
  bool statistical = false;     ///< no exact period: boundaries every window, skips judged by rates alone
};

/// The shortest period of kernel `k`'s dispatch sequence that leaves room to skip at least one
/// period once `window` positions (its slots) have run twice. Kernels that wait on or post
/// semaphores, access a tensor through a view of another, or have too few periods get none.
KernelPeriod find_period(const Workload& w, std::uint32_t k, std::uint64_t window);

/// find_period for every kernel, its window the kernel's slots on `arch` (blocks per SM x SMs):
/// what one simulate() call computes once for all its runs at different clocks.
std::vector<KernelPeriod> find_periods(const Workload& w, const ArchSpec& arch);

/// A kernel's counters at one period boundary.
struct SampleSnapshot {
  Time t = 0;
  MemCounters mem;
  std::vector<MemCounters> tensors;
  std::uint64_t start_writeback_bytes = 0;
};

/// One kernel's sampling in a run: its period, the snapshots so far, what was skipped.
struct SamplingRun {
  KernelPeriod found;
  std::uint64_t window = 0;              // the kernel's slots (blocks_per_sm x SMs)
  std::uint32_t span = 1;                // periods per measured span (spans cover >= one window)
  std::vector<SampleSnapshot> snaps;     // at the boundaries so far (the oldest dropped beyond what the longest spans need)
  std::uint64_t boundary = 0;            // index of the next boundary
  bool done = false;                     // jumped, or no room left to jump
};

/// What a period boundary decides (Engine::plan_period_skip, plan_rate_skip): nothing yet, or
/// skip `skip` periods at the mean rate of the `measured` periods since snapshot `from`, with
/// these spreads of the estimate (0 periods: too late to skip).
struct SkipPlan {
  bool decided = false;
  std::uint64_t skip = 0, measured = 0;
  std::size_t from = 0;
  double time_spread = 0, dram_spread = 0;
};

}  // namespace tilesim::detail
