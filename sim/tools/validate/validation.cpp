#include "sim/tools/validate/validation.hpp"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "sim/report/waves.hpp"

namespace tilesim {

namespace {

std::string files_of(const MeasuredCase& m) {
  std::string s;
  for (const auto& f : m.files) s += (s.empty() ? "" : ", ") + f;
  return s;
}

// Sum of a metric over the case's kernels; absent when any kernel lacks it.
std::optional<double> sum_metric(const MeasuredCase& m, const std::string& metric) {
  if (m.kernels.empty()) return std::nullopt;
  double s = 0;
  for (const auto& k : m.kernels) {
    auto v = k.get(metric);
    if (!v) return std::nullopt;
    s += *v;
  }
  return s;
}

// Buffer size of a capacity-stream case (kind: stream), for the knee.
std::optional<double> stream_bytes(const Workload& w) {
  if (w.kernels.size() != 1 || w.kernels[0].name != "stream") return std::nullopt;
  for (const auto& t : w.tensors)
    if (t.name == "buf") return static_cast<double>(t.footprint());
  return std::nullopt;
}

double pct_err(double sim, double meas) { return 100.0 * std::fabs(sim - meas) / meas; }

// The buffer size where the hit rate falls to half its value at the smallest buffer (linear
// interpolation between measured sizes); absent when it never does.
std::optional<double> knee_mib(std::vector<std::pair<double, double>> curve) {
  if (curve.size() < 2) return std::nullopt;
  std::sort(curve.begin(), curve.end());
  const double half = curve.front().second / 2;
  for (std::size_t i = 1; i < curve.size(); ++i) {
    const auto [x0, y0] = curve[i - 1];
    const auto [x1, y1] = curve[i];
    if (y0 >= half && y1 < half) return (x0 + (y0 - half) / (y0 - y1) * (x1 - x0)) / (1024.0 * 1024.0);
  }
  return std::nullopt;
}

void rank(RankPairs& p, double m_a, double m_b, double s_a, double s_b, double tol) {
  if (std::fabs(m_a - m_b) <= tol * std::min(m_a, m_b)) {
    ++p.ties;
    return;
  }
  ++p.compared;
  if ((m_a < m_b) == (s_a < s_b)) ++p.agree;
}

}  // namespace

std::vector<std::string> experiment_files(const std::vector<std::string>& paths) {
  const auto out = expand_folders(paths, {".yaml", ".yml"}, "experiment files (*.yaml)");
  for (const auto& f : out)
    if (!std::filesystem::exists(f)) throw InputError(f + ": no such experiment file or folder");
  return out;
}

std::vector<Experiment> load_validation_experiments(const std::vector<std::string>& files,
                                                    const std::vector<std::string>& overrides) {
  std::vector<Experiment> out;
  for (const auto& f : files) {
    Experiment e = load_experiment(f, overrides);
    if (e.points.size() != 1)
      throw InputError(f + ": a validation experiment must be a single point (it has a sweep of " +
                       std::to_string(e.points.size()) + ")");
    for (const auto& o : out)
      if (o.validate.case_name == e.validate.case_name)
        throw InputError(f + ": validate.case '" + e.validate.case_name + "' is also the case of " + o.file);
    // Built once to check it; released so that hundreds of cases (a production GEMM's workload
    // takes hundreds of MB) never sit in memory together. validate() builds each again.
    e.points[0].workload.reset();
    out.push_back(std::move(e));
  }
  return out;
}

CaseFigures measured_figures(const MeasuredCase& m, const ArchSpec& arch, const std::string& experiment_file,
                             std::string& duration_source) {
  if (m.device && ((m.device->sm_count && m.device->sm_count != arch.sm.count) ||
                   (m.device->l2_bytes && m.device->l2_bytes != arch.l2.bytes)))
    throw InputError(files_of(m) + ": case '" + m.name + "' was measured on " +
                     (m.device->name.empty() ? std::string("another GPU") : "'" + m.device->name + "'") + " (" +
                     std::to_string(m.device->sm_count) + " SMs, " + std::to_string(m.device->l2_bytes) +
                     " B of L2), but " + experiment_file + " simulates arch " + arch.name + " (" +
                     std::to_string(arch.sm.count) + " SMs, " + std::to_string(arch.l2.bytes) + " B)");
  CaseFigures f;
  if (!m.kernels.empty()) {
    // Every profiled kernel must carry the compared metrics: a missing column is an error.
    for (const char* metric : {"lts__t_sector_hit_rate.pct", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
                               "dram__bytes_read.sum", "dram__bytes_write.sum"})
      for (std::size_t i = 0; i < m.kernels.size(); ++i)
        if (!m.kernels[i].get(metric))
          throw InputError(files_of(m) + ": case '" + m.name + "', kernel " + std::to_string(i) + ": no column '" +
                           metric + "' (expected Nsight Compute metrics, see docs/validation.md)");
    // The hit rate of several kernels: their rates weighted by their lookups.
    double hits = 0, lookups = 0;
    for (const auto& k : m.kernels) {
      const double l = *k.get("lts__t_sectors_op_read.sum") + *k.get("lts__t_sectors_op_write.sum");
      hits += *k.get("lts__t_sector_hit_rate.pct") * l;
      lookups += l;
    }
    if (lookups > 0) f.hit_rate_pct = hits / lookups;
    f.dram_read_bytes = sum_metric(m, "dram__bytes_read.sum");
    f.dram_write_bytes = sum_metric(m, "dram__bytes_write.sum");
    f.l2_read_lookups = sum_metric(m, "lts__t_sectors_srcunit_tex_op_read.sum");  // optional: older CSVs lack it
    for (const auto& k : m.kernels)
      if (auto w = k.get("launch__waves_per_multiprocessor")) f.waves.push_back(*w);
  }
  if (m.event_ns) {
    f.duration_ns = m.event_ns;
    duration_source = "events";
  } else if (auto t = sum_metric(m, "gpu__time_duration.sum")) {
    f.duration_ns = t;
    duration_source = "ncu";
  }
  if (!f.duration_ns && !f.dram_read_bytes)
    throw InputError(files_of(m) + ": case '" + m.name + "' has neither Nsight Compute metrics nor an event time (median_us)");
  return f;
}

CaseFigures simulated_figures(const SimResult& r) {
  CaseFigures f;
  MemCounters all;
  double read = 0, write = 0;
  for (const auto& k : r.kernels) {
    all += k.mem;
    read += static_cast<double>(k.mem.dram_read_bytes);
    write += static_cast<double>(k.mem.dram_write_bytes);
    f.waves.push_back(static_cast<double>(launch_waves(k, r.num_sms).waves));
  }
  f.hit_rate_pct = 100.0 * all.lookup_hit_rate();
  f.dram_read_bytes = read;
  f.dram_write_bytes = write;
  f.l2_read_lookups = static_cast<double>(all.read_sectors);
  f.duration_ns = static_cast<double>(r.duration) / 1e3;
  return f;
}

Aggregate aggregate(const std::vector<CaseComparison>& cases, const std::string& subset, double tol,
                    const std::string& family) {
  Aggregate a;
  double hit = 0, rd = 0, wr = 0, t = 0, lk = 0;
  std::size_t n_hit = 0, n_rd = 0, n_wr = 0, n_t = 0, n_lk = 0;
  std::vector<const CaseComparison*> in;
  for (const auto& c : cases)
    if ((subset == "all" || c.subset == subset) && (family.empty() || c.family == family)) in.push_back(&c);
  a.cases = in.size();
  std::vector<std::pair<double, double>> knee_m, knee_s;
  for (const CaseComparison* c : in) {
    const CaseFigures &m = c->measured, &s = c->simulated;
    if (m.hit_rate_pct && s.hit_rate_pct) hit += std::fabs(*m.hit_rate_pct - *s.hit_rate_pct), ++n_hit;
    if (m.dram_read_bytes && *m.dram_read_bytes > 0) rd += pct_err(*s.dram_read_bytes, *m.dram_read_bytes), ++n_rd;
    // Writes of a few bytes per block (the stream cases) are lost in the profiler's own traffic; compare 10 MB and more.
    if (m.dram_write_bytes && *m.dram_write_bytes > 1e7) wr += pct_err(*s.dram_write_bytes, *m.dram_write_bytes), ++n_wr;
    if (m.duration_ns && *m.duration_ns > 0) t += pct_err(*s.duration_ns, *m.duration_ns), ++n_t;
    if (m.l2_read_lookups && *m.l2_read_lookups > 0 && s.l2_read_lookups)
      lk += pct_err(*s.l2_read_lookups, *m.l2_read_lookups), ++n_lk;
    if (c->stream_bytes && m.hit_rate_pct) {
      knee_m.emplace_back(*c->stream_bytes, *m.hit_rate_pct);
      knee_s.emplace_back(*c->stream_bytes, *s.hit_rate_pct);
    }
  }
  if (n_hit) a.hit_mae_pp = hit / static_cast<double>(n_hit);
  if (n_rd) a.dram_read_mape_pct = rd / static_cast<double>(n_rd);
  if (n_wr) a.dram_write_mape_pct = wr / static_cast<double>(n_wr);
  if (n_t) a.duration_mape_pct = t / static_cast<double>(n_t);
  if (n_lk) a.l2_lookups_mape_pct = lk / static_cast<double>(n_lk);
  for (std::size_t i = 0; i < in.size(); ++i)
    for (std::size_t j = i + 1; j < in.size(); ++j) {
      const CaseComparison &x = *in[i], &y = *in[j];
      if (x.group != y.group || x.stream_bytes) continue;
      if (x.measured.duration_ns && y.measured.duration_ns)
        rank(a.rank_duration, *x.measured.duration_ns, *y.measured.duration_ns, *x.simulated.duration_ns,
             *y.simulated.duration_ns, tol);
      if (x.measured.dram_read_bytes && y.measured.dram_read_bytes)
        rank(a.rank_dram, *x.measured.dram_read_bytes, *y.measured.dram_read_bytes, *x.simulated.dram_read_bytes,
             *y.simulated.dram_read_bytes, tol);
    }
  const std::size_t compared = a.rank_duration.compared + a.rank_dram.compared;
  if (compared)
    a.rank_agreement = static_cast<double>(a.rank_duration.agree + a.rank_dram.agree) / static_cast<double>(compared);
  a.knee_measured_mib = knee_mib(knee_m);
  a.knee_simulated_mib = knee_mib(knee_s);
  if (a.knee_measured_mib && a.knee_simulated_mib) a.knee_error_mib = std::fabs(*a.knee_measured_mib - *a.knee_simulated_mib);
  return a;
}

namespace {

// The SM clock over a case's profiled kernels, weighted by their durations, MHz.
std::optional<double> recorded_clock_mhz(const MeasuredCase& m) {
  double cycles = 0, ns = 0;
  for (const MeasuredKernel& k : m.kernels) {
    const auto hz = k.get("sm__cycles_elapsed.avg.per_second");
    const auto t = k.get("gpu__time_duration.sum");
    if (!hz || !t || *t <= 0) return std::nullopt;
    // The clock becomes the simulated one: a figure no GPU runs at is refused, not simulated.
    if (!(*hz >= 1e8 && *hz <= 1e10))
      throw InputError(files_of(m) + ": case '" + m.name + "': sm__cycles_elapsed.avg.per_second: expected an SM clock " +
                       "of 0.1 to 10 GHz (in Hz), got " + std::to_string(*hz));
    cycles += *hz * *t;
    ns += *t;
  }
  if (ns <= 0) return std::nullopt;
  return cycles / ns / 1e6;
}

// The arch at a clock the profiler recorded: that clock, the power cap off.
ArchSpec at_recorded_clock(const ArchSpec& arch, double mhz) {
  ArchSpec a = arch;
  a.sm.clock_mhz = mhz;
  a.power.cap_w = 0;
  return a;
}

// The arch a case is simulated with: its own, or at the recorded clock with the power cap off.
ArchSpec case_arch(const ArchSpec& arch, CaseComparison& c, ClockChoice clock) {
  if (clock == ClockChoice::automatic && c.duration_source == "ncu" && c.measured_clock_mhz) {
    c.clock_source = "measured";
    return at_recorded_clock(arch, *c.measured_clock_mhz);
  }
  return arch;
}

// The arch an event-timed case's Nsight Compute counters are simulated with, when they were
// taken under other conditions than its timing: at the clock the profiler recorded, the power
// cap off (the simulation then starts from the experiment's own L2, as the profiler's flush
// leaves it, not from do_bench's dirty one). None when the counters come from the timed run.
std::optional<ArchSpec> counters_arch(const ArchSpec& arch, const CaseComparison& c, ClockChoice clock) {
  if (clock != ClockChoice::automatic || c.duration_source != "events" || !c.measured_clock_mhz) return std::nullopt;
  if (!c.measured.hit_rate_pct && !c.measured.dram_read_bytes && !c.measured.dram_write_bytes) return std::nullopt;
  return at_recorded_clock(arch, *c.measured_clock_mhz);
}

// The figures of one case's runs, one per seed: their mean into `c.simulated`, and with more
// than one run each figure's least and greatest.
void combine_seeds(const std::vector<CaseFigures>& runs, CaseComparison& c) {
  using Figure = std::optional<double> CaseFigures::*;
  c.simulated = runs.front();
  if (runs.size() == 1) return;
  CaseFigures lo = runs.front(), hi = runs.front();
  const double n = static_cast<double>(runs.size());
  for (Figure f : {&CaseFigures::hit_rate_pct, &CaseFigures::dram_read_bytes, &CaseFigures::dram_write_bytes,
                   &CaseFigures::duration_ns, &CaseFigures::l2_read_lookups}) {
    if (!(runs.front().*f)) continue;
    double sum = 0;
    for (const CaseFigures& r : runs) {
      sum += *(r.*f);
      lo.*f = std::min(*(lo.*f), *(r.*f));
      hi.*f = std::max(*(hi.*f), *(r.*f));
    }
    c.simulated.*f = sum / n;
  }
  for (std::size_t k = 0; k < c.simulated.waves.size(); ++k) {
    double sum = 0;
    for (const CaseFigures& r : runs) sum += r.waves.at(k);
    c.simulated.waves[k] = sum / n;
  }
  c.simulated_min = lo;
  c.simulated_max = hi;
}

// One case's simulations, `seeds` of them: the timed run (from do_bench's dirty L2 for event
// timings taken after its flush) and, where the counters were taken apart, the counters' run.
void simulate_case(const Experiment& e, const ExperimentPoint& p, ClockChoice clock, int seeds, sweep::Progress& progress,
                   CaseComparison& c) {
  SimOptions opt = p.options;
  if (c.duration_source == "events" && e.validate.events_after_write_flush) {
    opt.l2_start = SimOptions::L2Start::write_flushed;
    c.l2_start = "write_flushed";
  }
  const ArchSpec arch = case_arch(p.arch, c, clock);
  const auto counters = counters_arch(p.arch, c, clock);
  if (counters) c.counters_clock_mhz = counters->sm.clock_mhz;
  std::vector<CaseFigures> runs;
  double clock_sum = 0;
  for (int j = 0; j < seeds; ++j) {
    SimOptions run_opt = opt, counters_opt = p.options;
    run_opt.seed = counters_opt.seed = p.options.seed + static_cast<std::uint64_t>(j);
    const SimResult r = sweep::simulate_counted(*p.workload, arch, run_opt, &progress);
    clock_sum += r.sm_clock_mhz;
    runs.push_back(simulated_figures(r));
    if (counters) {
      const CaseFigures f = simulated_figures(simulate(*p.workload, *counters, counters_opt));
      runs.back().hit_rate_pct = f.hit_rate_pct;
      runs.back().dram_read_bytes = f.dram_read_bytes;
      runs.back().dram_write_bytes = f.dram_write_bytes;
      runs.back().l2_read_lookups = f.l2_read_lookups;
    }
  }
  c.seeds = seeds;
  c.simulated_clock_mhz = clock_sum / seeds;
  combine_seeds(runs, c);
}

// The case of an earlier run for the same case and experiment file (null: none).
const CaseComparison* done_case(const std::map<std::string, CaseComparison>* done, const CaseComparison& c) {
  if (!done) return nullptr;
  const auto it = done->find(c.name);
  return it != done->end() && it->second.experiment_file == c.experiment_file ? &it->second : nullptr;
}

// What an earlier run simulated; the measured figures stay as read now.
void take_simulated(const CaseComparison& before, CaseComparison& c) {
  c.simulated = before.simulated;
  c.simulated_clock_mhz = before.simulated_clock_mhz;
  c.clock_source = before.clock_source;
  c.counters_clock_mhz = before.counters_clock_mhz;
  c.l2_start = before.l2_start;
  c.seeds = before.seeds;
  c.simulated_min = before.simulated_min;
  c.simulated_max = before.simulated_max;
  c.stream_bytes = before.stream_bytes;
}

}  // namespace

ValidationReport validate(const std::vector<Experiment>& experiments, const std::map<std::string, MeasuredCase>& measured,
                          int jobs, double tie_tolerance, sweep::ProgressStyle progress_style, ClockChoice clock,
                          int seeds, const std::function<void(const CaseComparison&)>& on_case,
                          const std::map<std::string, CaseComparison>* done) {
  if (seeds < 1) throw InputError("validate: seeds: expected at least 1, got " + std::to_string(seeds));
  ValidationReport rep;
  rep.tie_tolerance = tie_tolerance;
  rep.cases.resize(experiments.size());
  // Match and read the measurements first, so a missing case fails before any simulation.
  for (std::size_t i = 0; i < experiments.size(); ++i) {
    const Experiment& e = experiments[i];
    auto it = measured.find(e.validate.case_name);
    if (it == measured.end())
      throw InputError(e.file + ": no measured case '" + e.validate.case_name +
                       "' in the measurement files (set validate.case, or add its CSV)");
    CaseComparison& c = rep.cases[i];
    c.name = e.validate.case_name;
    c.group = e.validate.group;
    c.subset = e.validate.subset;
    c.family = e.validate.family;
    c.experiment_file = e.file;
    c.measured = measured_figures(it->second, e.points[0].arch, e.file, c.duration_source);
    c.measured_clock_mhz = recorded_clock_mhz(it->second);
    if (!e.validate.hit_rate) c.measured.hit_rate_pct.reset();
    if (!e.validate.dram) c.measured.dram_read_bytes.reset(), c.measured.dram_write_bytes.reset();
    if (!e.validate.duration) c.measured.duration_ns.reset();
  }
  sweep::Progress progress(experiments.size(), 0, progress_style, "cases");
  std::mutex on_case_mutex;
  tbb::task_arena arena(jobs > 0 ? jobs : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, experiments.size(), [&](std::size_t i) {
      const Experiment& e = experiments[i];
      const ExperimentPoint built = e.points[0].workload ? ExperimentPoint{} : e.plan->build(0);
      const ExperimentPoint& p = e.points[0].workload ? e.points[0] : built;
      CaseComparison& c = rep.cases[i];
      if (const CaseComparison* before = done_case(done, c)) {
        take_simulated(*before, c);
        progress.advance();
        return;
      }
      c.stream_bytes = stream_bytes(*p.workload);
      simulate_case(e, p, clock, seeds, progress, c);
      if (on_case) {
        const std::lock_guard<std::mutex> lock(on_case_mutex);
        on_case(c);
      }
      progress.advance();
    });
  });
  progress.finish();
  for (const char* s : {"calibration", "validation", "all"}) rep.subsets[s] = aggregate(rep.cases, s, tie_tolerance);
  for (const auto& c : rep.cases)
    if (!rep.families.count(c.family))
      for (const char* s : {"calibration", "validation", "all"})
        rep.families[c.family][s] = aggregate(rep.cases, s, tie_tolerance, c.family);
  return rep;
}

namespace {

Targets parse_targets(const ConfigNode& n) {
  n.allow_keys({"subset", "family", "hit_mae_pp", "dram_read_mape_pct", "duration_mape_pct", "rank_agreement",
                "knee_error_mib", "l2_lookups_mape_pct"});
  Targets t;
  t.subset = n.choice_or("subset", "validation", {"calibration", "validation", "all"});
  t.family = n.string_or("family", "");
  if (n.has("hit_mae_pp")) t.hit_mae_pp = n.number("hit_mae_pp", 0, 100);
  if (n.has("dram_read_mape_pct")) t.dram_read_mape_pct = n.number("dram_read_mape_pct", 0, 1e6);
  if (n.has("duration_mape_pct")) t.duration_mape_pct = n.number("duration_mape_pct", 0, 1e6);
  if (n.has("rank_agreement")) t.rank_agreement = n.number("rank_agreement", 0, 1);
  if (n.has("knee_error_mib")) t.knee_error_mib = n.number("knee_error_mib", 0, 1e6);
  if (n.has("l2_lookups_mape_pct")) t.l2_lookups_mape_pct = n.number("l2_lookups_mape_pct", 0, 1e6);
  return t;
}

}  // namespace

std::vector<Targets> load_targets(const std::string& path) {
  ConfigNode n(load_yaml_file(path), path, "");
  std::vector<Targets> out;
  if (n.is_sequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(parse_targets(n.element(i)));
    if (out.empty()) n.fail("expected at least one set of targets");
  } else {
    out.push_back(parse_targets(n));
  }
  return out;
}

namespace {

// The targets missed by one aggregate, each line prefixed with `where`.
void check_aggregate(const Aggregate& a, const Targets& t, const std::string& where, std::vector<std::string>& out) {
  const auto check = [&](const char* what, const std::optional<double>& got, const std::optional<double>& limit,
                         bool at_most) {
    if (!limit) return;
    if (!got) {
      out.push_back(where + std::string(what) + ": no cases to compute it from");
      return;
    }
    if (at_most ? *got > *limit : *got < *limit)
      out.push_back(where + std::string(what) + " " + std::to_string(*got) + (at_most ? " > " : " < ") +
                    std::to_string(*limit));
  };
  check("L2 hit-rate MAE (points)", a.hit_mae_pp, t.hit_mae_pp, true);
  check("DRAM read MAPE (%)", a.dram_read_mape_pct, t.dram_read_mape_pct, true);
  check("duration MAPE (%)", a.duration_mape_pct, t.duration_mape_pct, true);
  check("policy-pair rank agreement", a.rank_agreement, t.rank_agreement, false);
  check("capacity knee error (MiB)", a.knee_error_mib, t.knee_error_mib, true);
  check("L2 read lookups MAPE (%)", a.l2_lookups_mape_pct, t.l2_lookups_mape_pct, true);
}

}  // namespace

std::vector<std::string> missed_targets(const ValidationReport& r, const Targets& t) {
  std::vector<std::string> out;
  if (t.family.empty()) {
    auto it = r.subsets.find(t.subset);
    if (it == r.subsets.end() || it->second.cases == 0) return {"no cases in the " + t.subset + " subset"};
    check_aggregate(it->second, t, "", out);
    return out;
  }
  bool any = false;
  for (const auto& [family, subsets] : r.families) {
    if (t.family != "each" && family != t.family) continue;
    auto it = subsets.find(t.subset);
    if (it == subsets.end() || it->second.cases == 0) continue;
    any = true;
    check_aggregate(it->second, t, "family " + family + ": ", out);
  }
  if (!any) out.push_back("no cases of family " + t.family + " in the " + t.subset + " subset");
  return out;
}

}  // namespace tilesim
