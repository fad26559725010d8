#include <cmath>
#include <cstdio>

#include "sim/report/format.hpp"
#include "sim/report/report.hpp"

namespace tilesim {

using report_detail::csv_quoted;
using nlohmann::json;

void write_csv(std::ostream& out, const std::vector<json>& results, const std::vector<json>* points) {
  // New columns go at the end (before the sweep's two joining columns) so that scripts reading
  // columns by position keep working.
  out << "experiment,point,arch,kernel,grid_m,grid_n,grid_z,blocks,blocks_per_sm,occupancy_limit,waves,"
         "last_wave_utilization,duration_ns,tflops,l2_hit_rate,l2_read_hit_rate,";
  for (const MemCounterField& f : kMemCounterFields)
    if (f.csv) out << f.name << ',';
  out << "bound,wait_ns,poll_sectors,stream,tail_lost_ns,tail_filled_fraction,compulsory_bytes,intermediate_bytes,"
         "io_bound_bytes,dram_over_bound,chain_io_bound_bytes"
      << (points ? ",point_index,point_hash" : "") << "\n";
  char buf[64];
  const auto num = [&](const json& v) {
    std::snprintf(buf, sizeof buf, "%.6g", v.get<double>());
    return std::string(buf);
  };
  // Times are exact: the JSON's nanoseconds are picoseconds / 1000, so rounding them back
  // to picoseconds recovers the integer and prints it with up to 3 decimals.
  const auto exact_ns = [](const json& v) {
    return report_detail::ps_as_ns(static_cast<Time>(std::llround(v.get<double>() * 1000.0)));
  };
  const auto text = [](const json& v) { return csv_quoted(v.get<std::string>()); };
  for (std::size_t ri = 0; ri < results.size(); ++ri) {
    const json& r = results[ri];
    for (const json& k : r.at("kernels")) {
      const json& l2 = k.at("l2");
      out << csv_quoted(r.at("experiment").get<std::string>()) << ',' << csv_quoted(r.value("point", "")) << ','
          << text(r.at("arch")) << ',' << text(k.at("name")) << ',' << k.at("grid").at(0) << ',' << k.at("grid").at(1) << ','
          << k.at("grid").at(2) << ',' << k.at("blocks") << ',' << k.at("blocks_per_sm") << ','
          << k.at("occupancy_limit").get<std::string>() << ',' << k.at("waves") << ','
          << num(k.at("last_wave_utilization")) << ',' << num(k.at("duration_ns")) << ',' << num(k.at("tflops")) << ','
          << num(l2.at("hit_rate")) << ',' << num(l2.at("read_hit_rate")) << ',';
      for (const MemCounterField& f : kMemCounterFields)
        if (f.csv) out << k.at(f.dram ? "dram" : "l2").at(f.json_key) << ',';
      out << k.at("bound").get<std::string>();
      out << ',' << exact_ns(k.at("wait_ns")) << ',' << k.at("poll_sectors") << ',' << k.at("stream") << ',';
      if (!k.at("waves_detail").empty())  // no block records: unknown, left empty
        out << exact_ns(k.at("tail_lost_ns")) << ',' << num(k.at("tail_filled_fraction"));
      else
        out << ',';
      if (k.contains("bounds")) {
        const json& b = k.at("bounds");
        out << ',' << b.at("compulsory_bytes") << ',' << b.at("intermediate_bytes") << ',' << b.at("io_bound_bytes")
            << ',' << (k.at("dram_over_bound").is_number() ? num(k.at("dram_over_bound")) : std::string()) << ','
            << b.value("chain_io_bound_bytes", std::uint64_t{0});
      } else {
        out << ",,,,,";
      }
      // A sweep folder's kernels.csv joins summary.csv (index, hash) through these.
      if (points) out << ',' << points->at(ri).at("index") << ',' << points->at(ri).at("hash").get<std::string>();
      out << '\n';
    }
  }
}

void write_csv(std::ostream& out, const std::vector<SimResult>& results, const std::vector<RunBounds>* bounds) {
  write_csv(out, results_json(results, bounds));
}

}  // namespace tilesim
