#pragma once
// Waves and the tail effect, computed from the per-block records of a SimResult.
// A kernel with more blocks than the GPU holds at once runs in waves; when the block count is
// not a multiple of the capacity, the last wave leaves SMs idle. docs/architecture.md
// ("Waves and the tail effect") defines every figure here and says why.
#include <cstdint>
#include <vector>

#include "sim/core/stats.hpp"

namespace tilesim {

/// Dispatch positions [index*C, (index+1)*C) of one kernel, C = blocks_per_sm x num_sms.
struct WaveInfo {
  std::uint32_t index = 0;
  Time start = 0;            ///< earliest start of the wave's blocks
  Time end = 0;              ///< latest end of the wave's blocks
  std::uint32_t blocks = 0;  ///< records in the wave (early-exit blocks of padded grids included)
};

struct KernelWaves {
  std::vector<WaveInfo> waves;       ///< empty when the result holds no block records for the kernel
  std::uint64_t capacity = 0;        ///< C = blocks_per_sm x num_sms
  double last_wave_utilization = 0;  ///< last wave's blocks / C
  /// The last wave's duration x (1 - its utilization): a full last wave would have done C blocks
  /// of work in the same time, so this is the SM time the partial wave leaves on the table,
  /// expressed as time of the whole GPU. Rounded to whole picoseconds.
  Time tail_lost = 0;
  /// Of the SM-time left idle by this kernel during its last wave's window, the fraction that
  /// blocks of OTHER kernels occupied ("overlap fills the tail"). 0 when nothing was idle.
  double tail_filled_fraction = 0;
  Time tail_idle_sm_ps = 0;          ///< the idle SM-time (SM x ps) of that window
};

/// The waves a kernel's launched blocks take at its occupancy (C = blocks_per_sm x num_sms) and
/// the share of C the last one fills: figures of the launch alone, known without block records.
struct LaunchWaves {
  std::uint32_t waves = 0;
  double last_wave_utilization = 0;
};
LaunchWaves launch_waves(const KernelStats& k, std::uint32_t num_sms);

/// The kernel's FLOP over its duration, in TFLOP/s (0 for a kernel that took no time).
double kernel_tflops(const KernelStats& k);
/// "memory" when the kernel's DRAM bytes at the DRAM bandwidth take longer than its FLOP at its
/// main loop's rate, else "compute".
const char* kernel_bound(const KernelStats& k);

/// One entry per SimResult::kernels entry. Records whose kernel index is out of range are
/// ignored; a kernel without records (or a result without num_sms) gets an empty entry.
std::vector<KernelWaves> compute_waves(const SimResult& r);

}  // namespace tilesim
