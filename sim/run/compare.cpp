#include "sim/run/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "sim/report/format.hpp"

namespace tilesim::sweep {

namespace {

using nlohmann::json;
using report_detail::fmt;
using report_detail::pad;

// The axes that are not compared: what a group shares.
std::vector<std::size_t> group_axes(const Sweep& s) {
  std::vector<std::size_t> out;
  for (std::size_t a = 0; a < s.axes.size(); ++a)
    if (std::find(s.compare.axes.begin(), s.compare.axes.end(), a) == s.compare.axes.end()) out.push_back(a);
  return out;
}

bool is_baseline(const Sweep& s, const SweepPoint& p) {
  for (std::size_t i = 0; i < s.compare.axes.size(); ++i)
    if (p.value[s.compare.axes[i]] != s.compare.baseline[i]) return false;
  return true;
}

json number_or_null(double v, bool ok) { return ok ? json(v) : json(nullptr); }

// Whether a compared axis swaps whole workloads (`workload: [...]`): its values may be different
// problems (a prefill and a decode step), which a speedup must not rank against each other.
bool compares_whole_workloads(const Sweep& s) {
  for (const std::size_t a : s.compare.axes)
    for (const auto& k : s.axes[a].keys)
      if (k == "workload") return true;
  return false;
}

// The problem a point solves, as far as a comparison needs: the bytes it must read and write
// at least (its inputs and outputs, intermediates excluded), "" when the result has no bound.
std::string problem_of(const json& point) {
  const json& t = point.at("result").at("total");
  const auto b = t.find("bounds");
  if (b == t.end() || !b->is_object()) return "";
  const auto c = b->find("compulsory_bytes");
  return c == b->end() || !c->is_number() ? "" : c->dump();
}

}  // namespace

double point_time_ns(const json& point) { return point.at("result").at("total").at("duration_ns").get<double>(); }

std::uint64_t point_dram_bytes(const json& point) {
  const json& t = point.at("result").at("total");
  return t.at("dram_read_bytes").get<std::uint64_t>() + t.at("dram_write_bytes").get<std::uint64_t>();
}

json compare_points(const Sweep& s, std::vector<json>& points) {
  const std::vector<std::size_t> shared = group_axes(s);
  // Groups in order of their first point, so the output follows the grid.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::size_t>> members;
  // Each point's axis group, and (when whole workloads are compared) its problem.
  const bool by_problem = compares_whole_workloads(s);
  std::vector<std::string> axis_group(s.points.size()), problem(s.points.size());
  std::map<std::string, std::vector<std::string>> problems;  // per axis group, the distinct problems
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    axis_group[i] = s.describe(s.points[i], shared);
    if (by_problem) problem[i] = problem_of(points[i]);
    auto& seen = problems[axis_group[i]];
    if (std::find(seen.begin(), seen.end(), problem[i]) == seen.end()) seen.push_back(problem[i]);
  }
  // Whole workloads of different problems are compared only within their problem: the group
  // label names it by the bytes it must move.
  const auto split = [&](std::size_t i) { return problems[axis_group[i]].size() > 1; };
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    const std::string& ag = axis_group[i];
    // (A result without bounds has no known problem: its own group, rather than a failed parse.)
    const std::string tag = problem[i].empty() ? std::string("(problem of unknown size)")
                                               : fmt("(problem of %.1f MB in and out)", std::stod(problem[i]) / 1e6);
    const std::string g = !split(i) ? ag : (ag.empty() ? "" : ag + " ") + tag;
    if (!members.count(g)) order.push_back(g);
    members[g].push_back(i);
  }
  json groups = json::array();
  for (const std::string& g : order) {
    std::vector<std::size_t> idx = members[g];
    std::optional<std::size_t> base;
    for (const std::size_t i : idx)
      if (!s.compare.axes.empty() && is_baseline(s, s.points[i])) base = i;
    // A problem group without the axis's baseline value compares against its first point.
    if (!base && split(idx.front()) && !s.compare.axes.empty()) base = idx.front();
    std::stable_sort(idx.begin(), idx.end(),
                     [&](std::size_t a, std::size_t b) { return point_time_ns(points[a]) < point_time_ns(points[b]); });
    for (std::size_t r = 0; r < idx.size(); ++r) {
      const std::size_t i = idx[r];
      const double t = point_time_ns(points[i]);
      const auto d = static_cast<double>(point_dram_bytes(points[i]));
      const double bt = base ? point_time_ns(points[*base]) : 0;
      const auto bd = base ? static_cast<double>(point_dram_bytes(points[*base])) : 0.0;
      points[i]["comparison"] = {{"group", g},
                                 {"compared", s.describe(s.points[i], s.compare.axes)},
                                 {"baseline", base ? json(*base) : json(nullptr)},
                                 {"speedup", number_or_null(t > 0 ? bt / t : 0, base && t > 0)},
                                 {"dram_ratio", number_or_null(bd > 0 ? d / bd : 0, base && bd > 0)},
                                 {"rank", r + 1}};
    }
    groups.push_back({{"label", g}, {"baseline", base ? json(*base) : json(nullptr)}, {"points", idx}});
  }
  return groups;
}

void print_comparison(std::ostream& out, const Sweep& s, const std::vector<json>& points, const json& groups) {
  if (points.size() < 2 || s.compare.axes.empty()) return;
  std::string compared, baseline;
  for (std::size_t i = 0; i < s.compare.axes.size(); ++i) {
    const SweepAxis& a = s.axes[s.compare.axes[i]];
    for (const auto& k : a.keys) compared += (compared.empty() ? "" : ", ") + k;
    baseline += (baseline.empty() ? "" : " ") + a.labels[s.compare.baseline[i]];
  }
  out << "\ncomparison of " << compared << " against " << baseline
      << (s.compare.from_file ? "" : " (the last axis and its first value; set sweep.baseline to choose)")
      << ", fastest first (* the baseline):\n";
  std::size_t w = 10;
  for (const json& p : points) w = std::max(w, p["comparison"]["compared"].get<std::string>().size());
  for (const json& g : groups) {
    out << "\n" << (g["label"].get<std::string>().empty() ? std::string("all points") : g["label"].get<std::string>()) << "\n";
    out << "  " << pad("point", w + 2, true) << "  " << pad("time us", 11) << "  " << pad("DRAM MB", 10) << "  "
        << pad("L2 hit", 7) << "  " << pad("speedup", 8) << "  " << pad("vs base", 8) << "  " << pad("DRAM x", 7) << "\n";
    for (const json& idx : g["points"]) {
      const json& p = points[idx.get<std::size_t>()];
      const json& c = p["comparison"];
      const bool is_base = !c["baseline"].is_null() && c["baseline"] == idx;
      const std::string speed = c["speedup"].is_null() ? "-" : fmt("%.3fx", c["speedup"].get<double>());
      // A gain that rounds to zero prints as +0.0%, not -0.0%.
      const double pct = c["speedup"].is_null() ? 0 : 100 * (c["speedup"].get<double>() - 1);
      const std::string gain = c["speedup"].is_null() ? "-" : fmt("%+.1f%%", std::fabs(pct) < 0.05 ? 0.0 : pct);
      const std::string dram = c["dram_ratio"].is_null() ? "-" : fmt("%.2f", c["dram_ratio"].get<double>());
      out << "  " << pad(c["compared"].get<std::string>() + (is_base ? " *" : ""), w + 2, true)
          << "  " << pad(fmt("%.1f", point_time_ns(p) / 1e3), 11) << "  "
          << pad(fmt("%.1f", static_cast<double>(point_dram_bytes(p)) / 1e6), 10) << "  "
          << pad(fmt("%.1f%%", 100 * p["result"]["total"]["l2_hit_rate"].get<double>()), 7) << "  " << pad(speed, 8)
          << "  " << pad(gain, 8) << "  " << pad(dram, 7) << "\n";
    }
  }
  if (groups.size() < 2) return;
  // The grid of speedups: a row per group, a column per compared value (seed 003's table).
  std::vector<std::string> cols;
  for (const json& p : points) {
    const std::string c = p["comparison"]["compared"].get<std::string>();
    if (std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
  }
  std::size_t gw = 5;
  for (const json& g : groups) gw = std::max(gw, g["label"].get<std::string>().size());
  out << "\nspeedup over " << baseline << " (rows: groups; columns: " << compared << "):\n";
  std::string header = pad("group", gw, true);
  for (const auto& c : cols) header += "  " + pad(c, std::max<std::size_t>(c.size(), 8));
  out << header << "\n";
  for (const json& g : groups) {
    std::string row = pad(g["label"].get<std::string>(), gw, true);
    for (const auto& c : cols) {
      std::string cell = "";
      for (const json& idx : g["points"]) {
        const json& cmp = points[idx.get<std::size_t>()]["comparison"];
        if (cmp["compared"] == c) cell = cmp["speedup"].is_null() ? "-" : fmt("%.3fx", cmp["speedup"].get<double>());
      }
      row += "  " + pad(cell, std::max<std::size_t>(c.size(), 8));
    }
    out << row << "\n";
  }
}

void write_summary_csv(std::ostream& out, const Sweep& s, const std::vector<json>& points) {
  using report_detail::csv_quoted;
  out << "index,hash,label";
  for (const SweepAxis& a : s.axes)
    for (const auto& k : a.keys) out << ',' << csv_quoted(k);
  out << ",group,compared,duration_ns,dram_read_bytes,dram_write_bytes,l2_hit_rate,dram_over_bound,speedup,"
         "dram_ratio,rank\n";
  char buf[64];
  const auto num = [&](const json& v) {
    if (!v.is_number()) return std::string();
    std::snprintf(buf, sizeof buf, "%.9g", v.get<double>());
    return std::string(buf);
  };
  for (std::size_t i = 0; i < points.size(); ++i) {
    const json& p = points[i];
    const json& t = p["result"]["total"];
    const json& c = p["comparison"];
    out << i << ',' << p["hash"].get<std::string>() << ',' << csv_quoted(p["label"].get<std::string>());
    for (const SweepAxis& a : s.axes)
      for (const auto& k : a.keys) out << ',' << csv_quoted(p["axes"].value(k, ""));
    out << ',' << csv_quoted(c["group"].get<std::string>()) << ',' << csv_quoted(c["compared"].get<std::string>()) << ','
        << num(t["duration_ns"]) << ',' << t["dram_read_bytes"] << ',' << t["dram_write_bytes"] << ','
        << num(t["l2_hit_rate"]) << ',' << num(t.value("dram_over_bound", json())) << ',' << num(c["speedup"]) << ','
        << num(c["dram_ratio"]) << ',' << c["rank"] << '\n';
  }
}

}  // namespace tilesim::sweep
