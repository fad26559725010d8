// Per-block timelines: a CSV for scripts, and Chrome/Perfetto trace-event JSON for a viewer
// (ui.perfetto.dev or chrome://tracing). Both are streamed: a big run has 10^5+ blocks.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "sim/report/format.hpp"
#include "sim/report/report.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

using report_detail::csv_quoted;
using report_detail::ps_as_ns;
using report_detail::ps_as_us;

namespace {

std::string kernel_name(const SimResult& r, std::uint32_t k) {
  return k < r.kernels.size() ? r.kernels[k].name : "kernel" + std::to_string(k);
}

/// A JSON string literal (quotes and escapes) without building a DOM.
std::string json_str(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

void write_timeline_csv(std::ostream& out, const SimResult& r) {
  out << "kernel_index,kernel,block,position,sm,start_ns,end_ns,wait_ns\n";
  for (const BlockRecord& b : r.blocks) {
    out << b.kernel << ',' << csv_quoted(kernel_name(r, b.kernel)) << ','
        << (b.block == kNoBlock ? std::string("-1") : std::to_string(b.block)) << ',' << b.position << ','
        << b.sm << ',' << ps_as_ns(b.start) << ',' << ps_as_ns(b.end) << ',' << ps_as_ns(b.wait) << '\n';
  }
}

std::vector<std::uint32_t> timeline_lanes(const SimResult& r, std::uint32_t* lanes_per_sm) {
  // Interval partitioning per SM: blocks in start order, each onto the lowest lane whose last
  // block has ended. Processing by start time makes the lane count the SM's peak residency.
  std::map<std::uint32_t, std::vector<std::size_t>> by_sm;
  for (std::size_t i = 0; i < r.blocks.size(); ++i) by_sm[r.blocks[i].sm].push_back(i);
  std::vector<std::uint32_t> lane(r.blocks.size(), 0);
  std::uint32_t most = r.blocks.empty() ? 0 : 1;
  for (auto& [sm, idx] : by_sm) {
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      return r.blocks[a].start != r.blocks[b].start ? r.blocks[a].start < r.blocks[b].start
                                                    : r.blocks[a].end < r.blocks[b].end;
    });
    std::vector<Time> lane_end;
    for (std::size_t i : idx) {
      const BlockRecord& b = r.blocks[i];
      std::size_t l = 0;
      while (l < lane_end.size() && lane_end[l] > b.start) ++l;
      if (l == lane_end.size()) lane_end.push_back(b.end);
      lane_end[l] = b.end;
      lane[i] = static_cast<std::uint32_t>(l);
    }
    most = std::max(most, static_cast<std::uint32_t>(lane_end.size()));
  }
  if (lanes_per_sm) *lanes_per_sm = most;
  return lane;
}

void write_timeline_trace_json(std::ostream& out, const SimResult& r) {
  std::uint32_t lanes = 1;
  const std::vector<std::uint32_t> lane = timeline_lanes(r, &lanes);
  const auto tid = [&](std::size_t i) { return static_cast<std::uint64_t>(r.blocks[i].sm) * lanes + lane[i]; };

  std::string process = r.experiment.empty() ? std::string("tilesim") : r.experiment;
  if (!r.point.empty()) process += " [" + r.point + "]";
  if (!r.arch.empty()) process += " on " + r.arch;
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  out << R"({"ph":"M","name":"process_name","pid":0,"args":{"name":)" << json_str(process) << "}}";

  // Name only the tracks that carry blocks, in SM order (thread_sort_index keeps SM 2 before SM 10).
  std::vector<std::uint64_t> tids;
  for (std::size_t i = 0; i < r.blocks.size(); ++i) tids.push_back(tid(i));
  std::sort(tids.begin(), tids.end());
  tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
  for (std::uint64_t t : tids) {
    std::string name = "SM " + std::to_string(t / lanes);
    if (lanes > 1) name += " lane " + std::to_string(t % lanes);
    out << ",\n" << R"({"ph":"M","name":"thread_name","pid":0,"tid":)" << t << R"(,"args":{"name":)" << json_str(name)
        << "}}";
    out << ",\n" << R"({"ph":"M","name":"thread_sort_index","pid":0,"tid":)" << t << R"(,"args":{"sort_index":)" << t
        << "}}";
  }

  for (std::size_t i = 0; i < r.blocks.size(); ++i) {
    const BlockRecord& b = r.blocks[i];
    const bool exit_block = b.block == kNoBlock;
    const std::string name = kernel_name(r, b.kernel) + (exit_block ? " exit" : " #" + std::to_string(b.block));
    out << ",\n"
        << R"({"ph":"X","cat":"block","pid":0,"tid":)" << tid(i) << R"(,"ts":)" << ps_as_us(b.start) << R"(,"dur":)"
        << ps_as_us(b.end - b.start) << R"(,"name":)" << json_str(name) << R"(,"args":{"kernel":)" << b.kernel
        << R"(,"block":)" << (exit_block ? std::string("-1") : std::to_string(b.block)) << R"(,"position":)"
        << b.position << R"(,"sm":)" << b.sm << R"(,"wait_ns":)" << ps_as_ns(b.wait) << "}}";
    // The record holds only the total wait, not when it happened, so the slice is drawn nested
    // at the block's start; its length is exact, its place is not (documented).
    if (b.wait > 0) {
      out << ",\n"
          << R"({"ph":"X","cat":"wait","pid":0,"tid":)" << tid(i) << R"(,"ts":)" << ps_as_us(b.start) << R"(,"dur":)"
          << ps_as_us(std::min(b.wait, b.end - b.start)) << R"(,"name":"wait","args":{"wait_ns":)" << ps_as_ns(b.wait)
          << "}}";
    }
  }
  out << "\n]}\n";
}

}  // namespace tilesim
