#pragma once
// The L2 model driven by a block timeline instead of the simulator's timing: every block runs on
// the SM and between the start and end a timeline gives (measured on a GPU with %globaltimer, or
// written by `tilesim run --timeline`), its steps spread evenly over that span, and all blocks'
// requests reach the L2 model in time order. Whatever DRAM traffic and hit rate come out depend
// only on the cache model and the measured timing, so comparing them with the measured counters
// separates the cache model's error from the timing model's (docs/validation.md, "The L2 model
// under measured timing").
#include <cstdint>
#include <string>
#include <vector>

#include "models/arch.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

/// One block of a timeline: which block of which kernel, where and when it ran.
struct TimelineBlock {
  std::uint32_t kernel = 0;
  std::uint32_t block = 0;  ///< index into Kernel::blocks
  std::uint32_t sm = 0;
  double start_ns = 0, end_ns = 0;
};

/// Reads a block timeline CSV. Columns by header name: `sm`, `start_ns`, `end_ns`, and either
/// `block` (the kernel's block index, as `tilesim run --timeline` writes it) or `pid_m`, `pid_n`
/// (and optionally `pid_z`): the block's output tile, as a Triton program's ids. `kernel_index`
/// (default 0) picks the kernel. With `case_name` not empty, only rows whose `case` column equals
/// it are read (the production timelines hold many cases in one file). Every block of a kernel
/// that appears must appear exactly once. Errors name the file and line (InputError).
std::vector<TimelineBlock> read_block_timeline(const std::string& path, const Workload& w, const std::string& case_name);

/// What the L2 model did for one kernel under the timeline.
struct L2ReplayKernel {
  std::string name;
  std::uint32_t blocks = 0;         ///< blocks replayed (0: the kernel is not in the timeline)
  std::uint64_t read_sectors = 0;
  std::uint64_t read_hit_sectors = 0;
  std::uint64_t write_sectors = 0;
  std::uint64_t dram_read_bytes = 0;
  std::uint64_t dram_write_bytes = 0;  ///< dirty lines the kernel's accesses evicted
  /// Sectors looked up in the other L2 half (Nsight Compute's lts__t_sectors_srcunit_ltcfabric):
  /// with the timeline's SMs, what the SM-to-half map (sm.partition_map) predicts.
  std::uint64_t fabric_sectors = 0;
  double read_hit_rate() const { return read_sectors ? static_cast<double>(read_hit_sectors) / read_sectors : 0.0; }
};

/// Replays the timeline's blocks through an L2 of `arch`, empty at the start (as Nsight Compute
/// measures by default). A block's n steps run evenly over its span and a main loop `stages` deep
/// issues step i's loads as step i - stages finishes: at start + (end - start) * max(0, i - stages
/// + 1) / (n - 1), the last step (the epilogue's stores) at the end; ties go to the lower kernel,
/// block and step. Semaphores are not modelled (the timeline already
/// holds their waits); a cluster partner's multicast slice is not looked up, as in the simulator.
std::vector<L2ReplayKernel> replay_l2(const Workload& w, const ArchSpec& arch, const std::vector<TimelineBlock>& blocks);

}  // namespace tilesim
