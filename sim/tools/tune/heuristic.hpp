#pragma once
// Cheap analytic scores of a built workload on an arch, used by `tilesim tune` to rank
// candidate configurations before simulating any of them (the rules: docs/tune.md). The
// estimate only has to order candidates roughly: the heuristic strategy simulates the best
// fraction of them, so the exact numbers never reach a report as results.
#include <cstdint>

#include "models/arch.hpp"
#include "workloads/kernel.hpp"

namespace tilesim::tune {

/// How a launch order groups concurrently resident tiles: the window of `slots` tiles that
/// run at once covers `rows` tile rows and `cols` tile columns of the grid.
struct Window {
  std::uint64_t rows = 1, cols = 1;
};

/// The window of `slots` concurrent tiles of a grid_m x grid_n grid under the kernel's
/// dispatch order, read from the dispatch list itself (so any order, file orders included).
Window dispatch_window(const Kernel& k, std::uint64_t slots);

struct Estimate {
  std::uint32_t blocks_per_sm = 0;
  std::uint64_t waves = 0;           ///< summed over kernels
  double last_wave_utilization = 1;  ///< of the kernel with the most waves
  double compute_ns = 0;             ///< waves x per-wave MMA time at the arch's rate
  double l2_bytes = 0;               ///< L2->SM tile traffic
  double l2_ns = 0;                  ///< that traffic at L2 bandwidth
  double dram_bytes = 0;             ///< reuse-model DRAM reads plus C writes
  double dram_ns = 0;
  double time_ns = 0;                ///< max(compute, L2, DRAM) per kernel, summed
};

/// Scores `w` on `arch`. Throws InputError when a kernel cannot fit on an SM (occupancy).
Estimate estimate(const Workload& w, const ArchSpec& arch);

}  // namespace tilesim::tune
