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

struct Column {
  const char* title;
  std::size_t width;
};

}  // namespace

void print_table(std::ostream& out, const std::string& experiment, const std::vector<SimResult>& results,
                 const std::vector<RunBounds>* bounds) {
  if (results.empty()) return;
  out << "experiment: " << experiment << "  arch: " << results[0].arch << "\n";
  std::size_t label_w = 5;
  for (const auto& r : results) label_w = std::max(label_w, r.point.size());
  const bool sweep = results.size() > 1 || !results[0].point.empty();
  const bool with_bounds = bounds && bounds->size() == results.size();
  std::vector<Column> cols = {{"kernel", 8},      {"grid", 12},       {"blk/SM", 16},  {"waves", 11},
                              {"time us", 10},   {"TFLOP/s", 8},     {"L2 hit", 7},  {"L2 rd hit", 9},
                              {"DRAM rd MB", 11}, {"DRAM wr MB", 11}, {"bound", 8},   {"wait us", 9},
                              {"tail lost us", 12}};
  if (with_bounds) cols.push_back({"DRAM/bound", 10});
  std::string header = sweep ? pad("point", label_w, true) + "  " : "";
  for (const auto& c : cols) header += pad(c.title, c.width) + "  ";
  out << header << "\n" << std::string(header.size(), '-') << "\n";
  for (std::size_t ri = 0; ri < results.size(); ++ri) {
    const SimResult& r = results[ri];
    const std::vector<KernelWaves> waves = compute_waves(r);
    for (std::size_t ki = 0; ki < r.kernels.size(); ++ki) {
      const KernelStats& k = r.kernels[ki];
      std::string row = sweep ? pad(r.point, label_w, true) + "  " : "";
      const std::string grid = std::to_string(k.grid_m) + "x" + std::to_string(k.grid_n) + "x" + std::to_string(k.grid_z);
      const std::string occ = std::to_string(k.blocks_per_sm) + " (" + k.occupancy_limit + ")";
      const std::string wave = std::to_string(k.waves) + " (" + fmt("%.0f%%", 100 * k.last_wave_utilization) + ")";
      // Without block records (an engine that does not fill them) the tail is unknown, not 0.
      const std::string tail = waves[ki].waves.empty() ? "-" : fmt("%.1f", static_cast<double>(waves[ki].tail_lost) / 1e6);
      std::vector<std::string> cells = {k.name,
                                        grid,
                                        occ,
                                        wave,
                                        fmt("%.1f", static_cast<double>(k.duration()) / 1e6),
                                        fmt("%.1f", k.tflops()),
                                        fmt("%.1f%%", 100 * k.mem.hit_rate()),
                                        fmt("%.1f%%", 100 * k.mem.read_hit_rate()),
                                        fmt("%.1f", static_cast<double>(k.mem.dram_read_bytes) / 1e6),
                                        fmt("%.1f", static_cast<double>(k.mem.dram_write_bytes) / 1e6),
                                        k.bound(),
                                        fmt("%.1f", static_cast<double>(k.wait_ps) / 1e6),
                                        tail};
      if (with_bounds) {
        const auto& kb = (*bounds)[ri].kernels;
        const auto ratio =
            ki < kb.size() ? dram_over_bound(k.mem.dram_read_bytes + k.mem.dram_write_bytes, kb[ki]) : std::nullopt;
        cells.push_back(ratio ? fmt("%.2f", *ratio) : "-");
      }
      for (std::size_t c = 0; c < cols.size(); ++c) row += pad(cells[c], cols[c].width) + "  ";
      out << row << "\n";
    }
    // A chain's kernels overlap and share data, so its own ratio is not the sum of the kernels'.
    if (with_bounds && r.kernels.size() > 1) {
      const auto ratio = dram_over_bound(r.total.dram_read_bytes + r.total.dram_write_bytes, (*bounds)[ri].total);
      out << (sweep ? pad(r.point, label_w, true) + "  " : "") << "  all kernels: " << fmt("%.1f", static_cast<double>(r.duration) / 1e6)
          << " us, DRAM " << fmt("%.1f", static_cast<double>(r.total.dram_read_bytes + r.total.dram_write_bytes) / 1e6)
          << " MB, DRAM/bound " << (ratio ? fmt("%.2f", *ratio) : std::string("-")) << "\n";
    }
  }
  print_chain_summary(out, results);
  if (results.size() != 1) return;
  out << "\nper tensor (" << (results[0].point.empty() ? std::string("run") : results[0].point) << "):\n";
  out << pad("kernel", 8) << "  " << pad("tensor", 10) << "  " << pad("rd sectors", 12) << "  " << pad("rd hit", 7) << "  "
      << pad("wr sectors", 12) << "  " << pad("DRAM rd MB", 11) << "  " << pad("DRAM wr MB", 11) << "\n";
  for (const auto& k : results[0].kernels)
    for (const auto& t : k.tensors) {
      if (t.mem.read_sectors + t.mem.write_sectors + t.mem.dram_write_bytes == 0) continue;
      out << pad(k.name, 8) << "  " << pad(t.name, 10) << "  " << pad(std::to_string(t.mem.read_sectors), 12) << "  "
          << pad(fmt("%.1f%%", 100 * t.mem.read_hit_rate()), 7) << "  " << pad(std::to_string(t.mem.write_sectors), 12)
          << "  " << pad(fmt("%.1f", static_cast<double>(t.mem.dram_read_bytes) / 1e6), 11) << "  "
          << pad(fmt("%.1f", static_cast<double>(t.mem.dram_write_bytes) / 1e6), 11) << "\n";
    }
}

}  // namespace tilesim
