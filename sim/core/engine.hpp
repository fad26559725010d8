#pragma once
// The event engine's state, shared by simulator.cpp (the run loop, steps and memory timing)
// and deadlock.cpp (explaining a schedule that cannot finish). Internal to sim/.
#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "models/cache/l2.hpp"
#include "models/compute/mma.hpp"
#include "models/dram/bandwidth_server.hpp"
#include "sim/core/inflight_table.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/sm_pool.hpp"

namespace tilesim::detail {

enum EventKind : std::uint32_t { kLoadReady, kComputeDone, kBlockDone, kSemPost, kKernelLaunch };

struct Event {
  Time t;
  std::uint64_t seq;
  EventKind kind;
  std::uint32_t slot;
  std::uint32_t arg;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

/// A resident block's progress through its steps (software-pipelined, `stages` deep).
struct SlotState {
  std::uint32_t kernel = 0;
  std::uint32_t sm = 0;
  std::uint32_t block = kNoBlock;
  std::uint32_t position = 0;     // dispatch position within the kernel
  std::uint32_t first_step = 0, num_steps = 0;
  std::uint32_t next_issue = 0;   // next step whose loads are issued
  std::uint32_t computed = 0;     // steps whose MMA finished
  bool computing = false;
  bool waiting = false;           // parked on a semaphore, holding its SM resources
  bool queued = false;            // in that semaphore's waiter list
  bool busy = false;
  Time start = 0;
  Time stores_done = 0;
  Time wait_start = 0;            // when it parked (it polls from then on)
  Time stall_start = -1;          // when it also ran out of issued work to compute (-1: not yet)
  Time wait = 0;                  // time stalled: parked with nothing issued left to compute
  double time_scale = 1.0;        // this block's MMA time factor (ArchSpec::sm.block_time_jitter)
};

/// One kernel's run: its occupancy, dispatch progress and counters.
struct KernelRun {
  const Kernel* k = nullptr;
  KernelStats stats;
  BlockCost cost;
  MmaTiming mma;
  std::size_t next_dispatch = 0;
  std::uint32_t resident = 0;
  bool launched = false, finished = false;
  std::uint64_t launch_order = 0;  // when it was launched, for the oldest-kernel-first rule

  bool all_dispatched() const { return next_dispatch >= k->dispatch.size(); }
};

/// Builds the explanation of a deadlock: a waiting block, what it waits on, and why no block
/// can ever post it. `kernels`, `slots`, `sems` describe the stuck state.
std::string explain_deadlock(const Workload& w, const std::vector<KernelRun>& kernels,
                             const std::vector<SlotState>& slots, const std::vector<std::uint32_t>& sems,
                             std::uint32_t num_sms);

}  // namespace tilesim::detail
