#pragma once
// The SMs' resources, shared by every running kernel: a block of any kernel may start on an SM
// whose free threads, registers, shared memory and block slots cover it (and, for a kernel
// whose blocks_per_sm is fixed, while fewer than that many of its blocks are there). Blocks are
// placed round-robin over the SMs, which reproduces the hardware's breadth-first first wave: in
// index order, or GPC by GPC (sm.placement: gpc_fill), or by GPCs in turn, empty SMs first
// (sm.placement: gpc); docs/configuration.md says which the H100 was measured doing when.
#include <cstdint>
#include <vector>

#include "models/arch.hpp"
#include "models/occupancy.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

/// What one block of a kernel takes from an SM, as the occupancy rules count it.
struct BlockCost {
  std::uint32_t threads = 0;
  std::uint32_t registers = 0;
  std::uint64_t shared_memory = 0;
  std::uint32_t per_sm_limit = 0;  ///< at most this many blocks of the kernel on one SM
};

BlockCost block_cost(const ArchSpec& arch, const BlockResources& r, const Occupancy& occ);

class SmPool {
 public:
  SmPool(const ArchSpec& arch, std::uint32_t num_kernels);

  /// The next SM, round-robin from the last placement (in sm.placement's order), that can take
  /// a block of `kernel`; -1 when none can.
  std::int64_t find(std::uint32_t kernel, const BlockCost& c) const;
  /// A thread-block cluster's SMs: `count` distinct SMs of one GPC (arch sm.gpcs) that each
  /// take a block of `kernel`, the least occupied first, GPCs tried round-robin from the one
  /// after the last chosen. Fills `out` and returns true, or returns false when no GPC has room.
  bool find_cluster(std::uint32_t kernel, const BlockCost& c, std::uint32_t count, std::vector<std::uint32_t>& out);
  /// The SMs of the arch's largest GPC (0 when it names none): the largest cluster that can run.
  std::uint32_t largest_gpc() const;
  void take(std::uint32_t sm, std::uint32_t kernel, const BlockCost& c);
  void release(std::uint32_t sm, std::uint32_t kernel, const BlockCost& c);
  std::uint32_t resident(std::uint32_t sm) const { return sms_[sm].blocks; }
  /// Threads of the blocks resident on `sm`.
  std::uint32_t threads(std::uint32_t sm) const { return sms_[sm].threads; }

 private:
  struct Sm {
    std::uint32_t threads = 0, registers = 0, blocks = 0;
    std::uint64_t shared_memory = 0;
  };
  bool fits(std::uint32_t sm, std::uint32_t kernel, const BlockCost& c) const;

  const ArchSpec& arch_;
  std::uint32_t num_kernels_;
  std::vector<Sm> sms_;
  std::vector<std::uint16_t> per_kernel_;  // sm * num_kernels + kernel
  std::uint32_t next_ = 0;  // position in sequence_ after the last placement
  std::vector<std::uint32_t> sequence_, position_;  // the round-robin's SM order and each SM's place in it
  std::uint32_t next_gpc_ = 0;
  // sm.placement gpc: each GPC's SMs, the first of each TPC pair before the second, and each SM's GPC.
  std::vector<std::vector<std::uint32_t>> order_;
  std::vector<std::uint32_t> gpc_of_;
  std::int64_t find_by_gpc(std::uint32_t kernel, const BlockCost& c) const;
};

}  // namespace tilesim
