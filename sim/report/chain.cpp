#include "sim/report/chain.hpp"

#include <cstdio>

#include "sim/report/format.hpp"

namespace tilesim {

namespace {

// The sectors a kernel read from and wrote to one storage (a tensor and its views).
struct StorageUse {
  std::uint64_t read = 0, hit = 0, written = 0;
};

// uses[k][s]: kernel k's use of storage s, summed over the tensors held in it.
std::vector<std::vector<StorageUse>> storage_uses(const SimResult& r) {
  std::vector<std::vector<StorageUse>> uses(r.kernels.size());
  for (std::size_t k = 0; k < r.kernels.size(); ++k) {
    uses[k].resize(r.kernels[k].tensors.size());
    for (const TensorStats& t : r.kernels[k].tensors) {
      StorageUse& u = uses[k][t.storage];
      u.read += t.mem.read_sectors;
      u.hit += t.mem.read_hit_sectors;
      u.written += t.mem.write_sectors;
    }
  }
  return uses;
}

// Each read of an intermediate, per kernel and tensor read (a view is named as read): the
// producer is the latest earlier kernel that wrote the bytes, or the kernel itself when it
// reads back at least what it wrote (a fused kernel's own intermediate). Serial split-K's
// partial sums (read back less than written) and external inputs are not intermediates.
void add_reads(const SimResult& r, const std::vector<std::vector<StorageUse>>& uses, ChainSummary& s) {
  for (std::size_t k = 0; k < r.kernels.size(); ++k)
    for (const TensorStats& t : r.kernels[k].tensors) {
      if (!t.mem.read_sectors) continue;
      std::size_t earlier = k;
      while (earlier > 0 && !uses[earlier - 1][t.storage].written) --earlier;
      const StorageUse& self = uses[k][t.storage];
      if (earlier == 0 && !(self.written && self.read >= self.written)) continue;
      const std::size_t producer = earlier > 0 ? earlier - 1 : k;
      IntermediateRead i;
      i.tensor = t.name;
      i.storage = r.kernels[k].tensors[t.storage].name;
      i.producer = r.kernels[producer].name;
      i.consumer = r.kernels[k].name;
      i.read_sectors = t.mem.read_sectors;
      i.read_hit_sectors = t.mem.read_hit_sectors;
      s.reads.push_back(i);
    }
}

}  // namespace

ChainSummary summarize_chain(const SimResult& r) {
  ChainSummary s;
  if (r.kernels.empty()) return s;
  const auto uses = storage_uses(r);
  const std::size_t n = r.kernels[0].tensors.size();
  for (std::size_t t = 0; t < n; ++t) {
    if (r.kernels[0].tensors[t].storage != t) {
      s.views = true;  // counted with the tensor that holds its bytes
      continue;
    }
    std::uint64_t written = 0, read = 0, hit = 0;
    // Serial split-K rereads its own partial sums; only data passed on counts as intermediate.
    bool only_partials = true;
    bool same_kernel_chain = false;  // a fused kernel writes and reads H itself
    for (std::size_t k = 0; k < r.kernels.size(); ++k) {
      const StorageUse& u = uses[k][t];
      written += u.written;
      read += u.read;
      hit += u.hit;
      if (u.read && !u.written) only_partials = false;
      same_kernel_chain = same_kernel_chain || (u.read && u.written && u.read >= u.written);
    }
    if (!written || !read) continue;
    if (only_partials && !same_kernel_chain) continue;
    s.intermediates.push_back(r.kernels[0].tensors[t].name);
    s.intermediate_read_sectors += read;
    s.intermediate_read_hit_sectors += hit;
  }
  if (s.views) add_reads(r, uses, s);
  for (const KernelStats& k : r.kernels) s.wait_ps += k.wait_ps;
  return s;
}

namespace {

// One line per kernel reading an intermediate (total.intermediate_reads: workloads with views).
void print_intermediate_reads(std::ostream& out, const std::vector<nlohmann::json>& results, std::size_t label_w) {
  bool any = false;
  for (const auto& r : results) any = any || !r.at("total").value("intermediate_reads", nlohmann::json::array()).empty();
  if (!any) return;
  out << "\nintermediate reads (the L2 read hit rate of each intermediate in the kernel that reads it):\n";
  char buf[200];
  std::snprintf(buf, sizeof buf, "%-14s %-12s %-16s %-16s %12s %8s", "tensor", "storage", "producer", "consumer",
                "rd sectors", "L2 hit");
  out << std::string(label_w, ' ') << "  " << buf << "\n";
  for (const auto& r : results) {
    std::string label = r.value("point", "");
    if (label.empty()) label = "run";
    label.resize(label_w, ' ');
    for (const auto& i : r.at("total").value("intermediate_reads", nlohmann::json::array())) {
      std::snprintf(buf, sizeof buf, "%-14s %-12s %-16s %-16s %12llu %7.1f%%", i.at("tensor").get<std::string>().c_str(),
                    i.at("storage").get<std::string>().c_str(), i.at("producer").get<std::string>().c_str(),
                    i.at("consumer").get<std::string>().c_str(),
                    static_cast<unsigned long long>(i.at("read_sectors").get<std::uint64_t>()),
                    100 * i.at("read_hit_rate").get<double>());
      out << label << "  " << buf << "\n";
    }
  }
}

}  // namespace

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
  print_intermediate_reads(out, results, label_w);
}

}  // namespace tilesim
