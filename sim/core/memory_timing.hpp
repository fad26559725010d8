#pragma once
// When a step's memory requests are served. The L2 model decides hits and misses; this decides
// time: the step's sectors go, first come first served, through
//  - its SM's port to the L2 (sm.l2_port_bytes_per_clk, faster on the SMs measured faster),
//  - the crossbar of its SM's L2 half (every sector the SM sends or receives),
//  - each L2 half's lookups (its own SMs' and those arriving over the fabric; plus the hit latency),
//  - the fabric between the halves (plus the far latency),
//  - DRAM for misses and the write-backs they cause (plus the DRAM latency),
// and the data is there when the slowest is through, or when a fill it hit on arrives, and then
// has passed the return path to the SMs, whose wait grows with the traffic of all of them. Contention
// in these queues is what spreads blocks apart and what makes a kernel memory-bound.
#include <cstdint>
#include <vector>

#include "models/arch.hpp"
#include "models/cache/l2.hpp"
#include "models/dram/bandwidth_server.hpp"
#include "models/dram/dram_server.hpp"
#include "models/dram/rate_wait.hpp"

namespace tilesim {

class MemoryTiming {
 public:
  /// `seed` draws the fills' jitter (dram.fill_jitter_ns), as the engine's noise seed.
  explicit MemoryTiming(const ArchSpec& arch, std::uint64_t seed = 0);
  struct Served {
    Time ready;  ///< the step's data is at its SM
    Time filled; ///< its misses' lines are in the L2 (what later hits on them wait for)
    Time port = 0;     ///< when its bytes are through the SM's port, first come first served
    Time port_ps = 0;  ///< how long the port takes for them alone
    Time rest = 0;     ///< when everything but the port is through (ready = max(port, rest))
  };
  /// When the requests of one step, issued from `sm` at `now` with the combined result `sum`,
  /// have all arrived; `pending` is the latest in-flight fill or merged request they wait for;
  /// `merged_sectors` were merged by the request coalescer: they cross the SM's port only.
  /// `port_factor`: the requester's main loop moves that many times the port's rate.
  Served serve(std::uint32_t sm, Time now, const L2AccessResult& sum, Time pending, std::uint64_t merged_sectors = 0,
               double port_factor = 1.0);
  /// How long a request from `sm` issued at `now` waits before its L2 half's crossbar takes it
  /// (0 when idle): the time it sits in the request coalescer, where later ones can join it.
  Time crossbar_backlog(std::uint32_t sm, Time now) const {
    const Time free = crossbar_[sm_partition_[sm]].free_at();
    return free > now ? free - now : 0;
  }
  /// The L2 half SM `sm` sits next to.
  std::uint32_t partition_of(std::uint32_t sm) const { return sm_partition_[sm]; }

 private:
  std::uint32_t sector_bytes_;
  std::vector<std::uint32_t> sm_partition_;
  std::vector<BandwidthServer> l2_, crossbar_, port_;
  DramServer dram_;
  BandwidthServer fabric_;
  RateWait return_;
  double hit_wait_share_ = 0;  // l2.hit_wait_dram_share
  double fill_jitter_ps_ = 0;
  double stage_spread_ps_ = 0;  // dram.stage_spread_ns
  std::uint32_t line_sectors_ = 4;
  std::uint64_t seed_ = 0;
};

}  // namespace tilesim
