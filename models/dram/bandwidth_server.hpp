#pragma once
// A first-come-first-served bandwidth server: DRAM, an L2 partition's SM-facing bandwidth, or
// the fabric between L2 halves. Requests queue behind each other, so contention delays steps.
// Time is kept in 1/65536 ps so that per-byte costs of multi-TB/s links stay exact enough.
#include <cmath>
#include <cstdint>

#include "common/types.hpp"

namespace tilesim {

class BandwidthServer {
 public:
  BandwidthServer() = default;
  /// `gbps` in GB/s (1e9 bytes per second); 0 means unlimited.
  BandwidthServer(double gbps, double latency_ns)
      : units_per_byte_(gbps > 0 ? static_cast<std::uint64_t>(std::llround(65536.0 * 1000.0 / gbps)) : 0),
        latency_(static_cast<Time>(std::llround(latency_ns * kPsPerNs))) {}

  /// Serves `bytes` arriving at `now`; returns when the last byte is through (plus latency).
  Time serve(Time now, std::uint64_t bytes) {
    if (bytes == 0) return now;
    const std::int64_t now_u = now << 16;
    if (free_u_ < now_u) free_u_ = now_u;
    free_u_ += static_cast<std::int64_t>(bytes * units_per_byte_);
    busy_bytes_ += bytes;
    return ((free_u_ + 0xffff) >> 16) + latency_;
  }
  /// When the server would start a request arriving now (queueing delay = result - now).
  Time free_at() const { return (free_u_ + 0xffff) >> 16; }
  std::uint64_t bytes_served() const { return busy_bytes_; }
  Time latency() const { return latency_; }
  void reset() { free_u_ = 0; busy_bytes_ = 0; }

 private:
  std::uint64_t units_per_byte_ = 0;
  Time latency_ = 0;
  std::int64_t free_u_ = 0;
  std::uint64_t busy_bytes_ = 0;
};

}  // namespace tilesim
