// DRAM's queueing wait (models/dram/dram_server.hpp): it grows with the recent utilisation as
// rho / (1 - rho) and stops growing at queue_max_utilization.
#include <catch2/catch.hpp>

#include "common/types.hpp"
#include "models/dram/dram_server.hpp"

using namespace tilesim;

namespace {
// The wait a 1-byte request sees after the server has streamed `busy_ns` at full bandwidth:
// its delivery time less the bandwidth server's own (transfer and unloaded latency).
double wait_after_ns(double max_rho, double busy_ns) {
  DramServer d(1000, 0, 100, max_rho, 2000);  // 1000 GB/s = 1 byte per ps; 100 ns at half load
  for (Time now = 0; now < static_cast<Time>(busy_ns * kPsPerNs); now += 1000) d.serve(now, 1000);
  const Time now = static_cast<Time>(busy_ns * kPsPerNs);
  const Time done = d.serve(now, 1);
  return static_cast<double>(done - now) / kPsPerNs;
}
}  // namespace

TEST_CASE("dram: the queueing wait grows with load and stops at queue_max_utilization", "[dram]") {
  // Idle: no wait beyond the transfer.
  DramServer idle(1000, 0, 100, 0.9, 2000);
  CHECK(idle.serve(0, 1) <= 1);
  // After 20 us at full bandwidth the recent utilisation is near 1: the wait is the cap's,
  // 100 ns x u / (1 - u): 900 ns at 0.9, 150 ns at 0.6 (plus at most a few ns of queue).
  const double at_09 = wait_after_ns(0.9, 20000);
  const double at_06 = wait_after_ns(0.6, 20000);
  CHECK(at_09 == Approx(900).margin(5));
  CHECK(at_06 == Approx(150).margin(5));
}

TEST_CASE("dram: wait_at tells the wait a request would meet, without serving one", "[dram]") {
  DramServer d(1000, 50, 100, 0.9, 2000);  // 1 byte per ps, 50 ns unloaded, 100 ns at half load
  CHECK(d.wait_at(0) == 0);
  for (Time now = 0; now < 20000 * kPsPerNs; now += 1000) d.serve(now, 1000);
  const Time now = 20000 * kPsPerNs;
  const Time w = d.wait_at(now);
  CHECK(static_cast<double>(w) / kPsPerNs == Approx(900).margin(5));  // the cap's queueing wait, no backlog
  // What serve() adds for a 1-byte request is the same (its own transfer and latency aside).
  CHECK(static_cast<double>(d.serve(now, 1) - now - 50 * kPsPerNs) / kPsPerNs == Approx(900).margin(5));
  // Asking does not change the server: it decays as before when idle.
  CHECK(d.wait_at(now + 10000 * kPsPerNs) < w / 4);
}
