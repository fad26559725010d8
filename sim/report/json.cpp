#include <cmath>

#include "sim/report/format.hpp"
#include "sim/report/chain.hpp"
#include "sim/report/report.hpp"

namespace tilesim {

namespace {

/// The `l2` object: its rates, then every L2 counter of kMemCounterFields.
nlohmann::json mem_json(const MemCounters& m) {
  nlohmann::json j{{"hit_rate", m.hit_rate()}, {"lookup_hit_rate", m.lookup_hit_rate()}, {"read_hit_rate", m.read_hit_rate()}};
  for (const MemCounterField& f : kMemCounterFields)
    if (!f.dram) j[f.json_key] = m.*f.member;
  return j;
}

/// The `dram` object: every DRAM counter of kMemCounterFields.
nlohmann::json dram_json(const MemCounters& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const MemCounterField& f : kMemCounterFields)
    if (f.dram) j[f.json_key] = m.*f.member;
  return j;
}

using report_detail::ns;

nlohmann::json bounds_json(const TrafficBounds& b) {
  return {{"compulsory_bytes", b.compulsory_bytes},
          {"intermediate_bytes", b.intermediate_bytes},
          {"io_bound_bytes", b.io_bound_bytes},
          {"chain_io_bound_bytes", b.chain_io_bound_bytes}};
}

/// Adds "bounds" and "dram_over_bound" (null when the bound is 0) to a kernel or total object.
void add_bounds(nlohmann::json& j, const TrafficBounds& b, std::uint64_t dram_bytes) {
  j["bounds"] = bounds_json(b);
  const auto ratio = dram_over_bound(dram_bytes, b);
  j["dram_over_bound"] = ratio ? nlohmann::json(*ratio) : nlohmann::json(nullptr);
}

/// A kernel's `sampling` object (sampled mode only): what was skipped and the estimate's spread.
nlohmann::json sampling_json(const SamplingStats& s) {
  nlohmann::json j{{"period_blocks", s.period_blocks},
                   {"by", s.by_rates ? "rates" : "period"},
                   {"skipped_blocks", s.skipped_blocks},
                   {"skipped_ns", ns(s.skipped_ps)},
                   {"duration_spread_ns", ns(s.time_spread_ps)},
                   {"dram_spread_bytes", s.dram_spread_bytes}};
  if (!s.why_whole.empty()) j["whole_because"] = s.why_whole;
  return j;
}

/// The total's `sampling` object: the share of blocks skipped, and the estimated error of the
/// totals (the kernels' spreads over the totals).
nlohmann::json total_sampling_json(const SimResult& r) {
  std::uint64_t skipped = 0, launched = 0, dram_spread = 0;
  Time time_spread = 0;
  for (const KernelStats& k : r.kernels) {
    skipped += k.sampling.skipped_blocks;
    launched += k.launched_blocks;
    time_spread += k.sampling.time_spread_ps;
    dram_spread += k.sampling.dram_spread_bytes;
  }
  const std::uint64_t dram = r.total.dram_read_bytes + r.total.dram_write_bytes;
  return {{"mode", "sampled"},
          {"skipped_blocks", skipped},
          {"launched_blocks", launched},
          {"estimated_error",
           {{"duration", r.duration > 0 ? static_cast<double>(time_spread) / static_cast<double>(r.duration) : 0.0},
            {"dram", dram > 0 ? static_cast<double>(dram_spread) / static_cast<double>(dram) : 0.0}}}};
}

}  // namespace

nlohmann::json result_json(const SimResult& r, const RunBounds* bounds) {
  const std::vector<KernelWaves> waves = compute_waves(r);
  nlohmann::json kernels = nlohmann::json::array();
  for (std::size_t ki = 0; ki < r.kernels.size(); ++ki) {
    const KernelStats& k = r.kernels[ki];
    const KernelWaves& kw = waves[ki];
    const LaunchWaves launch = launch_waves(k, r.num_sms);
    nlohmann::json tensors = nlohmann::json::array();
    for (const auto& t : k.tensors) {
      if (t.mem.read_sectors + t.mem.write_sectors + t.mem.dram_write_bytes == 0) continue;
      tensors.push_back({{"name", t.name},
                         {"l2", mem_json(t.mem)},
                         {"dram", dram_json(t.mem)}});
    }
    kernels.push_back({{"name", k.name},
                       {"grid", {k.grid_m, k.grid_n, k.grid_z}},
                       {"blocks", k.blocks},
                       {"launched_blocks", k.launched_blocks},
                       {"blocks_per_sm", k.blocks_per_sm},
                       {"occupancy_limit", k.occupancy_limit},
                       {"waves", launch.waves},
                       {"last_wave_utilization", launch.last_wave_utilization},
                       {"start_ns", ns(k.start)},
                       {"duration_ns", ns(k.duration())},
                       {"flops", k.flops},
                       {"tflops", kernel_tflops(k)},
                       {"bound", kernel_bound(k)},
                       {"compute_bound_ns", ns(k.compute_bound_time)},
                       {"memory_bound_ns", ns(k.memory_bound_time)},
                       {"l2", mem_json(k.mem)},
                       {"dram", dram_json(k.mem)},
                       {"tensors", tensors}});
    nlohmann::json& kj = kernels.back();
    kj["stream"] = k.stream;
    kj["wait_ns"] = ns(static_cast<Time>(k.wait_ps));
    kj["poll_sectors"] = k.poll_sectors;
    // Only under sim.l2_start: write_flushed (the flush stream's dirty lines this kernel wrote back).
    if (k.start_writeback_bytes) kj["dram"]["start_writeback_bytes"] = k.start_writeback_bytes;
    if (r.sampled_mode) kj["sampling"] = sampling_json(k.sampling);
    nlohmann::json detail = nlohmann::json::array();
    for (const WaveInfo& w : kw.waves)
      detail.push_back({{"index", w.index}, {"start_ns", ns(w.start)}, {"end_ns", ns(w.end)}, {"blocks", w.blocks}});
    kj["waves_detail"] = detail;
    kj["tail_lost_ns"] = ns(kw.tail_lost);
    kj["tail_filled_fraction"] = kw.tail_filled_fraction;
    if (bounds && ki < bounds->kernels.size())
      add_bounds(kj, bounds->kernels[ki], k.mem.dram_read_bytes + k.mem.dram_write_bytes);
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
  // The clock the run was simulated at; the draw only where the arch models the power cap.
  j["total"]["sm_clock_mhz"] = r.sm_clock_mhz;
  if (r.power_w > 0) j["total"]["power_w"] = r.power_w;
  if (r.boost_launches >= 0) {
    // JSON has no infinity: a boost draw within the cap keeps the boost clock throughout (null).
    j["total"]["boost_launches"] = r.boost_launches;
    j["total"]["boost_window_ms"] =
        std::isinf(r.boost_window_ms) ? nlohmann::json(nullptr) : nlohmann::json(r.boost_window_ms);
  }
  if (r.sampled_mode) j["total"]["sampling"] = total_sampling_json(r);
  if (bounds) add_bounds(j["total"], bounds->total, r.total.dram_read_bytes + r.total.dram_write_bytes);
  const ChainSummary chain = summarize_chain(r);
  j["total"]["wait_ns"] = ns(static_cast<Time>(chain.wait_ps));
  j["total"]["intermediates"] = chain.intermediates;
  j["total"]["intermediate_read_sectors"] = chain.intermediate_read_sectors;
  j["total"]["intermediate_l2_read_hit_rate"] = chain.intermediate_read_hit_rate();
  if (chain.views) {
    nlohmann::json reads = nlohmann::json::array();
    for (const IntermediateRead& i : chain.reads)
      reads.push_back({{"tensor", i.tensor},
                       {"storage", i.storage},
                       {"producer", i.producer},
                       {"consumer", i.consumer},
                       {"read_sectors", i.read_sectors},
                       {"read_hit_sectors", i.read_hit_sectors},
                       {"read_hit_rate", i.read_hit_rate()}});
    j["total"]["intermediate_reads"] = reads;
  }
  if (!r.point.empty()) j["point"] = r.point;
  return j;
}

std::vector<nlohmann::json> results_json(const std::vector<SimResult>& results, const std::vector<RunBounds>* bounds) {
  std::vector<nlohmann::json> out;
  for (std::size_t i = 0; i < results.size(); ++i)
    out.push_back(result_json(results[i], bounds && i < bounds->size() ? &(*bounds)[i] : nullptr));
  return out;
}

nlohmann::json run_json(const std::string& experiment, const std::vector<nlohmann::json>& results, bool sweep) {
  if (!sweep && results.size() == 1) return results[0];
  return {{"experiment", experiment}, {"points", results}};
}

nlohmann::json run_json(const std::string& experiment, const std::vector<SimResult>& results, bool sweep,
                        const std::vector<RunBounds>* bounds) {
  return run_json(experiment, results_json(results, bounds), sweep);
}

}  // namespace tilesim
