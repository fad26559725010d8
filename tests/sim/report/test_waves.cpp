#include <catch2/catch.hpp>

#include "sim/report/waves.hpp"
#include "report_fixtures.hpp"

using namespace tilesim;

TEST_CASE("waves: per-wave start, end and blocks, last wave half full loses half its duration", "[report]") {
  const SimResult r = test::two_wave_result(false);
  const std::vector<KernelWaves> w = compute_waves(r);
  REQUIRE(w.size() == 1);
  const KernelWaves& k = w[0];
  CHECK(k.capacity == 4);
  REQUIRE(k.waves.size() == 2);
  CHECK(k.waves[0].index == 0);
  CHECK(k.waves[0].start == 0);
  CHECK(k.waves[0].end == 120'000);
  CHECK(k.waves[0].blocks == 4);
  CHECK(k.waves[1].index == 1);
  CHECK(k.waves[1].start == 100'000);
  CHECK(k.waves[1].end == 300'000);
  CHECK(k.waves[1].blocks == 2);
  CHECK(k.last_wave_utilization == Approx(0.5));
  // last wave lasts 200 ns at utilization 0.5: 200 x (1 - 0.5) = 100 ns lost
  CHECK(k.tail_lost == 100'000);
  // Window [100, 300] ns on 2 SMs = 400 SM-ns. k0's own blocks there, each holding half an SM:
  // positions 2,3 for 20 ns and 4,5 for 200 ns -> (2x20 + 2x200) / 2 = 220. Idle = 180 SM-ns.
  CHECK(k.tail_idle_sm_ps == 180'000);
  CHECK(k.tail_filled_fraction == 0);
}

TEST_CASE("waves: blocks are grouped by dispatch position, not by record order", "[report]") {
  SimResult r = test::two_wave_result(false);
  std::reverse(r.blocks.begin(), r.blocks.end());
  const std::vector<KernelWaves> w = compute_waves(r);
  REQUIRE(w[0].waves.size() == 2);
  CHECK(w[0].waves[0].blocks == 4);
  CHECK(w[0].waves[1].start == 100'000);
  CHECK(w[0].tail_lost == 100'000);
}

TEST_CASE("waves: another kernel's blocks fill the idle SM-time of a tail", "[report]") {
  const SimResult r = test::two_wave_result(true);
  const std::vector<KernelWaves> w = compute_waves(r);
  REQUIRE(w.size() == 2);
  // k0's tail window [100, 300] has 180 SM-ns idle (see above). k1's blocks, half an SM each:
  // [120, 300] -> 180 / 2 = 90, and [200, 300] of [200, 400] -> 100 / 2 = 50. 140 / 180 = 7/9.
  CHECK(w[0].tail_filled_fraction == Approx(7.0 / 9.0));
  CHECK(w[0].tail_lost == 100'000);
  // k1: one wave of 2 blocks in C = 4 over [120, 400]: 280 x 0.5 = 140 ns lost. Its window holds
  // 2 x 280 = 560 SM-ns, k1 itself (180 + 200) / 2 = 190, so 370 idle; k0's positions 4,5 fill
  // [120, 300] -> 2 x 180 / 2 = 180 (positions 2,3 end at 120: nothing).
  REQUIRE(w[1].waves.size() == 1);
  CHECK(w[1].last_wave_utilization == Approx(0.5));
  CHECK(w[1].tail_lost == 140'000);
  CHECK(w[1].tail_idle_sm_ps == 370'000);
  CHECK(w[1].tail_filled_fraction == Approx(180.0 / 370.0));
}

TEST_CASE("waves: a full last wave loses nothing, no records or no SM count give empty entries", "[report]") {
  SimResult r = test::two_wave_result(false);
  r.blocks.resize(4);  // exactly one full wave
  std::vector<KernelWaves> w = compute_waves(r);
  REQUIRE(w[0].waves.size() == 1);
  CHECK(w[0].last_wave_utilization == Approx(1.0));
  CHECK(w[0].tail_lost == 0);

  r.blocks.clear();
  w = compute_waves(r);
  REQUIRE(w.size() == 1);
  CHECK(w[0].waves.empty());
  CHECK(w[0].tail_lost == 0);

  r = test::two_wave_result(false);
  r.num_sms = 0;
  CHECK(compute_waves(r)[0].waves.empty());
}
