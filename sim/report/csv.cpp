#include <cstdio>

#include "sim/report/format.hpp"
#include "sim/report/report.hpp"

namespace tilesim {

using report_detail::csv_quoted;

void write_csv(std::ostream& out, const std::vector<SimResult>& results, const std::vector<RunBounds>* bounds) {
  // New columns go at the end so that scripts reading columns by position keep working.
  out << "experiment,point,arch,kernel,grid_m,grid_n,grid_z,blocks,blocks_per_sm,occupancy_limit,waves,"
         "last_wave_utilization,duration_ns,tflops,l2_hit_rate,l2_read_hit_rate,read_sectors,read_hit_sectors,"
         "write_sectors,fabric_sectors,dram_read_bytes,dram_write_bytes,bound,"
         "wait_ns,poll_sectors,stream,tail_lost_ns,tail_filled_fraction,compulsory_bytes,intermediate_bytes,"
         "io_bound_bytes,dram_over_bound\n";
  char buf[64];
  const auto num = [&](double v) {
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  const bool with_bounds = bounds && bounds->size() == results.size();
  for (std::size_t ri = 0; ri < results.size(); ++ri) {
    const SimResult& r = results[ri];
    const std::vector<KernelWaves> waves = compute_waves(r);
    for (std::size_t ki = 0; ki < r.kernels.size(); ++ki) {
      const KernelStats& k = r.kernels[ki];
      out << csv_quoted(r.experiment) << ',' << csv_quoted(r.point) << ',' << csv_quoted(r.arch) << ','
          << csv_quoted(k.name) << ',' << k.grid_m << ',' << k.grid_n << ',' << k.grid_z << ',' << k.blocks << ','
          << k.blocks_per_sm << ',' << k.occupancy_limit << ',' << k.waves << ',' << num(k.last_wave_utilization)
          << ',' << num(static_cast<double>(k.duration()) / 1e3) << ',' << num(k.tflops()) << ','
          << num(k.mem.hit_rate()) << ',' << num(k.mem.read_hit_rate()) << ',' << k.mem.read_sectors << ','
          << k.mem.read_hit_sectors << ',' << k.mem.write_sectors << ',' << k.mem.fabric_sectors << ','
          << k.mem.dram_read_bytes << ',' << k.mem.dram_write_bytes << ',' << k.bound();
      // Times are exact: the picoseconds printed as ns with up to 3 decimals.
      out << ',' << report_detail::ps_as_ns(static_cast<Time>(k.wait_ps)) << ',' << k.poll_sectors << ','
          << k.stream << ',';
      if (!waves[ki].waves.empty())  // no block records: unknown, left empty
        out << report_detail::ps_as_ns(waves[ki].tail_lost) << ',' << num(waves[ki].tail_filled_fraction);
      else
        out << ',';
      if (with_bounds && ki < (*bounds)[ri].kernels.size()) {
        const TrafficBounds& b = (*bounds)[ri].kernels[ki];
        const auto ratio = dram_over_bound(k.mem.dram_read_bytes + k.mem.dram_write_bytes, b);
        out << ',' << b.compulsory_bytes << ',' << b.intermediate_bytes << ',' << b.io_bound_bytes << ','
            << (ratio ? num(*ratio) : std::string());
      } else {
        out << ",,,,";
      }
      out << '\n';
    }
  }
}

}  // namespace tilesim
