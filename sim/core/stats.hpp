#pragma once
// Plain counter structs. They add and subtract, so a phase's delta is one subtraction;
// printers (sim/report/) read them and live apart from the models.
#include <cstdint>
#include <string>
#include <vector>

#include "common/types.hpp"

namespace tilesim {

struct MemCounters {
  std::uint64_t read_sectors = 0;
  std::uint64_t read_hit_sectors = 0;
  std::uint64_t write_sectors = 0;
  std::uint64_t write_hit_sectors = 0;
  std::uint64_t near_copy_hit_sectors = 0;
  std::uint64_t fabric_sectors = 0;
  /// Home-half lookups of a far line's fill beyond the requested sectors that hit (lookups, not
  /// requested sectors: in lookup_hit_rate, not in read_hit_sectors; l2.fill_bytes).
  std::uint64_t fill_hit_sectors = 0;
  /// Read sectors merged by the request coalescer into another request in flight: never looked
  /// up in the L2, so not in read_sectors (l2.request_coalescing).
  std::uint64_t coalesced_sectors = 0;
  std::uint64_t dram_read_bytes = 0;
  std::uint64_t dram_write_bytes = 0;

  MemCounters& operator+=(const MemCounters& o);
  MemCounters& operator-=(const MemCounters& o);
  friend MemCounters operator+(MemCounters a, const MemCounters& b) { return a += b; }
  friend MemCounters operator-(MemCounters a, const MemCounters& b) { return a -= b; }
  bool operator==(const MemCounters&) const = default;

  /// Hit rate over the sectors the SMs requested (reads and writes).
  double hit_rate() const;
  /// Hit rate over L2 lookups, as Nsight Compute's lts__t_sector_hit_rate counts them: a read
  /// that crosses to the far half is looked up twice (near copy, then home), and writes count
  /// as hits (a full-sector write needs no fill). Measured on H100, hits + writes over
  /// lts__t_sectors_op_read + op_write reproduces the metric to 0.1 point (docs/validation.md).
  double lookup_hit_rate() const;
  double read_hit_rate() const;
};

/// The counters of MemCounters, declared once: its sum and difference, the JSON printer
/// (`l2` and `dram` objects) and the CSV's counter columns all walk this list, so a new counter
/// is its member above plus one line here.
struct MemCounterField {
  std::uint64_t MemCounters::*member;
  const char* name;      ///< the member's name, and its CSV column
  const char* json_key;  ///< its key in the result JSON's object
  bool dram;             ///< in the `dram` object (else `l2`)
  bool csv;              ///< one of the kernels CSV's counter columns (a published format, read by
                         ///< position: a new counter's column goes at the end of the row, not here)
};
inline constexpr MemCounterField kMemCounterFields[] = {
    {&MemCounters::read_sectors, "read_sectors", "read_sectors", false, true},
    {&MemCounters::read_hit_sectors, "read_hit_sectors", "read_hit_sectors", false, true},
    {&MemCounters::write_sectors, "write_sectors", "write_sectors", false, true},
    {&MemCounters::write_hit_sectors, "write_hit_sectors", "write_hit_sectors", false, false},
    {&MemCounters::near_copy_hit_sectors, "near_copy_hit_sectors", "near_copy_hit_sectors", false, false},
    {&MemCounters::fabric_sectors, "fabric_sectors", "fabric_sectors", false, true},
    {&MemCounters::fill_hit_sectors, "fill_hit_sectors", "fill_hit_sectors", false, false},
    {&MemCounters::coalesced_sectors, "coalesced_sectors", "coalesced_sectors", false, false},
    {&MemCounters::dram_read_bytes, "dram_read_bytes", "read_bytes", true, true},
    {&MemCounters::dram_write_bytes, "dram_write_bytes", "write_bytes", true, true},
};

struct TensorStats {
  std::string name;
  MemCounters mem;
  /// Index of the tensor holding this one's bytes: itself, or a view's parent (storage_roots).
  std::uint32_t storage = 0;
};

/// One block's life on an SM: when it was dispatched and finished, and how long it spun on
/// semaphores in between. The timeline and the wave/tail analysis are built from these.
struct BlockRecord {
  std::uint32_t kernel = 0;    ///< index into SimResult::kernels
  std::uint32_t block = 0;     ///< block index within the kernel (kNoBlock: early exit)
  std::uint32_t position = 0;  ///< dispatch position within the kernel
  std::uint32_t sm = 0;
  Time start = 0, end = 0;
  Time wait = 0;               ///< time spent waiting on semaphores (holding the SM's resources)
};

/// What sampled mode (sim.mode: sampled) skipped of a kernel; all zero when it ran whole.
struct SamplingStats {
  std::uint32_t period_blocks = 0;    ///< the dispatch sequence's period (sim/core/sampling.hpp)
  bool by_rates = false;              ///< no exact period: boundaries every window, judged by rates alone
  std::uint64_t skipped_blocks = 0;   ///< dispatch positions not simulated, their counters extrapolated
  Time skipped_ps = 0;                ///< the time they were estimated to take
  /// The two measured spans' disagreement, carried over the skipped periods: the estimate's
  /// uncertainty in time and in DRAM bytes.
  Time time_spread_ps = 0;
  std::uint64_t dram_spread_bytes = 0;
  std::string why_whole;              ///< in sampled mode, why the kernel was simulated whole
};

struct KernelStats {
  std::string name;
  std::uint32_t grid_m = 0, grid_n = 0, grid_z = 0;
  std::uint32_t blocks = 0;
  std::uint32_t launched_blocks = 0;  ///< includes early-exit blocks of padded grids
  std::uint32_t blocks_per_sm = 0;
  std::string occupancy_limit;
  Time start = 0, end = 0;
  std::uint64_t flops = 0;
  MemCounters mem;
  std::vector<TensorStats> tensors;
  Time compute_bound_time = 0;  ///< flops at the rate the kernel's main loop reaches (efficiency, per-step cost)
  Time memory_bound_time = 0;   ///< simulated DRAM bytes at the arch's DRAM bandwidth
  std::uint64_t wait_ps = 0;        ///< sum over blocks of time spent spinning on semaphores
  std::uint64_t poll_sectors = 0;   ///< L2 sectors read by spinning blocks polling their semaphore
  /// Dirty lines the L2 held at the kernel's start (sim.l2_start: write_flushed), written back
  /// while it ran: DRAM traffic that is not the workload's data, so not in mem.dram_write_bytes.
  std::uint64_t start_writeback_bytes = 0;
  std::uint32_t stream = 0;
  SamplingStats sampling;

  Time duration() const { return end - start; }
};

struct SimResult {
  std::string experiment;
  std::string point;  ///< sweep point label, empty for a single run
  std::string arch;
  std::vector<KernelStats> kernels;
  std::vector<BlockRecord> blocks;  ///< in dispatch order per kernel, kernels in order
  std::uint32_t num_sms = 0;
  Time duration = 0;
  MemCounters total;
  double sm_clock_mhz = 0;  ///< the SM clock the run was simulated at (under the power cap, if the arch has one)
  double power_w = 0;       ///< the board's estimated draw at that clock; 0 = the arch has no power model
  /// Under a sim.timing harness, with a power cap: how long the power controller's window lasts
  /// from idle (ms; infinity when the draw inside it fits the cap) and how many timed launches
  /// end inside it.
  double boost_window_ms = 0;
  int boost_launches = -1;  ///< -1: steady timing (or no power model)
  bool sampled_mode = false;  ///< simulated with sim.mode: sampled (kernels' `sampling` say what was skipped)
};

}  // namespace tilesim
