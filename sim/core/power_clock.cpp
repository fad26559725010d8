// simulate(): the engine run at the SM clock the board's power cap allows. Without a power
// model (arch `power:` absent) one run at sm.clock_mhz; with one, runs at successive clocks
// until the run's estimated draw meets the cap (models/power/power_clock.hpp), usually two to
// four. The clock is one for the whole run: the hardware's power controller settles over
// milliseconds, longer than most kernels, so back-to-back kernels share it.
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
  bool first = true;
  auto capped = run_at_capped_clock(
      arch,
      [&](const ArchSpec& at) {
        if (!first) take_back();
        first = false;
        return detail::run_engine(w, at, search, found);
      },
      load_of);
  if (opt.observer) {
    take_back();
    capped.result = detail::run_engine(w, capped.arch, opt);  // observed: whole (sampling needs no observer)
  }
  capped.result.power_w = capped.power_w;
  return std::move(capped.result);
}

}  // namespace tilesim
