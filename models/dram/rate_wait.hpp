#pragma once
// A wait that grows in proportion to the traffic through a shared link: the L2's return path to
// the SMs of one half (l2.return_wait_ns_per_tbps).
//
// The path hands its data to many SMs in turn, so a request's data waits behind the other SMs'
// data in flight, in proportion to how much they are moving: far below the link's bandwidth
// limit, where a first-come-first-served server (BandwidthServer) adds no wait at all. Measured
// on the H200 (calibration/measurements/h200/lone_wait): the same one-program-per-SM Triton loop,
// latency-bound by its three stages, takes 398, 451 and 548 ns per k-step with 33, 66 and 132
// programs: the stage's latency grows by about 50 ns per TB/s the GPU's SMs receive, linearly,
// while single pointer-chasing loads barely notice the load (loaded_latency.csv). Kernels with
// enough bytes in flight hide the wait; a latency-bound loop pays it every step.
// The rate is the bytes requested over the last `window` (an exponential moving average, as
// DramServer's), so the wait follows the traffic without remembering old bursts.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/types.hpp"

namespace tilesim {

class RateWait {
 public:
  RateWait() = default;
  /// `ns_per_tbps`: the wait per TB/s of recent traffic (0: none).
  explicit RateWait(double ns_per_tbps, double window_ns = 2000)
      : ps_per_tbps_(ns_per_tbps * kPsPerNs), window_ps_(std::max(1.0, window_ns * kPsPerNs)) {}

  /// `bytes` pass the link at `now`; returns how long they wait behind the recent traffic.
  Time pass(Time now, std::uint64_t bytes) {
    if (ps_per_tbps_ <= 0 || bytes == 0) return 0;
    const Time t = std::max(now, last_);
    recent_ *= std::exp(-static_cast<double>(t - last_) / window_ps_);
    last_ = t;
    const double tbps = recent_ / window_ps_;  // bytes per ps = TB/s
    recent_ += static_cast<double>(bytes);
    return static_cast<Time>(std::llround(ps_per_tbps_ * tbps));
  }

 private:
  double ps_per_tbps_ = 0, window_ps_ = 1;
  double recent_ = 0;  // bytes passed recently (exponentially weighted over window_ps_)
  Time last_ = 0;
};

}  // namespace tilesim
