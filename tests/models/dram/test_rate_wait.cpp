// The return path's wait (models/dram/rate_wait.hpp): proportional to the recent traffic,
// nothing when idle or switched off, and it fades once the traffic stops.
#include <catch2/catch.hpp>

#include "common/types.hpp"
#include "models/dram/rate_wait.hpp"

using namespace tilesim;

namespace {
// The wait a request sees after `tbps` TB/s have passed for 20 us (1 TB/s = 1 byte per ps).
double wait_at_ns(double ns_per_tbps, double tbps) {
  RateWait w(ns_per_tbps, 2000);
  const auto bytes_per_ns = static_cast<std::uint64_t>(tbps * 1000);
  for (Time now = 0; now < 20000 * kPsPerNs; now += kPsPerNs) w.pass(now, bytes_per_ns);
  return static_cast<double>(w.pass(20000 * kPsPerNs, 1)) / kPsPerNs;
}
}  // namespace

TEST_CASE("rate wait: proportional to the recent traffic", "[dram]") {
  CHECK(RateWait(50).pass(0, 4096) == 0);  // idle: the first request waits for nobody
  CHECK(wait_at_ns(50, 2) == Approx(100).epsilon(0.02));
  CHECK(wait_at_ns(50, 8) == Approx(400).epsilon(0.02));
  CHECK(wait_at_ns(25, 8) == Approx(200).epsilon(0.02));
  CHECK(wait_at_ns(0, 8) == 0);  // the key at 0: no wait
}

TEST_CASE("rate wait: forgets traffic that has stopped", "[dram]") {
  RateWait w(50, 2000);
  for (Time now = 0; now < 20000 * kPsPerNs; now += kPsPerNs) w.pass(now, 8000);
  const Time busy = w.pass(20000 * kPsPerNs, 1);
  const Time later = w.pass(40000 * kPsPerNs, 1);  // 20 us of silence: ten windows
  CHECK(busy > 300 * kPsPerNs);
  CHECK(later < busy / 1000);
}
