#pragma once
// MMA timing: FLOP over the SM's sustained tensor (or FMA) rate for the kernel's dtype:
// the dense peak times the arch's mma_efficiency.
#include <cmath>
#include <cstdint>

#include "common/types.hpp"
#include "models/arch.hpp"

namespace tilesim {

class MmaTiming {
 public:
  MmaTiming() = default;
  MmaTiming(const ArchSpec& arch, Dtype d)
      : ps_per_flop_(1e6 / (arch.flops_per_cycle(d) * arch.compute.mma_efficiency * arch.sm.clock_mhz)) {}
  /// Picoseconds one SM needs for `flops` (rounded up; at least 1 ps for non-zero work).
  Time duration(std::uint64_t flops) const {
    if (flops == 0) return 0;
    return static_cast<Time>(std::ceil(static_cast<double>(flops) * ps_per_flop_));
  }

 private:
  double ps_per_flop_ = 0;
};

}  // namespace tilesim
