// simulate(): the engine run at the SM clock the board's power cap allows. Without a power
// model (arch `power:` absent) one run at sm.clock_mhz; with one, runs at successive clocks
// until the run's estimated draw meets the cap (models/power/power_clock.hpp), usually two to
// four. A workload of many waves first searches on prefix runs (each kernel's leading quarter
// of blocks, a quarter of the cost), whose clock is where the whole runs start: close to the
// answer, they need two or three. The clock is one for the whole run: the hardware's power
// controller settles over milliseconds, longer than most kernels, so back-to-back kernels
// share it.
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
  bool first = true;
  auto capped = run_at_capped_clock(
      arch,
      [&](const ArchSpec& at) {
        if (!first) take_back();
        first = false;
        return detail::run_engine(w, at, search, found);
      },
      load_of, first_clock);
  if (opt.observer) {
    take_back();
    capped.result = detail::run_engine(w, capped.arch, opt);  // observed: whole (sampling needs no observer)
  }
  capped.result.power_w = capped.power_w;
  return std::move(capped.result);
}

}  // namespace tilesim
