#pragma once
// The SM clock a run gets under the board's power cap (PowerSpec, arch.hpp). A full chip of
// tensor work draws more than the cap at the boost clock, and the hardware lowers the SM clock
// (and with it the voltage) until the draw fits: measured on the H100, 1230-1530 MHz for large
// Triton and cuBLAS matmuls against 1980 MHz for decode-sized ones (docs/archs.md). The draw
// depends on the rates the run reaches, and those on the clock, so the clock is a fixed point:
// the simulator runs the workload at a clock, measures its rates, and asks this search for the
// next clock to try (sim/core/power_clock.cpp).
#include <algorithm>
#include <cstdint>

#include "models/arch.hpp"

namespace tilesim {

/// What a run did per second, measured at one SM clock.
struct PowerLoad {
  double clock_mhz = 0;  ///< the SM clock the run was simulated at
  double tflops = 0;     ///< tensor work, TFLOP/s
  double l2_tbps = 0;    ///< L2 lookups (sectors read and written), TB/s
  double dram_tbps = 0;  ///< DRAM reads and writes, TB/s
};

/// The rates of a run at `clock_mhz` that did these totals in `seconds` (all zero when it took
/// no time).
PowerLoad power_load(double clock_mhz, double seconds, double flops, double l2_bytes, double dram_bytes);

/// The board's draw, W, for `load` at its clock; `max_clock_mhz` is the clock the spec's
/// per-unit energies are given at.
double board_power_w(const PowerSpec& p, double max_clock_mhz, const PowerLoad& load);

/// How long a load that draws `window_draw_w` (at the boost clock, or at peak_w where that
/// limits it) keeps its clock when started on an idle board, ms: the controller averages the
/// draw as a first-order filter of time constant average_ms, starting from idle_w, and lowers the
/// clock to the steady one when the average reaches the cap (measured: a large matmul runs
/// faster for its first 25-86 ms on the H100 and the H200, calibration/measurements/h100/
/// clock_transient, h200/clock_transient_kernels). Infinity when that draw fits the cap; 0 when
/// the spec has no averaging time.
double boost_window_ms(const PowerSpec& p, double window_draw_w);

/// A timing harness run from an idle board (sim.timing): `estimate` untimed launches each after a
/// flush (do_bench's runtime estimate), `warmup` untimed launches, then `launches` timed ones,
/// each after a flush when flush_ms > 0. A flush is a write of flush_ms drawing flush_w.
struct Harness {
  int estimate = 0;
  int warmup = 0;
  int launches = 0;
  double flush_ms = 0;
  double flush_w = 0;
};

/// How many of the harness's timed launches of `launch_ms` each, drawing `window_draw_w`, end
/// before the controller's average (a first-order filter of time constant average_ms from
/// idle_w, as boost_window_ms) reaches the cap; after that the cap binds.
int timed_launches_in_window(const PowerSpec& p, const Harness& h, double launch_ms, double window_draw_w);

/// The search for the clock at which the draw meets the cap. Until a clock that fits and one
/// that does not are both known, the SMs' share of the draw is taken to scale as clock^s: the
/// first step assumes a compute-bound run (its rates grow with the clock, s = 1 + voltage_exponent),
/// later steps measure s from the last two runs. Once the answer is bracketed, false position on
/// the draws at the bracket's ends (Illinois: an end kept twice has its excess halved), which
/// needs no model of how the rates follow the clock: an L2-bound run's draw barely falls from
/// the boost clock, then steeply once compute binds, and a slope measured up there overshoots.
class PowerClockSearch {
 public:
  static constexpr int kMaxRuns = 8;
  /// Stop when the next clock is within this fraction of the last (by default).
  static constexpr double kTolerance = 0.01;

  PowerClockSearch(const PowerSpec& p, double max_clock_mhz, double tolerance = kTolerance)
      : p_(p), max_clock_(max_clock_mhz), tolerance_(tolerance) {}
  /// Records a run at `load.clock_mhz`. Returns the clock to run next, or 0 when the clock of
  /// this run is the answer.
  double next(const PowerLoad& load);
  /// The draw of the last run recorded, W.
  double power_w() const { return last_power_; }

 private:
  const PowerSpec& p_;
  double max_clock_;
  double tolerance_;
  int runs_ = 0;
  double last_power_ = 0;
  double prev_clock_ = 0, prev_sm_w_ = 0;  ///< the run before the last: clock, SMs' share of the draw
  double fits_ = 0;                        ///< the highest clock run whose draw fitted the cap
  double exceeds_ = 1e300;                 ///< the lowest clock run whose draw exceeded it
  double fits_excess_ = 0, exceeds_excess_ = 0;  ///< draw minus cap at those clocks (Illinois-scaled)
  int kept_ = 0;                           ///< +n: the fitting end kept n times in a row; -n: the other
};

/// A run at the clock the power cap allows: `result` is `run`'s at `arch`, the arch with that
/// clock; `power_w` its estimated draw.
template <class Result>
struct CappedRun {
  Result result;
  ArchSpec arch;
  double power_w = 0;
};

/// Runs `run(arch at a clock)` at successive clocks, as PowerClockSearch asks from the load
/// `load_of(result, arch)` each run implies, until the clock is found. simulate() runs the
/// engine, tune's heuristic its estimate; the search is the same. The first run is at
/// `first_clock_mhz` (0: the arch's clock, the boost clock), a guess that saves runs when close;
/// it stops within `tolerance` of the clock.
template <class Run, class LoadOf>
auto run_at_capped_clock(const ArchSpec& arch, Run&& run, LoadOf&& load_of, double first_clock_mhz = 0,
                         double tolerance = PowerClockSearch::kTolerance) -> CappedRun<decltype(run(arch))> {
  PowerClockSearch clocks(arch.power, arch.sm.clock_mhz, tolerance);
  ArchSpec at = arch;
  if (first_clock_mhz > 0) at.sm.clock_mhz = std::min(first_clock_mhz, arch.sm.clock_mhz);
  for (;;) {
    auto r = run(at);
    const double next = clocks.next(load_of(r, at));
    if (next == 0) return {std::move(r), at, clocks.power_w()};
    at.sm.clock_mhz = next;
  }
}

}  // namespace tilesim
