// simulate(): the engine run at the SM clock the board's power cap allows. Without a power
// model (arch `power:` absent) one run at sm.clock_mhz; with one, runs at successive clocks
// until the run's estimated draw meets the cap (models/power/power_clock.hpp), usually two to
// four. A workload of many waves first searches on prefix runs (each kernel's leading quarter
// of blocks, a quarter of the cost), whose clock is where the whole runs start: close to the
// answer, they need two or three. The clock is one for the whole run: the hardware's power
// controller settles over milliseconds, longer than most kernels, so back-to-back kernels
// share it. Under a sim.timing harness (launches timed from an idle board) the run inside the
// controller's window comes first, at the boost clock or where its draw meets power.peak_w: its
// draw says how long the controller's average takes to reach the cap, and when the median timed
// launch ends before that, it is the answer; otherwise the steady clock's run is.
#include <algorithm>
#include <optional>

#include "models/power/power_clock.hpp"
#include "sim/core/engine.hpp"
#include "sim/core/simulator.hpp"

namespace tilesim {

namespace {

PowerLoad load_of(const SimResult& r, const ArchSpec& arch) {
  double flops = 0;
  for (const KernelStats& k : r.kernels) flops += static_cast<double>(k.flops);
  // L2 lookups as Nsight Compute's lts__t_sectors_op_read + op_write count them (a far read is
  // looked up in both halves), the measure the power model was fitted with.
  const MemCounters& m = r.total;
  const double l2_bytes =
      static_cast<double>(m.read_sectors + m.write_sectors + m.fabric_sectors) * arch.l2.sector_bytes;
  return power_load(arch.sm.clock_mhz, static_cast<double>(r.duration) * 1e-12, flops, l2_bytes,
                    static_cast<double>(m.dram_read_bytes + m.dram_write_bytes));
}

// A prefix of each kernel stands for the whole when every kernel runs many waves of alike blocks
// whose order no semaphore constrains (a persistent kernel's few programs, a sync policy's
// waits, a lone wave do not qualify).
constexpr double kPrefixFraction = 0.25;
constexpr double kPrefixTolerance = 0.03;  // a guess: the whole runs settle the last percent
bool prefix_stands_for_whole(const Workload& w, const ArchSpec& arch) {
  if (w.num_semaphores > 0 || w.kernels.empty()) return false;
  for (const Kernel& k : w.kernels)
    if (k.dispatch.size() < 16ull * arch.sm.count) return false;
  return true;
}

// The run at the steady clock under the cap: the search over whole runs (`whole_run`), after a
// search over prefix runs where they stand for the whole.
template <class WholeRun>
CappedRun<SimResult> run_at_steady_clock(const Workload& w, const ArchSpec& arch, const SimOptions& search,
                                         WholeRun&& whole_run) {
  // The prefix runs: exact, uncounted, unobserved; their clock is only a starting guess (their
  // rates run low: a cold start and a partial last wave weigh more in a quarter).
  double first_clock = 0;
  if (prefix_stands_for_whole(w, arch)) {
    SimOptions prefix = search;
    prefix.dispatch_fraction = kPrefixFraction;
    prefix.mode = SimOptions::Mode::exact;
    prefix.dispatched_blocks = nullptr;
    first_clock = run_at_capped_clock(
                      arch, [&](const ArchSpec& at) { return detail::run_engine(w, at, prefix, nullptr); }, load_of,
                      0, kPrefixTolerance)
                      .arch.sm.clock_mhz;
  }
  return run_at_capped_clock(arch, whole_run, load_of, first_clock);
}

// The harness sim.timing describes, for launches of `launch_ms` at the boost clock. A flush is
// a write stream at the DRAM's bandwidth, through the L2.
Harness harness_of(const SimOptions::Timing& t, const ArchSpec& arch, double launch_ms) {
  Harness h;
  if (t.flush_bytes > 0 && arch.dram.bandwidth_gbps > 0) {
    h.flush_ms = t.flush_bytes / (arch.dram.bandwidth_gbps * 1e9) * 1e3;
    const double tbps = arch.dram.bandwidth_gbps / 1e3;
    h.flush_w = board_power_w(arch.power, arch.sm.clock_mhz, PowerLoad{arch.sm.clock_mhz, 0, tbps, tbps});
  }
  if (t.kind == SimOptions::Timing::Kind::launches) {
    h.warmup = t.warmup;
    h.launches = t.launches;
    return h;
  }
  // triton.testing.do_bench: one call, five flushed calls to estimate the runtime (flush
  // included), max(1, warmup / estimate) untimed calls, max(1, rep / estimate) timed ones.
  const double estimate_ms = launch_ms + h.flush_ms;
  h.estimate = 5;
  h.warmup = 1 + std::max(1, static_cast<int>(t.warmup_ms / estimate_ms));
  h.launches = std::max(1, static_cast<int>(std::min(t.rep_ms / estimate_ms, 1e8)));
  return h;
}

}  // namespace

SimResult simulate(const Workload& w, const ArchSpec& arch, const SimOptions& opt) {
  check_runnable(w, arch);
  // Sampled mode's periods depend on the workload and the occupancy, not on the clock: found
  // once for every run of the search.
  std::vector<detail::KernelPeriod> periods;
  if (opt.mode == SimOptions::Mode::sampled && !opt.observer) periods = detail::find_periods(w, arch);
  const std::vector<detail::KernelPeriod>* found = periods.empty() ? nullptr : &periods;
  if (!arch.power.enabled()) return detail::run_engine(w, arch, opt, found);
  // The search runs unobserved; an observer sees only a final run at the clock found.
  SimOptions search = opt;
  search.observer = nullptr;
  // A progress bar counts every dispatch: each run after the first takes back the last one's.
  const auto take_back = [&] {
    if (opt.dispatched_blocks) opt.dispatched_blocks->fetch_sub(w.dispatch_positions());
  };
  // A whole run at `at`. The engine is deterministic and reads no power figures, so a search that
  // starts at the arch's own clock takes the run already made there (`at_boost`) instead.
  std::optional<SimResult> at_boost;
  bool counted = false;
  const auto whole_run = [&](const ArchSpec& at) {
    if (at_boost && at.sm.clock_mhz == arch.sm.clock_mhz) {
      SimResult r = std::move(*at_boost);
      at_boost.reset();
      return r;
    }
    if (counted) take_back();
    counted = true;
    return detail::run_engine(w, at, search, found);
  };
  CappedRun<SimResult> chosen;
  double window_ms = 0;
  int boosted = -1;
  if (opt.timing.kind != SimOptions::Timing::Kind::steady) {
    // A harness from an idle board: the run inside the controller's window says how long the
    // window lasts. When the median timed launch ends before the cap binds, that run is the
    // answer; otherwise the steady one.
    chosen.result = whole_run(arch);
    chosen.arch = arch;
    chosen.power_w = board_power_w(arch.power, arch.sm.clock_mhz, load_of(chosen.result, arch));
    if (arch.power.peak_w > 0 && chosen.power_w > arch.power.peak_w) {
      // Inside the window a fast limiter holds the draw at peak_w: the clock where it fits.
      ArchSpec limited = arch;
      limited.power.cap_w = arch.power.peak_w;
      at_boost = std::move(chosen.result);
      chosen = run_at_capped_clock(limited, whole_run, load_of, 0);
      chosen.arch.power = arch.power;
    }
    window_ms = boost_window_ms(arch.power, chosen.power_w);
    const double launch_ms = static_cast<double>(chosen.result.duration) * 1e-9;
    const Harness h = harness_of(opt.timing, arch, launch_ms);
    boosted = timed_launches_in_window(arch.power, h, launch_ms, chosen.power_w);
    // Sorted, the launches inside the window come first; the median is the middle one, or the
    // slower of the middle two.
    if (boosted <= h.launches / 2) {
      if (chosen.arch.sm.clock_mhz == arch.sm.clock_mhz) at_boost = std::move(chosen.result);
      chosen = run_at_steady_clock(w, arch, search, whole_run);
    }
  } else {
    chosen = run_at_steady_clock(w, arch, search, whole_run);
  }
  if (opt.observer) {
    take_back();
    chosen.result = detail::run_engine(w, chosen.arch, opt);  // observed: whole (sampling needs no observer)
  }
  chosen.result.power_w = chosen.power_w;
  chosen.result.boost_window_ms = window_ms;
  chosen.result.boost_launches = boosted;
  return std::move(chosen.result);
}

}  // namespace tilesim
