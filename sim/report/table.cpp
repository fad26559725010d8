#include <cstdio>
#include <string>

#include "sim/report/report.hpp"

namespace tilesim {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pad(const std::string& s, std::size_t w, bool left = false) {
  if (s.size() >= w) return s;
  return left ? s + std::string(w - s.size(), ' ') : std::string(w - s.size(), ' ') + s;
}

struct Column {
  const char* title;
  std::size_t width;
};

}  // namespace

void print_table(std::ostream& out, const std::string& experiment, const std::vector<SimResult>& results) {
  if (results.empty()) return;
  out << "experiment: " << experiment << "  arch: " << results[0].arch << "\n";
  std::size_t label_w = 5;
  for (const auto& r : results) label_w = std::max(label_w, r.point.size());
  const bool sweep = results.size() > 1 || !results[0].point.empty();
  const Column cols[] = {{"kernel", 8},      {"grid", 12},       {"blk/SM", 16},   {"waves", 11},
                         {"time us", 10},   {"TFLOP/s", 8},     {"L2 hit", 7},   {"L2 rd hit", 9},
                         {"DRAM rd MB", 11}, {"DRAM wr MB", 11}, {"bound", 8}};
  std::string header = sweep ? pad("point", label_w, true) + "  " : "";
  for (const auto& c : cols) header += pad(c.title, c.width) + "  ";
  out << header << "\n" << std::string(header.size(), '-') << "\n";
  for (const auto& r : results) {
    for (const auto& k : r.kernels) {
      std::string row = sweep ? pad(r.point, label_w, true) + "  " : "";
      const std::string grid = std::to_string(k.grid_m) + "x" + std::to_string(k.grid_n) + "x" + std::to_string(k.grid_z);
      const std::string occ = std::to_string(k.blocks_per_sm) + " (" + k.occupancy_limit + ")";
      const std::string waves = std::to_string(k.waves) + " (" + fmt("%.0f%%", 100 * k.last_wave_utilization) + ")";
      const std::string cells[] = {k.name,
                                   grid,
                                   occ,
                                   waves,
                                   fmt("%.1f", static_cast<double>(k.duration()) / 1e6),
                                   fmt("%.1f", k.tflops()),
                                   fmt("%.1f%%", 100 * k.mem.hit_rate()),
                                   fmt("%.1f%%", 100 * k.mem.read_hit_rate()),
                                   fmt("%.1f", static_cast<double>(k.mem.dram_read_bytes) / 1e6),
                                   fmt("%.1f", static_cast<double>(k.mem.dram_write_bytes) / 1e6),
                                   k.bound()};
      for (std::size_t c = 0; c < std::size(cols); ++c) row += pad(cells[c], cols[c].width) + "  ";
      out << row << "\n";
    }
  }
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
