#include "sim/report/report.hpp"

namespace tilesim {

namespace {

nlohmann::json mem_json(const MemCounters& m) {
  return {{"hit_rate", m.hit_rate()},
          {"read_hit_rate", m.read_hit_rate()},
          {"read_sectors", m.read_sectors},
          {"read_hit_sectors", m.read_hit_sectors},
          {"write_sectors", m.write_sectors},
          {"write_hit_sectors", m.write_hit_sectors},
          {"near_copy_hit_sectors", m.near_copy_hit_sectors},
          {"fabric_sectors", m.fabric_sectors}};
}

double ns(Time t) { return static_cast<double>(t) / kPsPerNs; }

}  // namespace

nlohmann::json result_json(const SimResult& r) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : r.kernels) {
    nlohmann::json tensors = nlohmann::json::array();
    for (const auto& t : k.tensors) {
      if (t.mem.read_sectors + t.mem.write_sectors + t.mem.dram_write_bytes == 0) continue;
      tensors.push_back({{"name", t.name},
                         {"l2", mem_json(t.mem)},
                         {"dram", {{"read_bytes", t.mem.dram_read_bytes}, {"write_bytes", t.mem.dram_write_bytes}}}});
    }
    kernels.push_back({{"name", k.name},
                       {"grid", {k.grid_m, k.grid_n, k.grid_z}},
                       {"blocks", k.blocks},
                       {"launched_blocks", k.launched_blocks},
                       {"blocks_per_sm", k.blocks_per_sm},
                       {"occupancy_limit", k.occupancy_limit},
                       {"waves", k.waves},
                       {"last_wave_utilization", k.last_wave_utilization},
                       {"start_ns", ns(k.start)},
                       {"duration_ns", ns(k.duration())},
                       {"flops", k.flops},
                       {"tflops", k.tflops()},
                       {"bound", k.bound()},
                       {"compute_bound_ns", ns(k.compute_bound_time)},
                       {"memory_bound_ns", ns(k.memory_bound_time)},
                       {"l2", mem_json(k.mem)},
                       {"dram", {{"read_bytes", k.mem.dram_read_bytes}, {"write_bytes", k.mem.dram_write_bytes}}},
                       {"tensors", tensors}});
  }
  nlohmann::json j = {{"experiment", r.experiment},
                      {"arch", r.arch},
                      {"kernels", kernels},
                      {"total",
                       {{"duration_ns", ns(r.duration)},
                        {"l2_hit_rate", r.total.hit_rate()},
                        {"l2_read_hit_rate", r.total.read_hit_rate()},
                        {"dram_read_bytes", r.total.dram_read_bytes},
                        {"dram_write_bytes", r.total.dram_write_bytes}}}};
  if (!r.point.empty()) j["point"] = r.point;
  return j;
}

nlohmann::json run_json(const std::string& experiment, const std::vector<SimResult>& results, bool sweep) {
  if (!sweep && results.size() == 1) return result_json(results[0]);
  nlohmann::json points = nlohmann::json::array();
  for (const auto& r : results) points.push_back(result_json(r));
  return {{"experiment", experiment}, {"points", points}};
}

}  // namespace tilesim
