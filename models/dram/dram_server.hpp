#pragma once
// DRAM: a bandwidth server whose latency grows with its load.
//
// The aggregate bandwidth limit is a first-come-first-served server (BandwidthServer). Below it,
// requests still queue: DRAM serves them from many banks and channels, and a request waits when
// its bank is busy or its row is closed, long before the whole device is. The expected wait of
// such a queue grows as rho / (1 - rho) with the utilisation rho (an M/M/1 approximation); rho
// is the bandwidth the server has delivered over the last `window` (an exponential moving
// average of completions, so it never exceeds 1: beyond the aggregate limit the FCFS server's
// own queue takes over), capped at `max_rho` (dram.queue_max_utilization): the controllers'
// queues are finite, so the wait they add is bounded.
// This is what makes a block that misses (a leader) slower than one that hits what its leader
// brought in, the asymmetry that spreads blocks sharing a panel apart under load.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/types.hpp"
#include "models/dram/bandwidth_server.hpp"

namespace tilesim {

class DramServer {
 public:
  DramServer() = default;
  /// `latency_ns`: the unloaded latency; `queue_ns`: the wait at half load (rho = 0.5).
  DramServer(double gbps, double latency_ns, double queue_ns, double max_rho = 0.9, double window_ns = 2000)
      : bw_(gbps, latency_ns), bytes_per_ps_(gbps * 1e-3), queue_ps_(queue_ns * kPsPerNs),
        window_ps_(std::max(1.0, window_ns * kPsPerNs)), max_rho_(max_rho) {}

  /// How long a request arriving at `now` would wait beyond the unloaded latency: the FCFS
  /// backlog and the queueing wait at the recent utilisation (what serve() would add).
  Time wait_at(Time now) const {
    const Time backlog = std::max<Time>(0, bw_.free_at() - now);
    if (queue_ps_ <= 0 || bytes_per_ps_ <= 0) return backlog;
    return backlog + queue_wait(decayed(std::max(now, last_)));
  }

  /// Serves `bytes` arriving at `now`; returns when they are delivered.
  Time serve(Time now, std::uint64_t bytes) {
    if (bytes == 0) return now;
    const Time done = bw_.serve(now, bytes);
    if (queue_ps_ <= 0 || bytes_per_ps_ <= 0) return done;
    // The utilisation seen at `now`: bytes delivered recently (counted at their delivery time,
    // decayed to `now`) over what the bandwidth could have delivered in the window.
    const Time t = std::max(now, last_);
    recent_ = decayed(t);
    last_ = t;
    const Time wait = queue_wait(recent_);
    // This request counts as delivered when its transfer ends (weighted as if already there).
    recent_ += static_cast<double>(bytes) * std::exp(-static_cast<double>(std::max<Time>(0, done - t)) / window_ps_);
    return done + wait;
  }

 private:
  /// The recent bytes as they stand at `t` (not before the last update).
  double decayed(Time t) const { return recent_ * std::exp(-static_cast<double>(t - last_) / window_ps_); }
  /// The queueing wait at the utilisation `recent` bytes give, capped at max_rho_.
  Time queue_wait(double recent) const {
    const double rho = std::min(max_rho_, recent / window_ps_ / bytes_per_ps_);
    return static_cast<Time>(std::llround(queue_ps_ * rho / (1.0 - rho)));
  }

  BandwidthServer bw_;
  double bytes_per_ps_ = 0, queue_ps_ = 0, window_ps_ = 1;
  double max_rho_ = 0.9;  // beyond it the aggregate limit (the FCFS server) rules
  double recent_ = 0;  // bytes delivered recently (exponentially weighted over window_ps_)
  Time last_ = 0;
};

}  // namespace tilesim
