#include "sim/core/memory_timing.hpp"

#include <algorithm>

#include "common/hash.hpp"

namespace tilesim {

MemoryTiming::MemoryTiming(const ArchSpec& arch, std::uint64_t seed)
    : sector_bytes_(arch.l2.sector_bytes),
      dram_(arch.dram.bandwidth_gbps, arch.dram.latency_ns + arch.l2.hit_latency_ns, arch.dram.queue_latency_ns,
            arch.dram.queue_max_utilization),
      fabric_(arch.l2.fabric_bandwidth_gbps, arch.l2.hit_latency_ns + arch.l2.far_extra_latency_ns),
      return_(arch.l2.return_wait_ns_per_tbps),
      hit_wait_share_(arch.l2.hit_wait_dram_share),
      fill_jitter_ps_(arch.dram.fill_jitter_ns * kPsPerNs),
      stage_spread_ps_(arch.dram.stage_spread_ns * kPsPerNs),
      line_sectors_(std::max<std::uint32_t>(1, arch.l2.line_bytes / arch.l2.sector_bytes)),
      seed_(seed) {
  for (std::uint32_t p = 0; p < arch.l2.partitions; ++p) {
    l2_.emplace_back(arch.l2.bandwidth_gbps, arch.l2.hit_latency_ns);
    crossbar_.emplace_back(arch.l2.crossbar_bandwidth_gbps, 0.0);  // 0: unlimited
  }
  sm_partition_.resize(arch.sm.count);
  std::vector<double> weight(arch.sm.count, 1.0);
  for (std::uint32_t s : arch.sm.l2_port_fast_sms) weight[s] = arch.sm.l2_port_fast_factor;
  for (std::uint32_t s = 0; s < arch.sm.count; ++s) {
    sm_partition_[s] = arch.l2.partitions == 1 ? 0 : arch.sm.sm_half[s];
    // bytes per clock x MHz = MB/s; / 1000 = GB/s. 0 stays unlimited.
    port_.emplace_back(arch.sm.l2_port_mbps(arch.sm.clock_mhz) * weight[s] / 1000.0, 0.0);
  }
}

MemoryTiming::Served MemoryTiming::serve(std::uint32_t sm, Time now, const L2AccessResult& sum, Time pending,
                                         std::uint64_t merged_sectors, double port_factor) {
  Time done = pending;
  std::uint64_t port_bytes = (sum.sectors + merged_sectors) * sector_bytes_;
  if (port_factor != 1.0) port_bytes = static_cast<std::uint64_t>(port_bytes / port_factor);
  const Time port_start = std::max(now, port_[sm].free_at());
  const Time port = port_[sm].serve(now, port_bytes);
  // The crossbar carries the sectors looked up for the SM's requests; requests the coalescer
  // merged ride on the first one's (Nsight Compute's lts__t_sectors_srcunit_tex count, which
  // saturates near 8.2 TB/s on the H100's prefill matmuls, excludes them too).
  done = std::max(done, crossbar_[sm_partition_[sm]].serve(now, sum.sectors * sector_bytes_));
  for (std::size_t p = 0; p < l2_.size(); ++p)
    done = std::max(done, l2_[p].serve(now, sum.partition_sectors[p] * sector_bytes_));
  if (sum.fabric_sectors) done = std::max(done, fabric_.serve(now, sum.fabric_sectors * sector_bytes_));
  // Hits queue at the slices behind the misses that wait for DRAM (l2.hit_wait_dram_share): a
  // share of DRAM's wait as it stands before this step's own misses join it.
  if (hit_wait_share_ > 0 && sum.hit_sectors)
    done += static_cast<Time>(std::llround(hit_wait_share_ * static_cast<double>(dram_.wait_at(now))));
  const std::uint64_t dram_bytes = (sum.dram_read_sectors + sum.dram_write_sectors) * sector_bytes_;
  // A fill is in the L2 when DRAM has delivered it; the requester's own port queue does not
  // delay other SMs that hit on it.
  Time filled = dram_bytes ? dram_.serve(now, dram_bytes) : now;
  // The fill's own variation (dram.fill_jitter_ns), from a hash of (seed, time, SM): requests
  // of one instant meet different channels and rows, so blocks that start together do not
  // receive their first data together (the group phases of docs/validation.md). Centred on the
  // queue's time: the measured latency is a mean, and a one-sided delay would lengthen it.
  if (dram_bytes && fill_jitter_ps_ > 0) {
    const std::uint64_t h = splitmix64((seed_ + 1) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(now) * 0xBF58476D1CE4E5B9ull ^ sm);
    const double shift = (unit_interval(h) - 0.5) * fill_jitter_ps_;
    filled = std::max(now, static_cast<Time>(static_cast<double>(filled) + shift));
  }
  // A stage of many missed lines is in when its slowest is (dram.stage_spread_ns).
  if (stage_spread_ps_ > 0 && sum.dram_read_sectors > line_sectors_) {
    const double lines = static_cast<double>((sum.dram_read_sectors + line_sectors_ - 1) / line_sectors_);
    filled += static_cast<Time>(std::llround(stage_spread_ps_ * (1.0 - 1.0 / lines)));
  }
  // Every byte the SM asked for comes back through the return path, merged or not (the
  // coalescer saves lookups, not deliveries).
  const Time back = return_.pass(now, (sum.sectors + merged_sectors) * sector_bytes_);
  const Time rest = std::max(done, filled) + back;
  return {std::max(rest, port), filled, port, port_bytes ? port - port_start : 0, rest};
}

}  // namespace tilesim
