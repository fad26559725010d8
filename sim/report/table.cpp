#include <cstdio>
#include <string>
#include <vector>

#include "sim/report/chain.hpp"
#include "sim/report/format.hpp"
#include "sim/report/report.hpp"

namespace tilesim {

namespace {

using report_detail::fmt;
using report_detail::pad;
using nlohmann::json;

struct Column {
  const char* title;
  std::size_t width;
};

double num(const json& j, const char* key) { return j.at(key).get<double>(); }
std::uint64_t count(const json& j, const char* key) { return j.at(key).get<std::uint64_t>(); }
std::string ratio_cell(const json& j) {
  return j.contains("dram_over_bound") && j["dram_over_bound"].is_number() ? fmt("%.2f", num(j, "dram_over_bound")) : "-";
}

}  // namespace

void print_table(std::ostream& out, const std::string& experiment, const std::vector<json>& results) {
  if (results.empty()) return;
  out << "experiment: " << experiment << "  arch: " << results[0].value("arch", "") << "\n";
  std::size_t label_w = 5;
  for (const auto& r : results) label_w = std::max(label_w, r.value("point", "").size());
  const bool sweep = results.size() > 1 || !results[0].value("point", "").empty();
  bool with_bounds = true;
  for (const auto& r : results) with_bounds = with_bounds && r.at("total").contains("bounds");
  std::vector<Column> cols = {{"kernel", 8},      {"grid", 12},       {"blk/SM", 16},  {"waves", 11},
                              {"time us", 10},   {"TFLOP/s", 8},     {"SM MHz", 6},  {"L2 hit", 7},  {"L2 rd hit", 9},
                              {"DRAM rd MB", 11}, {"DRAM wr MB", 11}, {"bound", 8},   {"wait us", 9},
                              {"tail lost us", 12}};
  if (with_bounds) cols.push_back({"DRAM/bound", 10});
  std::string header = sweep ? pad("point", label_w, true) + "  " : "";
  for (const auto& c : cols) header += pad(c.title, c.width) + "  ";
  out << header << "\n" << std::string(header.size(), '-') << "\n";
  for (const json& r : results) {
    const std::string label = r.value("point", "");
    // The run's SM clock (results written before it was recorded have none).
    const json& t = r.at("total");
    const std::string clock = t.contains("sm_clock_mhz") ? fmt("%.0f", num(t, "sm_clock_mhz")) : "-";
    for (const json& k : r.at("kernels")) {
      std::string row = sweep ? pad(label, label_w, true) + "  " : "";
      const json& g = k.at("grid");
      const std::string grid = std::to_string(g[0].get<int>()) + "x" + std::to_string(g[1].get<int>()) + "x" +
                               std::to_string(g[2].get<int>());
      const std::string occ = std::to_string(count(k, "blocks_per_sm")) + " (" + k.at("occupancy_limit").get<std::string>() + ")";
      const std::string wave = std::to_string(count(k, "waves")) + " (" + fmt("%.0f%%", 100 * num(k, "last_wave_utilization")) + ")";
      // Without block records (an engine that does not fill them) the tail is unknown, not 0.
      const std::string tail = k.at("waves_detail").empty() ? "-" : fmt("%.1f", num(k, "tail_lost_ns") / 1e3);
      const json& l2 = k.at("l2");
      const json& dram = k.at("dram");
      std::vector<std::string> cells = {k.at("name").get<std::string>(),
                                        grid,
                                        occ,
                                        wave,
                                        fmt("%.1f", num(k, "duration_ns") / 1e3),
                                        fmt("%.1f", num(k, "tflops")),
                                        clock,
                                        fmt("%.1f%%", 100 * num(l2, "hit_rate")),
                                        fmt("%.1f%%", 100 * num(l2, "read_hit_rate")),
                                        fmt("%.1f", static_cast<double>(count(dram, "read_bytes")) / 1e6),
                                        fmt("%.1f", static_cast<double>(count(dram, "write_bytes")) / 1e6),
                                        k.at("bound").get<std::string>(),
                                        fmt("%.1f", num(k, "wait_ns") / 1e3),
                                        tail};
      if (with_bounds) cells.push_back(ratio_cell(k));
      for (std::size_t c = 0; c < cols.size(); ++c) row += pad(cells[c], cols[c].width) + "  ";
      out << row << "\n";
    }
    // A chain's kernels overlap and share data, so its own ratio is not the sum of the kernels'.
    if (with_bounds && r.at("kernels").size() > 1) {
      out << (sweep ? pad(label, label_w, true) + "  " : "") << "  all kernels: " << fmt("%.1f", num(t, "duration_ns") / 1e3)
          << " us, DRAM "
          << fmt("%.1f", static_cast<double>(count(t, "dram_read_bytes") + count(t, "dram_write_bytes")) / 1e6)
          << " MB, DRAM/bound " << ratio_cell(t) << "\n";
    }
    if (!sweep && t.contains("power_w"))
      out << "  estimated board draw " << fmt("%.0f", num(t, "power_w")) << " W at the run's SM clock ("
          << fmt("%.0f", num(t, "sm_clock_mhz")) << " MHz: the boost clock, or lower where the power cap binds, or peak_w inside a harness's window)\n";
    if (!sweep && t.contains("boost_launches")) {
      const json& wnd = t.at("boost_window_ms");
      out << "  sim.timing: " << count(t, "boost_launches") << " of the timed launches end inside the power controller's window ("
          << (wnd.is_null() ? std::string("its draw fits the cap") : "the cap binds after " + fmt("%.1f", wnd.get<double>()) + " ms")
          << "); the duration is the median launch's\n";
    }
    if (t.contains("sampling")) {
      const json& s = t.at("sampling");
      const json& e = s.at("estimated_error");
      out << (sweep ? pad(label, label_w, true) + "  " : "") << "  sampled: " << count(s, "skipped_blocks") << " of "
          << count(s, "launched_blocks") << " blocks skipped (steady periods); estimated error: time "
          << fmt("%.2f%%", 100 * num(e, "duration")) << ", DRAM " << fmt("%.2f%%", 100 * num(e, "dram")) << "\n";
    }
  }
  print_chain_summary(out, results);
  if (results.size() != 1) return;
  const std::string label = results[0].value("point", "");
  out << "\nper tensor (" << (label.empty() ? std::string("run") : label) << "):\n";
  out << pad("kernel", 8) << "  " << pad("tensor", 10) << "  " << pad("rd sectors", 12) << "  " << pad("rd hit", 7) << "  "
      << pad("wr sectors", 12) << "  " << pad("DRAM rd MB", 11) << "  " << pad("DRAM wr MB", 11) << "\n";
  for (const json& k : results[0].at("kernels"))
    for (const json& t : k.at("tensors")) {
      const json& l2 = t.at("l2");
      const json& dram = t.at("dram");
      out << pad(k.at("name").get<std::string>(), 8) << "  " << pad(t.at("name").get<std::string>(), 10) << "  "
          << pad(std::to_string(count(l2, "read_sectors")), 12) << "  " << pad(fmt("%.1f%%", 100 * num(l2, "read_hit_rate")), 7)
          << "  " << pad(std::to_string(count(l2, "write_sectors")), 12) << "  "
          << pad(fmt("%.1f", static_cast<double>(count(dram, "read_bytes")) / 1e6), 11) << "  "
          << pad(fmt("%.1f", static_cast<double>(count(dram, "write_bytes")) / 1e6), 11) << "\n";
    }
}

void print_table(std::ostream& out, const std::string& experiment, const std::vector<SimResult>& results,
                 const std::vector<RunBounds>* bounds) {
  print_table(out, experiment, results_json(results, bounds));
}

}  // namespace tilesim
