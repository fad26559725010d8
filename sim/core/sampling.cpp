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

// At the dispatch of a boundary (position j x P): snapshot the kernel's counters; once the last
// spans of periods agree, skip whole periods (sim/core/sampling.hpp).
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
  if (!m) return;
  const Spans sp = last_spans(sr.snaps, m);
  const std::uint64_t measured = static_cast<std::uint64_t>(kSpans) * m;  // periods
  const MemCounters total = sr.snaps.back().mem - sp.first->mem;
  // The drain is simulated: a window and a period, and enough new bytes to replace the L2's
  // contents twice, so that a kernel after this one finds the L2 as the whole run leaves it.
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
  const std::uint64_t skip = end > here ? (end - here) / period / unit * unit : 0;
  if (skip == 0) {
    sr.done = true;  // too late: no whole unit of periods is left before the drain
    return;
  }
  kr.stats.mem += extrapolate(total, skip, measured);
  for (std::size_t t = 0; t < kr.stats.tensors.size(); ++t)
    kr.stats.tensors[t].mem += extrapolate(sr.snaps.back().tensors[t] - sp.first->tensors[t], skip, measured);
  const Time measured_ps = sr.snaps.back().t - sp.first->t;
  const Time skipped_ps = measured_ps * static_cast<Time>(skip) / static_cast<Time>(measured);
  offset_ps_ += skipped_ps;
  kr.next_dispatch += skip * period;
  if (opt_.dispatched_blocks) opt_.dispatched_blocks->fetch_add(skip * period, std::memory_order_relaxed);
  // The estimate's uncertainty: the spans' range over the mean, carried over the skipped time.
  auto range = [](const auto& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return static_cast<double>(*hi - *lo);
  };
  SamplingStats& ss = kr.stats.sampling;
  ss.period_blocks = sr.found.period;
  ss.skipped_blocks = skip * period;
  ss.skipped_ps = skipped_ps;
  ss.time_spread_ps = static_cast<Time>(range(sp.t) / 2 * static_cast<double>(skip) / m);
  ss.dram_spread_bytes = static_cast<std::uint64_t>(range(sp.dram) / 2 * static_cast<double>(skip) / m);
  sr.done = true;
}

}  // namespace tilesim::detail
