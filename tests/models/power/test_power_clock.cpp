// The power-cap clock search (models/power/power_clock.hpp): it finds the clock at which a
// run's draw meets the cap, for runs whose rates follow the clock and for runs whose rates do
// not, and leaves runs under the cap at the boost clock.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "common/error.hpp"
#include "models/arch.hpp"
#include "models/power/power_clock.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

PowerSpec spec() {
  PowerSpec p;
  p.cap_w = 700;
  p.idle_w = 100;
  p.w_per_tflops = 0.5;
  p.w_per_l2_tbps = 40;
  p.w_per_dram_tbps = 70;
  p.voltage_exponent = 0.5;
  p.min_clock_mhz = 500;
  return p;
}

// Runs the search against a workload whose rates at clock f are rates(f); returns the clock
// it settles on and counts the runs.
double settle(const PowerSpec& p, const std::function<PowerLoad(double)>& rates, int& runs) {
  PowerClockSearch s(p, 2000);
  double f = 2000;
  runs = 0;
  for (;;) {
    ++runs;
    PowerLoad l = rates(f);
    l.clock_mhz = f;
    const double next = s.next(l);
    if (next == 0) return f;
    f = next;
  }
}

}  // namespace

TEST_CASE("power: a run under the cap keeps the boost clock after one run", "[power]") {
  const PowerSpec p = spec();
  int runs = 0;
  const double f = settle(p, [](double) { return PowerLoad{0, 100, 2, 1}; }, runs);
  CHECK(f == 2000);
  CHECK(runs == 1);
  // 100 + 0.5 x 100 + 40 x 2 + 70 x 1 = 300 W at the boost clock.
  CHECK(board_power_w(p, 2000, PowerLoad{2000, 100, 2, 1}) == Approx(300));
}

TEST_CASE("power: a compute-bound run settles where its draw meets the cap", "[power]") {
  const PowerSpec p = spec();
  // Rates proportional to the clock: 1000 TFLOP/s and 8 TB/s of L2 at 2000 MHz.
  const auto rates = [](double f) { return PowerLoad{0, 1000 * f / 2000, 8 * f / 2000, 0.5}; };
  int runs = 0;
  const double f = settle(p, rates, runs);
  // (500 + 320) x (f/2000)^1.5 = 700 - 100 - 35 -> f = 2000 x (565 / 820)^(1/1.5).
  CHECK(f == Approx(2000 * std::pow(565.0 / 820.0, 1 / 1.5)).epsilon(0.01));
  CHECK(runs <= 3);
  PowerLoad l = rates(f);
  l.clock_mhz = f;
  CHECK(board_power_w(p, 2000, l) == Approx(700).epsilon(0.01));
}

TEST_CASE("power: a run whose rates do not follow the clock still meets the cap", "[power]") {
  const PowerSpec p = spec();
  // Memory-bound: the same rates at every clock; only the voltage term moves.
  const auto rates = [](double) { return PowerLoad{0, 400, 9, 2.5}; };
  int runs = 0;
  const double f = settle(p, rates, runs);
  // (200 + 360) x (f/2000)^0.5 = 700 - 100 - 175 -> f = 2000 x (425 / 560)^2.
  CHECK(f == Approx(2000 * std::pow(425.0 / 560.0, 2)).epsilon(0.01));
  CHECK(runs <= PowerClockSearch::kMaxRuns);
}

TEST_CASE("power: a draw the cap cannot hold even idle goes to the lowest clock", "[power]") {
  const PowerSpec p = spec();
  int runs = 0;
  const double f = settle(p, [](double) { return PowerLoad{0, 100, 1, 9}; }, runs);  // DRAM alone: 630 W
  CHECK(f == 500);
}

TEST_CASE("power: the arch's power section is checked", "[power][arch]") {
  const auto error_of = [](const std::string& power, const std::string& preset = "h100") {
    YAML::Node o = YAML::Load("{power: " + power + "}");
    try {
      load_arch(preset, o, "exp.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error_of("{cap_w: 100, idle_w: 150}"), Contains("power.idle_w") && Contains("less than cap_w"));
  CHECK_THAT(error_of("{cap_w: 700, idle_w: 100, w_per_tflop: 1}"), Contains("w_per_tflop"));
  CHECK_THAT(error_of("{idle_w: 100}", "a100"), Contains("power.cap_w"));  // a100 has no power section
  CHECK(error_of("{cap_w: 700, idle_w: 100, w_per_tflops: 0.5}").empty());
  CHECK_THAT(error_of("{cap_w: 700, idle_w: 100, peak_w: 600}"), Contains("power.peak_w") && Contains("cap_w"));
  CHECK_THAT(error_of("{cap_w: 700, idle_w: 100, average_ms: -1}"), Contains("power.average_ms"));
  // cap_w 0 switches the model off: the preset runs at its one clock.
  CHECK(error_of("{cap_w: 0}").empty());
  CHECK_FALSE(load_arch("h100", YAML::Load("{power: {cap_w: 0}}"), "exp.yaml").power.enabled());
  CHECK(load_arch("h100", YAML::Node(), "exp.yaml").power.enabled());
}

TEST_CASE("power: a run bound by memory at high clocks and by compute below settles in few runs", "[power]") {
  const PowerSpec p = spec();
  // At the boost clock the rates are capped by memory (800 TFLOP/s, 7 TB/s of L2); below
  // 1600 MHz the run is compute-bound and its rates fall with the clock. The draw falls slowly
  // from 2000 to 1600 MHz and fast below, so a slope measured up there overshoots: false
  // position on the bracket's draws takes over once one clock fits and one does not.
  const auto rates = [](double f) {
    return PowerLoad{0, std::min(1000 * f / 2000, 800.0), std::min(8 * f / 2000, 7.0), 1.0};
  };
  int runs = 0;
  const double f = settle(p, rates, runs);
  PowerLoad l = rates(f);
  l.clock_mhz = f;
  CHECK(board_power_w(p, 2000, l) == Approx(700).epsilon(0.02));
  CHECK(runs <= 5);
}

TEST_CASE("power: a load from idle keeps the boost clock until the averaged draw reaches the cap", "[power]") {
  PowerSpec p = spec();  // idle 100 W, cap 700 W
  p.average_ms = 40;
  // 1300 W at the boost clock: the average rises from 100 W towards 1300 and passes 700 W at
  // 40 ln(1200 / 600) = 27.7 ms.
  CHECK(boost_window_ms(p, 1300) == Approx(40 * std::log(2.0)));
  // The nearer the draw is to the cap, the longer the boost lasts; within the cap, for ever.
  CHECK(boost_window_ms(p, 710) > 100);
  CHECK(std::isinf(boost_window_ms(p, 700)));
  // Without an averaging time the cap binds at once.
  p.average_ms = 0;
  CHECK(boost_window_ms(p, 1300) == 0);
}

TEST_CASE("power: the timed launches of a harness that end before the cap binds", "[power]") {
  PowerSpec p = spec();  // idle 100 W, cap 700 W
  p.average_ms = 40;
  // 1300 W: the cap binds after 27.7 ms. Launches of 5 ms: five end inside; after two warm-ups,
  // three of the timed ones.
  Harness h;
  h.warmup = 2;
  h.launches = 20;
  CHECK(timed_launches_in_window(p, h, 5, 1300) == 3);
  h.warmup = 6;
  CHECK(timed_launches_in_window(p, h, 5, 1300) == 0);
  // Within the cap every launch keeps the boost clock; without an averaging time none does.
  CHECK(timed_launches_in_window(p, h, 5, 700) == 20);
  p.average_ms = 0;
  CHECK(timed_launches_in_window(p, h, 5, 1300) == 0);
  p.average_ms = 40;
  // A flush before each timed launch at less than the cap lowers the average: more launches fit.
  h.warmup = 2;
  h.flush_ms = 5;
  h.flush_w = 100;
  CHECK(timed_launches_in_window(p, h, 5, 1300) > 3);
  // do_bench's estimate launches count against the window like warm-ups, each after its flush.
  Harness e = h;
  e.estimate = 5;
  CHECK(timed_launches_in_window(p, e, 5, 1300) < timed_launches_in_window(p, h, 5, 1300));
}
