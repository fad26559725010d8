// Sampled mode: finding a kernel's period (find_period) and skipping steady periods at run
// time (Engine::at_period_boundary). sim/core/sampling.hpp says why the skip is exact.
#include "sim/core/sampling.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <cmath>

#include "models/occupancy.hpp"
#include "sim/core/engine.hpp"

namespace tilesim::detail {

namespace {

constexpr std::uint32_t kUnused = 0xffffffffu;
// Spans that must agree before periods are skipped: two can agree by chance when the traffic
// repeats over more periods than a span (row order's bursts, measured: docs/architecture.md).
constexpr std::uint32_t kSpans = 3;
// The longest span tried, in windows (SamplingRun::span).
constexpr std::uint32_t kMaxSpanWindows = 16;
// A kernel without an exact period is judged by its rates over windows of positions when it
// has at least this many windows: fewer leave nothing to skip after the warm-up and the drain.
constexpr std::uint64_t kStatisticalMinWindows = 12;
constexpr std::uint64_t kNoBlockPrint = 0x9e3779b97f4a7c15ull;

struct Origin {
  std::int64_t batch = 0, row = 0, col = 0;
  bool operator==(const Origin&) const = default;
};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

// Every block's program as a fingerprint of its steps with each tensor's accesses relative to
// the block's first access of that tensor (its origin): two blocks whose fingerprints match run
// the same program moved by the difference of their origins.
struct Programs {
  std::vector<std::uint32_t> local;  // workload tensor -> the kernel's own index (kUnused)
  std::uint32_t tensors = 0;
  std::vector<std::uint64_t> print;  // per block
  std::vector<Origin> origin;        // per block x tensors
  std::vector<std::uint8_t> present;  // per block x tensors
};

// Fills `pr`; returns why the kernel cannot be sampled ("" when it can).
std::string fingerprint(const Workload& w, const Kernel& k, Programs& pr) {
  pr.local.assign(w.tensors.size(), kUnused);
  for_each_access(k, [&](const TileAccess& a) {
    if (pr.local[a.tensor] == kUnused) pr.local[a.tensor] = pr.tensors++;
  });
  // Views share bytes with other tensors under other offsets: moving one would not move the other.
  const std::vector<std::uint32_t> roots = storage_roots(w.tensors);
  for (std::uint32_t t = 0; t < w.tensors.size(); ++t)
    if (pr.local[t] != kUnused && roots[t] != t) return "it accesses tensor " + w.tensors[t].name + " through a view";
  for (const Step& st : k.steps)  // a lazy kernel has none
    if (st.wait_sem != kNoSem || st.post_sem != kNoSem) return "its blocks wait on or post semaphores";
  const std::uint32_t nb = k.num_blocks(), nt = pr.tensors;
  pr.print.assign(nb, 0);
  pr.origin.assign(static_cast<std::size_t>(nb) * nt, Origin{});
  pr.present.assign(static_cast<std::size_t>(nb) * nt, 0);
  for_each_program(k, [&](std::uint32_t b, const ProgramView& prog) {
    std::uint64_t h = mix(0xcbf29ce484222325ull, prog.num_steps);
    Origin* org = &pr.origin[static_cast<std::size_t>(b) * nt];
    std::uint8_t* has = &pr.present[static_cast<std::size_t>(b) * nt];
    for (std::uint32_t s = 0; s < prog.num_steps; ++s) {
      const Step& st = prog.steps[s];
      for (std::uint64_t v : {st.flops, std::uint64_t{st.dequant_elems}, std::uint64_t{st.softmax_elems},
                              std::uint64_t{st.epilogue_elems}, std::uint64_t{st.num_accesses}})
        h = mix(h, v);
      for (std::uint32_t i = st.first_access; i < st.first_access + st.num_accesses; ++i) {
        const TileAccess& a = prog.accesses[i];
        const std::uint32_t lt = pr.local[a.tensor];
        if (!has[lt]) org[lt] = Origin{a.batch, a.row0, a.col0}, has[lt] = 1;
        for (std::uint64_t v : {std::uint64_t{lt}, std::uint64_t(a.kind), std::uint64_t{a.rows}, std::uint64_t{a.cols},
                                static_cast<std::uint64_t>(a.batch - org[lt].batch),
                                static_cast<std::uint64_t>(a.row0 - org[lt].row),
                                static_cast<std::uint64_t>(a.col0 - org[lt].col)})
          h = mix(h, v);
      }
    }
    pr.print[b] = h;
  });
  return "";
}

// The offset per tensor from the block at dispatch position p to the one at q (false: not one
// program moved).
bool offset(const Kernel& k, const Programs& pr, std::size_t p, std::size_t q, std::vector<Origin>& out) {
  const std::uint32_t a = k.dispatch[p], b = k.dispatch[q], nt = pr.tensors;
  if (a == kNoBlock || b == kNoBlock) {
    out.assign(nt, Origin{});
    return a == b;
  }
  if (pr.print[a] != pr.print[b]) return false;
  out.resize(nt);
  for (std::uint32_t t = 0; t < nt; ++t) {
    const Origin& x = pr.origin[static_cast<std::size_t>(a) * nt + t];
    const Origin& y = pr.origin[static_cast<std::size_t>(b) * nt + t];
    out[t] = Origin{y.batch - x.batch, y.row - x.row, y.col - x.col};
  }
  return true;
}

// Whether every tensor that moves by `shift` per period leaves the region one period used: its
// accesses' bounding box over the period is no longer than the shift along a moving dimension.
bool moves_away(const Kernel& k, const Programs& pr, std::uint32_t period, const std::vector<Origin>& shift) {
  const std::uint32_t nt = pr.tensors;
  std::vector<Origin> lo(nt, Origin{INT64_MAX, INT64_MAX, INT64_MAX}), hi(nt, Origin{INT64_MIN, INT64_MIN, INT64_MIN});
  ProgramBuffer buf;
  for (std::uint32_t p = 0; p < period; ++p) {
    const std::uint32_t b = k.dispatch[p];
    if (b == kNoBlock) continue;
    const ProgramView prog = k.program(b, buf);
    for (std::uint32_t s = 0; s < prog.num_steps; ++s)
      for (std::uint32_t i = prog.steps[s].first_access; i < prog.steps[s].first_access + prog.steps[s].num_accesses; ++i) {
        const TileAccess& a = prog.accesses[i];
        const std::uint32_t t = pr.local[a.tensor];
        lo[t] = Origin{std::min<std::int64_t>(lo[t].batch, a.batch), std::min<std::int64_t>(lo[t].row, a.row0),
                       std::min<std::int64_t>(lo[t].col, a.col0)};
        hi[t] = Origin{std::max<std::int64_t>(hi[t].batch, a.batch + 1),
                       std::max<std::int64_t>(hi[t].row, std::int64_t{a.row0} + a.rows),
                       std::max<std::int64_t>(hi[t].col, std::int64_t{a.col0} + a.cols)};
      }
  }
  for (std::uint32_t t = 0; t < nt; ++t) {
    const Origin& s = shift[t];
    if (s == Origin{} || lo[t].batch == INT64_MAX) continue;  // stays put (or unused in the period)
    const bool away = (s.batch != 0 && hi[t].batch - lo[t].batch <= std::llabs(s.batch)) ||
                      (s.row != 0 && hi[t].row - lo[t].row <= std::llabs(s.row)) ||
                      (s.col != 0 && hi[t].col - lo[t].col <= std::llabs(s.col));
    if (!away) return false;
  }
  return true;
}

// Positions a run must simulate before it can judge spans steady (Engine::at_period_boundary):
// a window, then twice kSpans spans.
std::uint64_t warm_positions(std::uint64_t period, std::uint64_t window) {
  const std::uint64_t span = std::max<std::uint64_t>(1, (window + period - 1) / period);
  return (window + period - 1) / period * period + 2 * kSpans * span * period;
}

}  // namespace

KernelPeriod find_period(const Workload& w, std::uint32_t ki, std::uint64_t window) {
  const Kernel& k = w.kernels[ki];
  KernelPeriod best;
  Programs pr;
  best.why_not = fingerprint(w, k, pr);
  if (!best.why_not.empty()) return best;
  const std::uint64_t n = k.dispatch.size();
  std::uint64_t best_skip = 0;
  std::vector<Origin> first, shift;
  // Longer periods leave less to skip; stop where even a whole periodic sequence would leave none.
  for (std::uint64_t period = 1;; ++period) {
    const std::uint64_t need = warm_positions(period, window) + window + 2 * period;
    if (need >= n) break;
    if (!offset(k, pr, 0, period, first)) continue;
    std::uint64_t p = 1;
    while (p + period < n && offset(k, pr, p, p + period, shift) && shift == first) ++p;
    const std::uint64_t periodic = std::min(n, p + period);  // pairs (q, q + P) hold for every q < p
    // Room: from the first judged boundary to where the drain (a window and a period) begins,
    // inside the periodic prefix.
    const std::uint64_t end = std::min(n - window - period, periodic > window + period ? periodic - window - period : 0);
    const std::uint64_t start = warm_positions(period, window);
    // Skips come in whole windows of whole periods (Engine::at_period_boundary).
    const std::uint64_t unit = period * (window / std::gcd<std::uint64_t>(period, window));
    const std::uint64_t skip = end > start + period ? (end - start - period) / unit * unit : 0;
    if (skip > best_skip && moves_away(k, pr, static_cast<std::uint32_t>(period), first)) {
      best_skip = skip;
      best.period = static_cast<std::uint32_t>(period);
      best.periodic = periodic;
    }
    if (periodic == n && best.period) break;  // a longer whole-sequence period skips no more
  }
  if (!best.period && window > 0 && n >= kStatisticalMinWindows * window) {
    best.period = static_cast<std::uint32_t>(window);
    best.periodic = n;
    best.statistical = true;
  }
  best.why_not = best.period ? "" : "no period of its dispatch sequence leaves whole periods (and windows) to skip";
  return best;
}

namespace {


// The last kSpans spans of `m` periods each, from the snapshots at boundaries j - kSpans m, ..., j.
struct Spans {
  std::array<MemCounters, kSpans> d;
  std::array<Time, kSpans> t{};
  std::array<double, kSpans> dram{};
  std::array<std::uint64_t, kSpans> start_writeback{};
  const SampleSnapshot* first = nullptr;
  const SampleSnapshot* last = nullptr;
};

Spans last_spans(const std::vector<SampleSnapshot>& snaps, std::uint32_t m) {
  const std::size_t e = snaps.size() - 1;
  Spans sp;
  sp.first = &snaps[e - kSpans * m];
  sp.last = &snaps[e];
  for (std::uint32_t i = 0; i < kSpans; ++i) {
    const SampleSnapshot &a = snaps[e - (kSpans - i) * m], &b = snaps[e - (kSpans - 1 - i) * m];
    sp.d[i] = b.mem - a.mem;
    sp.t[i] = b.t - a.t;
    sp.dram[i] = static_cast<double>(sp.d[i].dram_read_bytes + sp.d[i].dram_write_bytes);
    sp.start_writeback[i] = b.start_writeback_bytes - a.start_writeback_bytes;
  }
  return sp;
}

// The spans are steady when their times, L2 read hits and DRAM bytes agree within `tol` (DRAM
// also when it is a negligible share of the traffic) and the do_bench flush's dirty lines, a
// start transient, are no longer being written back.
bool steady(const Spans& sp, double tol, std::uint32_t sector_bytes) {
  auto agree = [&](auto value) {
    double lo = value(0), hi = lo;
    for (std::uint32_t i = 1; i < kSpans; ++i) lo = std::min(lo, value(i)), hi = std::max(hi, value(i));
    return hi - lo <= tol * std::max(std::abs(lo), std::abs(hi));
  };
  for (std::uint32_t i = 0; i < kSpans; ++i)
    if (static_cast<double>(sp.start_writeback[i]) > 0.01 * sp.dram[i]) return false;
  const double traffic = static_cast<double>(sp.d[kSpans - 1].read_sectors + sp.d[kSpans - 1].write_sectors) * sector_bytes;
  double dram_lo = sp.dram[0], dram_hi = dram_lo;
  for (double x : sp.dram) dram_lo = std::min(dram_lo, x), dram_hi = std::max(dram_hi, x);
  return agree([&](std::uint32_t i) { return static_cast<double>(sp.t[i]); }) &&
         agree([&](std::uint32_t i) { return static_cast<double>(sp.d[i].read_hit_sectors); }) &&
         (agree([&](std::uint32_t i) { return sp.dram[i]; }) || dram_hi - dram_lo <= 0.001 * traffic);
}

// Whether the spans' mean rate (per period) is also the rate over twice as many periods:
// spans that agree with each other can still all miss the same burst, when the traffic repeats
// over a cycle that a span's length is not a multiple of (a fused attention whose waves of
// dispatches come every 4 periods, measured in spans of 5, ran 6% fast). Twice as long, not
// since the start: the first periods after the slots fill are still a transient.
bool matches_long_run(const std::vector<SampleSnapshot>& snaps, std::uint32_t m, double tol) {
  const std::size_t last = snaps.size() - 1;
  const SampleSnapshot &now = snaps.back(), &span_start = snaps[last - kSpans * m], &run_start = snaps[last - 2 * kSpans * m];
  const double short_periods = static_cast<double>(kSpans) * m;
  const double long_periods = 2 * short_periods;
  auto same_rate = [&](double s, double l) {
    const double a = s / short_periods, b = l / long_periods;
    return std::abs(a - b) <= tol * std::max(std::abs(a), std::abs(b));
  };
  const MemCounters ds = now.mem - span_start.mem, dl = now.mem - run_start.mem;
  return same_rate(static_cast<double>(now.t - span_start.t), static_cast<double>(now.t - run_start.t)) &&
         same_rate(static_cast<double>(ds.read_hit_sectors), static_cast<double>(dl.read_hit_sectors)) &&
         same_rate(static_cast<double>(ds.dram_read_bytes + ds.dram_write_bytes),
                   static_cast<double>(dl.dram_read_bytes + dl.dram_write_bytes));
}

// `skip` periods' worth of counters at the mean rate of `total`, measured over `periods`.
MemCounters extrapolate(const MemCounters& total, std::uint64_t skip, std::uint64_t periods) {
  MemCounters out;
  for (const MemCounterField& f : kMemCounterFields) out.*f.member = total.*f.member * skip / periods;
  return out;
}

}  // namespace

std::vector<KernelPeriod> find_periods(const Workload& w, const ArchSpec& arch) {
  std::vector<KernelPeriod> out;
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k) {
    const Kernel& K = w.kernels[k];
    const Occupancy occ = compute_occupancy(arch, K.resources, K.blocks_per_sm, "kernel " + K.name);
    out.push_back(find_period(w, k, static_cast<std::uint64_t>(occ.blocks_per_sm) * arch.sm.count));
  }
  return out;
}

namespace {

constexpr std::uint64_t kRateWarmWindows = 2;  // windows before the slots' first refills settle
constexpr std::uint64_t kMinRateWindows = 6;   // the fewest windows whose rates are judged
constexpr std::uint64_t kMinRateSkipWindows = 4;  // the fewest worth skipping (and at least 1/8 of the kernel)

// The mean and its standard error of per-window values, and whether the later half of them
// runs at the rate of the earlier (no drift beyond twice the halves' combined error).
struct RateEstimate {
  double mean = 0, se = 0;
  bool level = false;
};

template <class Value>
RateEstimate rate_of(std::size_t windows, Value value) {
  RateEstimate r;
  const std::size_t h = windows / 2;
  double sum = 0, first = 0, second = 0;
  for (std::size_t i = 0; i < windows; ++i) {
    const double v = value(i);
    sum += v;
    if (i < h) first += v;
    else if (i >= windows - h) second += v;
  }
  r.mean = sum / static_cast<double>(windows);
  double ss = 0;
  for (std::size_t i = 0; i < windows; ++i) ss += (value(i) - r.mean) * (value(i) - r.mean);
  const double sd = std::sqrt(ss / static_cast<double>(windows - 1));
  r.se = sd / std::sqrt(static_cast<double>(windows));
  const double halves_se = sd * std::sqrt(2.0 / static_cast<double>(h));
  r.level = std::abs(second - first) / static_cast<double>(h) <= 2 * halves_se;
  return r;
}

// The least-squares slope of per-window values over windows 0..windows-1, per window.
template <class Value>
double slope_of(std::size_t windows, Value value) {
  const double n = static_cast<double>(windows), mid = (n - 1) / 2;
  double sxy = 0, sxx = 0, mean = 0;
  for (std::size_t i = 0; i < windows; ++i) mean += value(i);
  mean /= n;
  for (std::size_t i = 0; i < windows; ++i) {
    const double x = static_cast<double>(i) - mid;
    sxy += x * (value(i) - mean);
    sxx += x * x;
  }
  return sxx > 0 ? sxy / sxx : 0;
}

}  // namespace

// Positions a kernel may skip from boundary j: up to where its drain begins (a window and a
// period, and enough new bytes to replace the L2's contents twice, so that a kernel after this
// one finds the L2 as the whole run leaves it), in whole windows of whole periods. `total` is
// what the kernel did over `measured` periods.
std::uint64_t Engine::skip_room(const KernelRun& kr, std::uint64_t j, const MemCounters& total,
                                std::uint64_t measured) const {
  const SamplingRun& sr = kr.sampling;
  const std::uint64_t period = sr.found.period;
  const double new_bytes = static_cast<double>(total.dram_read_bytes + total.write_sectors * sector_bytes_) / measured;
  const double l2_periods = new_bytes > 0 ? 2.0 * static_cast<double>(arch_.l2.bytes) / new_bytes : 0;
  const std::uint64_t tail =
      std::max<std::uint64_t>(sr.window + period, static_cast<std::uint64_t>(std::ceil(l2_periods)) * period);
  const std::uint64_t n = kr.k->dispatch.size(), here = j * period;
  const std::uint64_t end = std::min(n > tail ? n - tail : 0,
                                     sr.found.periodic > sr.window + period ? sr.found.periodic - sr.window - period : 0);
  // Whole windows of positions too: a run's state also has a phase within its waves (blocks of
  // equal work dispatch in bursts of a window), and the positions left after the skip must fill
  // the last wave as the whole run does, or the tail effect changes (a 224-block GEMM on 16
  // slots ran 6.6% long when 95 positions were skipped and its last wave kept one block).
  const std::uint64_t unit = sr.window / std::gcd<std::uint64_t>(period, sr.window);  // periods
  return end > here ? (end - here) / period / unit * unit : 0;
}

// An exact period's plan: once the last spans of periods agree, skip at their mean rate (the
// skipped periods are relabelled replicas, sim/core/sampling.hpp).
SkipPlan Engine::plan_period_skip(const KernelRun& kr, std::uint64_t j) const {
  const SamplingRun& sr = kr.sampling;
  const std::uint64_t period = sr.found.period;
  SkipPlan plan;
  // Spans are the shortest run of whole periods, at least a window long, over which the last
  // spans agree with each other and with twice as many periods: traffic may repeat over several
  // periods (a wave that is not a whole number of periods meets them in alternating phases).
  std::uint32_t m = 0;
  for (std::uint32_t c = sr.span; !m && c <= kMaxSpanWindows * sr.span && 2 * kSpans * c < sr.snaps.size() &&
                                  (j - 2 * kSpans * c) * period >= sr.window;
       c += sr.span)
    if (steady(last_spans(sr.snaps, c), opt_.sampling_tolerance, sector_bytes_) &&
        matches_long_run(sr.snaps, c, opt_.sampling_tolerance))
      m = c;
  if (!m) return plan;
  const Spans sp = last_spans(sr.snaps, m);
  plan.measured = static_cast<std::uint64_t>(kSpans) * m;  // periods
  plan.from = sr.snaps.size() - 1 - plan.measured;
  plan.skip = skip_room(kr, j, sr.snaps.back().mem - sp.first->mem, plan.measured);
  plan.decided = true;
  // The estimate's uncertainty: the spans' range over the mean, carried over the skipped time.
  auto range = [](const auto& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return static_cast<double>(*hi - *lo);
  };
  plan.time_spread = range(sp.t) / 2 * static_cast<double>(plan.skip) / m;
  plan.dram_spread = range(sp.dram) / 2 * static_cast<double>(plan.skip) / m;
  return plan;
}

// A kernel without an exact period, its boundaries a window apart: the windows since the
// warm-up estimate the rates of time, L2 read hits and DRAM bytes per window. It skips the
// room left before its drain once those rates hold level over the measured windows and twice
// the skip's standard error in each stays within the tolerance of the kernel's projected total
// (the skipped windows' own fluctuation averages out; the estimate's error does not). Until
// then it waits: each window measured shrinks the error, and the room, by one window.
SkipPlan Engine::plan_rate_skip(const KernelRun& kr, std::uint64_t j) const {
  const SamplingRun& sr = kr.sampling;
  SkipPlan plan;
  if (j < kRateWarmWindows + kMinRateWindows) return plan;
  const SampleSnapshot& now = sr.snaps.back();
  const std::size_t history = std::min<std::size_t>(j - kRateWarmWindows, sr.snaps.size() - 1);
  // Per-window values of the last `windows` windows.
  auto series = [&](std::size_t windows, auto field) {
    const std::size_t from = sr.snaps.size() - 1 - windows;
    return [&sr, from, field](std::size_t i) {
      return static_cast<double>(field(sr.snaps[from + i + 1]) - field(sr.snaps[from + i]));
    };
  };
  const auto time_of = [](const SampleSnapshot& s) { return s.t; };
  const auto dram_of = [](const SampleSnapshot& s) { return s.mem.dram_read_bytes + s.mem.dram_write_bytes; };
  const auto hits_of = [](const SampleSnapshot& s) { return s.mem.read_hit_sectors; };
  // The drift over the whole history since the warm-up: a kernel's rates may move for tens of
  // waves (its blocks' phases spread), and a short run of level windows says nothing about that.
  const double drift_t = std::abs(slope_of(history, series(history, time_of)));
  const double drift_dram = std::abs(slope_of(history, series(history, dram_of)));
  const double drift_hits = std::abs(slope_of(history, series(history, hits_of)));
  // The latest windows estimate the rates: the longest run of them that holds level.
  for (std::size_t windows = history; windows >= kMinRateWindows; windows = windows * 3 / 4) {
    const std::size_t from = sr.snaps.size() - 1 - windows;
    const SampleSnapshot& first = sr.snaps[from];
    const MemCounters total = now.mem - first.mem;
    const double dram_total = static_cast<double>(total.dram_read_bytes + total.dram_write_bytes);
    if (static_cast<double>(now.start_writeback_bytes - first.start_writeback_bytes) > 0.01 * dram_total) return plan;
    const std::uint64_t room = skip_room(kr, j, total, windows);
    // A skip perturbs the run as another noise seed would (moving an 8192^3 GEMM's DRAM bytes by
    // up to 3% for one window skipped of 16), so one too short to save time is not taken.
    if (room < std::max<std::uint64_t>(kMinRateSkipWindows, kr.k->dispatch.size() / sr.window / 8)) {
      plan.decided = true;  // too late
      return plan;
    }
    const RateEstimate t = rate_of(windows, series(windows, time_of));
    const RateEstimate dram = rate_of(windows, series(windows, dram_of));
    const RateEstimate hits = rate_of(windows, series(windows, hits_of));
    if (!t.level || !dram.level || !hits.level) continue;
    // The skip's error: twice the standard error of the rate, and the drift carried from the
    // measured windows' middle to the skipped ones', within the tolerance of the projected total.
    const double rest = static_cast<double>(kr.k->dispatch.size()) / static_cast<double>(sr.window) - static_cast<double>(j);
    const double skip = static_cast<double>(room);
    const double lever = skip * (skip + static_cast<double>(windows)) / 2;
    auto within = [&](const RateEstimate& r, double drift, double so_far) {
      return 2 * skip * r.se + drift * lever <= opt_.sampling_tolerance * (so_far + rest * r.mean);
    };
    if (!within(t, drift_t, static_cast<double>(now.t + offset_ps_ - kr.stats.start)) ||
        !within(dram, drift_dram, static_cast<double>(dram_of(now))) ||
        !within(hits, drift_hits, static_cast<double>(hits_of(now))))
      continue;
    plan.decided = true;
    plan.skip = room;
    plan.measured = windows;
    plan.from = from;
    plan.time_spread = skip * t.se + drift_t * lever;
    plan.dram_spread = skip * dram.se + drift_dram * lever;
    return plan;
  }
  return plan;
}

// At the dispatch of a boundary (position j x P): snapshot the kernel's counters, then plan a
// skip by the kernel's exact period or by its rates, and carry it out.
void Engine::at_period_boundary(std::uint32_t kernel, Time now) {
  KernelRun& kr = runs_[kernel];
  SamplingRun& sr = kr.sampling;
  const std::uint64_t period = sr.found.period, j = sr.boundary++;
  SampleSnapshot snap{now, kr.stats.mem, {}, kr.stats.start_writeback_bytes};
  for (const TensorStats& t : kr.stats.tensors) snap.tensors.push_back(t.mem);
  sr.snaps.push_back(std::move(snap));
  // Spans of at most kMaxSpanWindows windows: the snapshots kept stay bounded (a kernel of
  // period 1 has a boundary at every position).
  const std::size_t keep = 2 * kSpans * kMaxSpanWindows * sr.span + 1;
  if (sr.snaps.size() > 2 * keep) sr.snaps.erase(sr.snaps.begin(), sr.snaps.end() - static_cast<std::ptrdiff_t>(keep));
  // Only a kernel running alone: another kernel's blocks would not be skipped with it.
  for (std::uint32_t o = 0; o < runs_.size(); ++o)
    if (o != kernel && runs_[o].launched && !runs_[o].finished) return;
  const SkipPlan plan = sr.found.statistical ? plan_rate_skip(kr, j) : plan_period_skip(kr, j);
  if (!plan.decided) return;
  sr.done = true;
  if (plan.skip == 0) return;  // too late: no whole unit of periods is left before the drain
  const SampleSnapshot& first = sr.snaps[plan.from];
  const MemCounters total = sr.snaps.back().mem - first.mem;
  kr.stats.mem += extrapolate(total, plan.skip, plan.measured);
  for (std::size_t t = 0; t < kr.stats.tensors.size(); ++t)
    kr.stats.tensors[t].mem += extrapolate(sr.snaps.back().tensors[t] - first.tensors[t], plan.skip, plan.measured);
  const Time measured_ps = sr.snaps.back().t - first.t;
  const Time skipped_ps = measured_ps * static_cast<Time>(plan.skip) / static_cast<Time>(plan.measured);
  offset_ps_ += skipped_ps;
  kr.next_dispatch += plan.skip * period;
  if (opt_.dispatched_blocks) opt_.dispatched_blocks->fetch_add(plan.skip * period, std::memory_order_relaxed);
  SamplingStats& ss = kr.stats.sampling;
  ss.period_blocks = sr.found.period;
  ss.by_rates = sr.found.statistical;
  ss.skipped_blocks = plan.skip * period;
  ss.skipped_ps = skipped_ps;
  ss.time_spread_ps = static_cast<Time>(plan.time_spread);
  ss.dram_spread_bytes = static_cast<std::uint64_t>(plan.dram_spread);
}

}  // namespace tilesim::detail
