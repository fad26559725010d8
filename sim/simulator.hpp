#pragma once
// The event-driven SM/L2/DRAM simulator: replays a Workload's kernels (in stream order) on an
// arch and returns plain counters. Deterministic: events are ordered by (time, sequence).
#include <cstdint>

#include "models/arch.hpp"
#include "sim/stats.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

struct SimOptions {
  bool warm_l2 = false;          ///< keep L2 contents from one kernel to the next (default: cold, as ncu)
  bool writeback_at_end = true;  ///< write dirty sectors back at each kernel's end, counted as its DRAM writes
  std::uint64_t seed = 1;        ///< for the random replacement policy
};

/// Simulates `w` on `arch`. Throws InputError when a kernel cannot run on the arch (occupancy)
/// and DeadlockError when blocks wait on semaphores that can never be posted.
SimResult simulate(const Workload& w, const ArchSpec& arch, const SimOptions& opt);

}  // namespace tilesim
