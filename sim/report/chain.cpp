#include "sim/report/chain.hpp"

#include <cstdio>

#include "sim/report/format.hpp"

namespace tilesim {

ChainSummary summarize_chain(const SimResult& r) {
  ChainSummary s;
  if (r.kernels.empty()) return s;
  const std::size_t n = r.kernels[0].tensors.size();
  for (std::size_t t = 0; t < n; ++t) {
    std::uint64_t written = 0, read = 0, hit = 0;
    for (const KernelStats& k : r.kernels) {
      written += k.tensors[t].mem.write_sectors;
      read += k.tensors[t].mem.read_sectors;
      hit += k.tensors[t].mem.read_hit_sectors;
    }
    if (!written || !read) continue;
    // Serial split-K rereads its own partial sums; only data passed on counts as intermediate.
    bool only_partials = true;
    for (const KernelStats& k : r.kernels)
      if (k.tensors[t].mem.read_sectors && !k.tensors[t].mem.write_sectors) only_partials = false;
    bool same_kernel_chain = false;  // a fused kernel writes and reads H itself
    for (const KernelStats& k : r.kernels)
      same_kernel_chain = same_kernel_chain || (k.tensors[t].mem.read_sectors && k.tensors[t].mem.write_sectors &&
                                                k.tensors[t].mem.read_sectors >= k.tensors[t].mem.write_sectors);
    if (only_partials && !same_kernel_chain) continue;
    s.intermediates.push_back(r.kernels[0].tensors[t].name);
    s.intermediate_read_sectors += read;
    s.intermediate_read_hit_sectors += hit;
  }
  for (const KernelStats& k : r.kernels) s.wait_ps += k.wait_ps;
  return s;
}

void print_chain_summary(std::ostream& out, const std::vector<nlohmann::json>& results) {
  bool chain = false;
  for (const auto& r : results)
    chain = chain || r.at("kernels").size() > 1 || !r.at("total").at("intermediates").empty();
  if (!chain) return;
  std::size_t label_w = 5;
  for (const auto& r : results) label_w = std::max(label_w, r.value("point", "").size());
  char buf[160];
  out << "\nchain summary (intermediates: tensors written and read in the run):\n";
  std::snprintf(buf, sizeof buf, "%12s  %12s  %14s  %14s  %12s", "time us", "DRAM MB", "intermediates",
                "interm. L2 hit", "wait us");
  out << std::string(label_w, ' ') << "  " << buf << "\n";
  for (const auto& r : results) {
    const nlohmann::json& t = r.at("total");
    std::string names;
    for (const auto& i : t.at("intermediates")) names += (names.empty() ? "" : ",") + i.get<std::string>();
    const auto dram = t.at("dram_read_bytes").get<std::uint64_t>() + t.at("dram_write_bytes").get<std::uint64_t>();
    // No intermediate: no hit rate to show (a 0.0% would read as every read missing).
    const std::string hit =
        names.empty() ? "-" : report_detail::fmt("%.1f%%", 100 * t.at("intermediate_l2_read_hit_rate").get<double>());
    std::snprintf(buf, sizeof buf, "%12.1f  %12.1f  %14s  %14s  %12.1f", t.at("duration_ns").get<double>() / 1e3,
                  static_cast<double>(dram) / 1e6, names.empty() ? "-" : names.c_str(), hit.c_str(),
                  t.at("wait_ns").get<double>() / 1e3);
    std::string label = r.value("point", "");
    if (label.empty()) label = "run";
    label.resize(label_w, ' ');
    out << label << "  " << buf << "\n";
  }
}

}  // namespace tilesim
