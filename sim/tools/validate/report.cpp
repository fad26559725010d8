#include "sim/tools/validate/report.hpp"

#include "sim/report/format.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace tilesim {

namespace {

using report_detail::pad;
std::string f(const char* spec, double v) { return report_detail::fmt(spec, v); }

std::string opt(const char* spec, const std::optional<double>& v) { return v ? f(spec, *v) : "-"; }

// Signed relative error of sim against measured, in percent.
std::string rel(const std::optional<double>& s, const std::optional<double>& m) {
  if (!s || !m || *m == 0) return "-";
  return f("%+.0f%%", 100.0 * (*s - *m) / *m);
}

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json figures_json(const CaseFigures& c) {
  return {{"l2_hit_rate_pct", opt_json(c.hit_rate_pct)},
          {"dram_read_bytes", opt_json(c.dram_read_bytes)},
          {"dram_write_bytes", opt_json(c.dram_write_bytes)},
          {"duration_ns", opt_json(c.duration_ns)},
          {"l2_read_lookups", opt_json(c.l2_read_lookups)},
          {"waves", c.waves}};
}

nlohmann::json pairs_json(const RankPairs& p) {
  return {{"compared", p.compared}, {"agree", p.agree}, {"ties", p.ties}};
}

}  // namespace

void write_validation_table(std::ostream& out, const ValidationReport& r) {
  std::size_t w = 4;
  for (const auto& c : r.cases) w = std::max(w, c.name.size());
  out << std::string(w - 4, ' ') << "case  subset  L2 hit meas    sim   DRAM rd GB meas    sim   err  DRAM wr GB meas    sim"
      << "   time us meas      sim   err  waves meas  sim\n";
  for (const auto& c : r.cases) {
    const CaseFigures &m = c.measured, &s = c.simulated;
    const auto gb = [](const std::optional<double>& v) { return v ? std::optional<double>(*v / 1e9) : std::nullopt; };
    const auto us = [](const std::optional<double>& v) { return v ? std::optional<double>(*v / 1e3) : std::nullopt; };
    out << pad(c.name, w) << "  " << pad(c.subset == "calibration" ? "calib" : "valid", 6) << "  "
        << pad(opt("%.1f%%", m.hit_rate_pct), 11) << pad(opt("%.1f%%", s.hit_rate_pct), 7) << "  "
        << pad(opt("%.3f", gb(m.dram_read_bytes)), 15) << pad(opt("%.3f", gb(s.dram_read_bytes)), 7)
        << pad(rel(s.dram_read_bytes, m.dram_read_bytes), 6) << "  " << pad(opt("%.3f", gb(m.dram_write_bytes)), 15)
        << pad(opt("%.3f", gb(s.dram_write_bytes)), 7) << "  " << pad(opt("%.1f", us(m.duration_ns)), 12)
        << pad(opt("%.1f", us(s.duration_ns)), 9) << pad(rel(s.duration_ns, m.duration_ns), 6) << "  "
        << pad(m.waves.empty() ? "-" : f("%.2f", m.waves[0]), 10) << pad(s.waves.empty() ? "-" : f("%.0f", s.waves[0]), 5)
        << "\n";
  }
  out << "\n";
  std::size_t at_measured_clock = 0;
  for (const auto& c : r.cases) at_measured_clock += c.clock_source == "measured";
  if (at_measured_clock)
    out << at_measured_clock << " of " << r.cases.size()
        << " cases simulated at the SM clock Nsight Compute recorded, as their durations are its own (--clock model: "
           "the arch's clock)\n\n";
  if (!r.cases.empty() && r.cases.front().seeds > 1)
    out << "simulated figures: the mean of " << r.cases.front().seeds
        << " seeds of the per-step noise each (--json: each figure's least and greatest)\n\n";
  std::size_t counters_apart = 0;
  for (const auto& c : r.cases) counters_apart += c.counters_clock_mhz.has_value();
  if (counters_apart)
    out << counters_apart << " of " << r.cases.size()
        << " event-timed cases had their Nsight Compute counters simulated apart, at the clock it recorded (--clock "
           "model: one simulation at the arch's clock)\n\n";
  if (r.families.size() > 1) {
    out << "per family:\n";
    for (const auto& [family, subsets] : r.families)
      for (const char* name : {"calibration", "validation"}) {
        auto it = subsets.find(name);
        if (it == subsets.end() || it->second.cases == 0) continue;
        out << "  ";
        write_aggregate_line(out, family + " " + name, it->second, r.tie_tolerance);
      }
    out << "\n";
  }
  for (const char* name : {"calibration", "validation", "all"}) {
    auto it = r.subsets.find(name);
    if (it == r.subsets.end() || it->second.cases == 0) continue;
    write_aggregate_line(out, name, it->second, r.tie_tolerance);
  }
}

void write_aggregate_line(std::ostream& out, const std::string& name, const Aggregate& a, double tie_tolerance) {
  out << name << " (" << a.cases << " cases): L2 hit MAE " << opt("%.2f", a.hit_mae_pp) << " points, DRAM read MAPE "
        << opt("%.1f%%", a.dram_read_mape_pct) << ", DRAM write MAPE " << opt("%.1f%%", a.dram_write_mape_pct)
        << ", duration MAPE " << opt("%.1f%%", a.duration_mape_pct);
  if (a.l2_lookups_mape_pct) out << ", L2 read lookups MAPE " << opt("%.1f%%", a.l2_lookups_mape_pct);
  out << ", policy pairs ranked alike "
        << opt("%.2f", a.rank_agreement) << " (time " << a.rank_duration.agree << "/" << a.rank_duration.compared
        << ", DRAM " << a.rank_dram.agree << "/" << a.rank_dram.compared << "; "
        << a.rank_duration.ties + a.rank_dram.ties << " pairs within " << f("%.0f", 100 * tie_tolerance)
        << "% skipped)";
    if (a.knee_measured_mib)
      out << ", capacity knee " << opt("%.1f", a.knee_measured_mib) << " MiB measured, "
          << opt("%.1f", a.knee_simulated_mib) << " simulated";
  out << "\n";
}

nlohmann::json case_json(const CaseComparison& c) {
  nlohmann::json one = {{"case", c.name},
                        {"group", c.group},
                        {"subset", c.subset},
                        {"family", c.family},
                        {"experiment", c.experiment_file},
                        {"duration_source", c.duration_source},
                        {"measured_clock_mhz", opt_json(c.measured_clock_mhz)},
                        {"simulated_clock_mhz", c.simulated_clock_mhz},
                        {"clock_source", c.clock_source},
                        {"counters_clock_mhz", opt_json(c.counters_clock_mhz)},
                        {"l2_start", c.l2_start},
                        {"stream_bytes", opt_json(c.stream_bytes)},
                        {"measured", figures_json(c.measured)},
                        {"simulated", figures_json(c.simulated)}};
  if (c.seeds > 1) {
    one["seeds"] = c.seeds;
    one["simulated_min"] = figures_json(*c.simulated_min);
    one["simulated_max"] = figures_json(*c.simulated_max);
  }
  return one;
}

namespace {

std::optional<double> opt_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<double>();
}

CaseFigures figures_of(const nlohmann::json& j) {
  CaseFigures f;
  f.hit_rate_pct = opt_of(j, "l2_hit_rate_pct");
  f.dram_read_bytes = opt_of(j, "dram_read_bytes");
  f.dram_write_bytes = opt_of(j, "dram_write_bytes");
  f.duration_ns = opt_of(j, "duration_ns");
  f.l2_read_lookups = opt_of(j, "l2_read_lookups");  // absent in lines written before 2026-12-02
  f.waves = j.at("waves").get<std::vector<double>>();
  return f;
}

}  // namespace

CaseComparison case_from_json(const nlohmann::json& j) {
  CaseComparison c;
  c.name = j.at("case").get<std::string>();
  c.group = j.at("group").get<std::string>();
  c.subset = j.at("subset").get<std::string>();
  c.family = j.at("family").get<std::string>();
  c.experiment_file = j.at("experiment").get<std::string>();
  c.duration_source = j.at("duration_source").get<std::string>();
  c.measured_clock_mhz = opt_of(j, "measured_clock_mhz");
  c.simulated_clock_mhz = j.at("simulated_clock_mhz").get<double>();
  c.clock_source = j.at("clock_source").get<std::string>();
  c.counters_clock_mhz = opt_of(j, "counters_clock_mhz");
  c.l2_start = j.at("l2_start").get<std::string>();
  c.stream_bytes = opt_of(j, "stream_bytes");
  c.measured = figures_of(j.at("measured"));
  c.simulated = figures_of(j.at("simulated"));
  if (j.contains("seeds")) {
    c.seeds = j.at("seeds").get<int>();
    c.simulated_min = figures_of(j.at("simulated_min"));
    c.simulated_max = figures_of(j.at("simulated_max"));
  }
  return c;
}

nlohmann::json validation_json(const ValidationReport& r) {
  nlohmann::json j;
  j["tie_tolerance"] = r.tie_tolerance;
  j["cases"] = nlohmann::json::array();
  for (const auto& c : r.cases) j["cases"].push_back(case_json(c));
  for (const auto& [name, a] : r.subsets) j["aggregate"][name] = aggregate_json(a);
  for (const auto& [family, subsets] : r.families)
    for (const auto& [name, a] : subsets) j["families"][family][name] = aggregate_json(a);
  return j;
}

nlohmann::json aggregate_json(const Aggregate& a) {
  return {{"cases", a.cases},
                            {"hit_mae_pp", opt_json(a.hit_mae_pp)},
                            {"dram_read_mape_pct", opt_json(a.dram_read_mape_pct)},
                            {"dram_write_mape_pct", opt_json(a.dram_write_mape_pct)},
                            {"duration_mape_pct", opt_json(a.duration_mape_pct)},
                            {"l2_lookups_mape_pct", opt_json(a.l2_lookups_mape_pct)},
                            {"rank_duration", pairs_json(a.rank_duration)},
                            {"rank_dram", pairs_json(a.rank_dram)},
                            {"rank_agreement", opt_json(a.rank_agreement)},
                            {"knee_measured_mib", opt_json(a.knee_measured_mib)},
                            {"knee_simulated_mib", opt_json(a.knee_simulated_mib)},
                            {"knee_error_mib", opt_json(a.knee_error_mib)}};
}

}  // namespace tilesim
