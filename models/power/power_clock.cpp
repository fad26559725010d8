#include "models/power/power_clock.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tilesim {

namespace {

// The share of the draw in the SMs' voltage domain: tensor work and L2 traffic, whose energy
// per operation falls with the voltage the clock is run at.
double sm_power_w(const PowerSpec& p, double max_clock_mhz, const PowerLoad& l) {
  const double voltage = std::pow(l.clock_mhz / max_clock_mhz, p.voltage_exponent);
  return (p.w_per_tflops * l.tflops + p.w_per_l2_tbps * l.l2_tbps) * voltage;
}

}  // namespace

PowerLoad power_load(double clock_mhz, double seconds, double flops, double l2_bytes, double dram_bytes) {
  PowerLoad l;
  l.clock_mhz = clock_mhz;
  if (seconds <= 0) return l;
  l.tflops = flops / seconds / 1e12;
  l.l2_tbps = l2_bytes / seconds / 1e12;
  l.dram_tbps = dram_bytes / seconds / 1e12;
  return l;
}

double board_power_w(const PowerSpec& p, double max_clock_mhz, const PowerLoad& load) {
  return p.idle_w + sm_power_w(p, max_clock_mhz, load) + p.w_per_dram_tbps * load.dram_tbps;
}

double boost_window_ms(const PowerSpec& p, double window_draw_w) {
  if (window_draw_w <= p.cap_w) return std::numeric_limits<double>::infinity();
  if (p.average_ms <= 0) return 0;
  // avg(t) = draw - (draw - idle) exp(-t / tau) meets the cap at t = tau ln((draw - idle) / (draw - cap)).
  return p.average_ms * std::log((window_draw_w - p.idle_w) / (window_draw_w - p.cap_w));
}

int timed_launches_in_window(const PowerSpec& p, const Harness& h, double launch_ms, double window_draw_w) {
  if (h.launches <= 0) return 0;
  if (window_draw_w <= p.cap_w) return h.launches;
  if (p.average_ms <= 0 || !(launch_ms > 0)) return 0;
  double average = p.idle_w;
  // The average after `ms` at `draw`; a segment drawing more than the cap crosses it at most once.
  const auto after = [&](double ms, double draw) {
    average = draw + (average - draw) * std::exp(-ms / p.average_ms);
    return average < p.cap_w;
  };
  const auto flush = [&] {
    if (h.flush_ms > 0) after(h.flush_ms, h.flush_w);
  };
  for (int i = 0; i < h.estimate; ++i) {
    flush();
    if (!after(launch_ms, window_draw_w)) return 0;
  }
  for (int i = 0; i < h.warmup; ++i)
    if (!after(launch_ms, window_draw_w)) return 0;
  for (int i = 0; i < h.launches; ++i) {
    flush();
    if (!after(launch_ms, window_draw_w)) return i;
  }
  return h.launches;
}

double PowerClockSearch::next(const PowerLoad& load) {
  ++runs_;
  const double f = load.clock_mhz;
  const double sm_w = sm_power_w(p_, max_clock_, load);
  last_power_ = board_power_w(p_, max_clock_, load);
  if (f >= max_clock_ && last_power_ <= p_.cap_w) return 0;  // the cap does not bind
  // The clocks known to fit under the cap and known not to: the answer lies between.
  const double excess = last_power_ - p_.cap_w;
  if (excess <= 0 && f > fits_) {
    fits_ = f, fits_excess_ = excess;
    kept_ = kept_ < 0 ? kept_ - 1 : -1;  // the exceeding end was kept
    if (kept_ <= -2) exceeds_excess_ /= 2;
  } else if (excess > 0 && f < exceeds_) {
    exceeds_ = f, exceeds_excess_ = excess;
    kept_ = kept_ > 0 ? kept_ + 1 : 1;  // the fitting end was kept
    if (kept_ >= 2) fits_excess_ /= 2;
  }
  // What the SMs may draw at the clock sought, DRAM taken as it is now.
  const double budget = p_.cap_w - p_.idle_w - p_.w_per_dram_tbps * load.dram_tbps;
  double target = p_.min_clock_mhz;
  if (budget > 0 && sm_w > 0) {
    double s = 1 + p_.voltage_exponent;
    if (prev_clock_ > 0 && prev_sm_w_ > 0 && std::abs(std::log(f / prev_clock_)) > 1e-6)
      s = std::clamp(std::log(sm_w / prev_sm_w_) / std::log(f / prev_clock_), p_.voltage_exponent + 0.05,
                     1 + p_.voltage_exponent);
    target = f * std::pow(budget / sm_w, 1 / s);
  }
  // A run's rates move with the clock unevenly (its blocks drift differently), so the draw is
  // not smooth in the clock: a secant step that leaves the bracket is replaced by bisection.
  const double lo = std::max(fits_, p_.min_clock_mhz);
  if (fits_ > 0 && exceeds_ < 1e300 && exceeds_excess_ > fits_excess_)
    target = fits_ + (exceeds_ - fits_) * (-fits_excess_) / (exceeds_excess_ - fits_excess_);
  if (target >= exceeds_ || (fits_ > 0 && target <= fits_)) target = std::sqrt(lo * exceeds_);
  target = std::clamp(target, p_.min_clock_mhz, max_clock_);
  prev_clock_ = f;
  prev_sm_w_ = sm_w;
  if (f <= p_.min_clock_mhz && last_power_ > p_.cap_w) return 0;  // as low as it goes
  if (runs_ >= kMaxRuns || std::abs(target - f) <= tolerance_ * f || exceeds_ - lo <= tolerance_ * exceeds_) return 0;
  return target;
}

}  // namespace tilesim
