#include <cstdio>

#include "sim/report/report.hpp"

namespace tilesim {

namespace {
// Labels may hold commas (order parameters): quote every text field.
std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

void write_csv(std::ostream& out, const std::vector<SimResult>& results) {
  out << "experiment,point,arch,kernel,grid_m,grid_n,grid_z,blocks,blocks_per_sm,occupancy_limit,waves,"
         "last_wave_utilization,duration_ns,tflops,l2_hit_rate,l2_read_hit_rate,read_sectors,read_hit_sectors,"
         "write_sectors,fabric_sectors,dram_read_bytes,dram_write_bytes,bound\n";
  char buf[64];
  const auto num = [&](double v) {
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  for (const auto& r : results)
    for (const auto& k : r.kernels) {
      out << quoted(r.experiment) << ',' << quoted(r.point) << ',' << quoted(r.arch) << ',' << quoted(k.name) << ','
          << k.grid_m << ',' << k.grid_n << ',' << k.grid_z << ',' << k.blocks << ',' << k.blocks_per_sm << ','
          << k.occupancy_limit << ',' << k.waves << ',' << num(k.last_wave_utilization) << ','
          << num(static_cast<double>(k.duration()) / 1e3) << ',' << num(k.tflops()) << ',' << num(k.mem.hit_rate())
          << ',' << num(k.mem.read_hit_rate()) << ',' << k.mem.read_sectors << ',' << k.mem.read_hit_sectors << ','
          << k.mem.write_sectors << ',' << k.mem.fabric_sectors << ',' << k.mem.dram_read_bytes << ','
          << k.mem.dram_write_bytes << ',' << k.bound() << '\n';
    }
}

}  // namespace tilesim
