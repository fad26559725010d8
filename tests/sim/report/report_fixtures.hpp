#pragma once
// Hand-built SimResults for the printer tests: times in ns, turned into ps here.
#include <string>

#include "sim/core/stats.hpp"

namespace tilesim::test {

inline KernelStats kernel_stats(const std::string& name, std::uint32_t blocks_per_sm, Time start_ns, Time end_ns) {
  KernelStats k;
  k.name = name;
  k.blocks_per_sm = blocks_per_sm;
  k.start = start_ns * kPsPerNs;
  k.end = end_ns * kPsPerNs;
  return k;
}

inline BlockRecord record(std::uint32_t kernel, std::uint32_t block, std::uint32_t position, std::uint32_t sm,
                          Time start_ns, Time end_ns, Time wait_ns = 0) {
  return {kernel, block, position, sm, start_ns * kPsPerNs, end_ns * kPsPerNs, wait_ns * kPsPerNs};
}

/// 2 SMs x 2 slots; kernel "k0" has 6 blocks, so waves of C = 4 (positions 0-3, then 4-5):
///   positions 0,1: [0, 100] ns on SM 0, 1     positions 2,3: [0, 120] ns on SM 0, 1
///   positions 4,5: [100, 300] ns on SM 0, 1 (taking the slots of positions 0 and 1)
/// With `second_kernel`, kernel "k1" (2 slots per SM too) runs two blocks in k0's tail:
///   block 0: [120, 300] ns on SM 0             block 1: [200, 400] ns on SM 1
inline SimResult two_wave_result(bool second_kernel) {
  SimResult r;
  r.experiment = "hand";
  r.arch = "toy";
  r.num_sms = 2;
  r.kernels.push_back(kernel_stats("k0", 2, 0, 300));
  r.blocks = {record(0, 0, 0, 0, 0, 100), record(0, 1, 1, 1, 0, 100), record(0, 2, 2, 0, 0, 120),
              record(0, 3, 3, 1, 0, 120), record(0, 4, 4, 0, 100, 300), record(0, 5, 5, 1, 100, 300)};
  if (second_kernel) {
    r.kernels.push_back(kernel_stats("k1", 2, 120, 400));
    r.kernels.back().stream = 1;
    r.blocks.push_back(record(1, 0, 0, 0, 120, 300));
    r.blocks.push_back(record(1, 1, 1, 1, 200, 400));
  }
  r.duration = (second_kernel ? 400 : 300) * kPsPerNs;
  return r;
}

}  // namespace tilesim::test
