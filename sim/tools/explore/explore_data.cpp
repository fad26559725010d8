#include "sim/tools/explore/explore_data.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "common/base64.hpp"
#include "common/error.hpp"
#include "models/cache/l2.hpp"
#include "sim/tools/explore/manual_data.hpp"
#include "sim/tools/explore/replay.hpp"
#include "sim/core/tile_rect.hpp"
#include "sim/report/waves.hpp"

namespace tilesim::explore {

using nlohmann::json;

namespace {

constexpr double ns(Time t) { return static_cast<double>(t) / kPsPerNs; }

// Lines probed per cell: enough to tell empty, partly and fully resident apart, few enough
// that a snapshot of thousands of cells stays cheap.
constexpr std::uint32_t kSampleRows = 8, kSampleCols = 2;

/// The simulation's observer: one entry per dispatch, closed (counters and maybe a residency
/// snapshot) when the next dispatch happens or the run ends.
class Recorder final : public SimObserver {
 public:
  struct Step {
    Time t = 0;
    std::uint32_t kernel = 0, block = 0, position = 0, sm = 0;
    MemCounters cum;            // every request before the next dispatch
    std::uint64_t sectors = 0, hit_sectors = 0, dram_read_sectors = 0;  // this block's own
    std::vector<std::array<std::uint64_t, 3>> loads;  // {tensor, sectors, hit sectors} of its loads
  };

  Recorder(const Workload& w, const std::vector<std::vector<Addr>>& samples, std::uint32_t sector_bytes)
      : samples_(samples), sector_bytes_(sector_bytes) {
    std::uint64_t dispatches = 0;
    for (const Kernel& k : w.kernels) {
      step_of_.emplace_back(k.num_blocks(), 0u);
      for (std::uint32_t b : k.dispatch) dispatches += b != kNoBlock;
    }
    const std::uint64_t bytes = dispatches * samples_.size();
    stride_ = std::max<std::uint64_t>(1, (bytes + kResidencyBudget - 1) / kResidencyBudget);
    steps_.reserve(dispatches);
  }

  void on_dispatch(std::uint32_t kernel, std::uint32_t block, std::uint32_t position, std::uint32_t sm, Time t,
                   const L2Cache& l2) override {
    close(l2, false);
    Step s;
    s.t = t;
    s.kernel = kernel;
    s.block = block;
    s.position = position;
    s.sm = sm;
    step_of_[kernel][block] = static_cast<std::uint32_t>(steps_.size());
    steps_.push_back(s);
  }

  void on_access(std::uint32_t kernel, std::uint32_t block, const TileAccess& a, const L2AccessResult& r) override {
    const bool store = a.kind == AccessKind::store;
    (store ? cum_.write_sectors : cum_.read_sectors) += r.sectors;
    (store ? cum_.write_hit_sectors : cum_.read_hit_sectors) += r.hit_sectors;
    cum_.dram_read_bytes += r.dram_read_sectors * sector_bytes_;
    cum_.dram_write_bytes += r.dram_write_sectors * sector_bytes_;
    if (block == kNoBlock) return;
    Step& s = steps_[step_of_[kernel][block]];
    s.sectors += r.sectors;
    s.hit_sectors += r.hit_sectors;
    s.dram_read_sectors += r.dram_read_sectors;
    if (store) return;
    auto it = std::find_if(s.loads.begin(), s.loads.end(), [&](const auto& l) { return l[0] == a.tensor; });
    if (it == s.loads.end()) it = s.loads.insert(s.loads.end(), {a.tensor, 0, 0});
    (*it)[1] += r.sectors;
    (*it)[2] += r.hit_sectors;
  }

  void on_end(Time, const L2Cache& l2) override { close(l2, true); }

  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<std::uint32_t>& snapshot_steps() const { return snapshot_steps_; }
  const std::vector<std::uint8_t>& residency() const { return residency_; }

 private:
  void close(const L2Cache& l2, bool last) {
    if (steps_.empty() || closed_ == steps_.size()) return;
    const std::size_t i = steps_.size() - 1;
    steps_[i].cum = cum_;
    closed_ = steps_.size();
    if (i % stride_ != 0 && !last) return;
    snapshot_steps_.push_back(static_cast<std::uint32_t>(i));
    for (const std::vector<Addr>& cell : samples_)
      residency_.push_back(static_cast<std::uint8_t>(std::lround(255 * resident_fraction(l2, cell.data(), cell.size()))));
  }

  const std::vector<std::vector<Addr>>& samples_;
  std::uint32_t sector_bytes_;
  std::uint64_t stride_ = 1;
  std::vector<std::vector<std::uint32_t>> step_of_;  // [kernel][block] -> step
  std::vector<Step> steps_;
  std::size_t closed_ = 0;
  MemCounters cum_;
  std::vector<std::uint32_t> snapshot_steps_;
  std::vector<std::uint8_t> residency_;
};

// Which kernels read and write each tensor.
struct TensorUse {
  std::vector<bool> read, written;
};

TensorUse tensor_use(const Workload& w) {
  TensorUse u{std::vector<bool>(w.tensors.size()), std::vector<bool>(w.tensors.size())};
  for (const Kernel& k : w.kernels)
    for_each_access(k, [&](const TileAccess& a) { (a.kind == AccessKind::load ? u.read : u.written)[a.tensor] = true; });
  return u;
}

json columns(const std::vector<std::string>& names) {
  json j = json::object();
  for (const std::string& n : names) j[n] = json::array();
  return j;
}

}  // namespace

std::vector<TensorCells> cut_cells(const Workload& w, std::uint32_t line_bytes, std::vector<std::vector<Addr>>& samples) {
  std::vector<TensorCells> cells(w.tensors.size());
  std::vector<const TileAccess*> first_load(w.tensors.size(), nullptr);
  for (const Kernel& k : w.kernels)
    for (const TileAccess& a : k.accesses)
      if (a.kind == AccessKind::load && !first_load[a.tensor] && a.rows && a.cols) first_load[a.tensor] = &a;
  for (std::size_t t = 0; t < w.tensors.size(); ++t) {
    if (!first_load[t]) continue;
    const Tensor& tensor = w.tensors[t];
    TensorCells& c = cells[t];
    c.cell_rows = first_load[t]->rows;
    c.cell_cols = first_load[t]->cols;
    const auto grid = [&] {
      c.grid_rows = ceil_div(tensor.rows, c.cell_rows);
      c.grid_cols = ceil_div(tensor.cols, c.cell_cols);
    };
    grid();
    while (std::uint64_t{c.grid_rows} * c.grid_cols > kMaxCellsPerTensor) {
      (c.grid_rows >= c.grid_cols ? c.cell_rows : c.cell_cols) *= 2;
      grid();
    }
    c.first = static_cast<std::int64_t>(samples.size());
    for (std::uint32_t r = 0; r < c.grid_rows; ++r)
      for (std::uint32_t col = 0; col < c.grid_cols; ++col) {
        TileAccess a;
        a.tensor = static_cast<std::uint32_t>(t);
        a.row0 = r * c.cell_rows;
        a.col0 = col * c.cell_cols;
        a.rows = std::min(c.cell_rows, tensor.rows - a.row0);
        a.cols = std::min(c.cell_cols, tensor.cols - a.col0);
        samples.push_back(sample_lines(to_rect(tensor, a), line_bytes, kSampleRows, kSampleCols));
      }
  }
  return cells;
}

namespace {

// What was run and its totals.
void add_run_summary(json& v, const ExperimentPlan& plan, const ExperimentPoint& p, const SimResult& r,
                     const std::string& label) {
  v["label"] = label;
  v["file"] = plan.file;
  v["experiment"] = plan.name;
  v["point"] = p.label;
  v["arch"] = p.arch.name;
  v["num_sms"] = r.num_sms;
  v["l2_bytes"] = p.arch.l2.bytes;
  v["sector_bytes"] = p.arch.l2.sector_bytes;
  v["duration_ns"] = ns(r.duration);
  v["total"] = {{"dram_read_bytes", r.total.dram_read_bytes},
                {"dram_write_bytes", r.total.dram_write_bytes},
                {"sectors", r.total.read_sectors + r.total.write_sectors},
                {"hit_sectors", r.total.read_hit_sectors + r.total.write_hit_sectors},
                {"hit_rate", r.total.hit_rate()}};
}

// Each tensor: its shape, its role in the workload, and the cells the residency map cuts it into.
json tensors_json(const Workload& w, const std::vector<TensorCells>& cells) {
  const TensorUse use = tensor_use(w);
  json tensors = json::array();
  for (std::size_t t = 0; t < w.tensors.size(); ++t) {
    const Tensor& tensor = w.tensors[t];
    const TensorCells& c = cells[t];
    tensors.push_back({{"name", tensor.name},
                       {"rows", tensor.rows},
                       {"cols", tensor.cols},
                       {"role", use.read[t] ? (use.written[t] ? "intermediate" : "input") : "output"},
                       {"cell_rows", c.cell_rows},
                       {"cell_cols", c.cell_cols},
                       {"grid_rows", c.grid_rows},
                       {"grid_cols", c.grid_cols},
                       {"cell_first", c.first}});
  }
  return tensors;
}

// Each kernel: its grid, occupancy and span, and the tensors (by index) it reads and writes.
json kernels_json(const Workload& w, const SimResult& r) {
  json kernels = json::array();
  for (std::size_t k = 0; k < w.kernels.size(); ++k) {
    const Kernel& kernel = w.kernels[k];
    const KernelStats& ks = r.kernels[k];
    std::vector<bool> reads(w.tensors.size()), writes(w.tensors.size());
    for_each_access(kernel, [&](const TileAccess& a) { (a.kind == AccessKind::load ? reads : writes)[a.tensor] = true; });
    json rj = json::array(), wj = json::array();
    for (std::size_t t = 0; t < w.tensors.size(); ++t) {
      if (reads[t]) rj.push_back(t);
      if (writes[t]) wj.push_back(t);
    }
    kernels.push_back({{"name", kernel.name},
                       {"grid_m", kernel.grid_m},
                       {"grid_n", kernel.grid_n},
                       {"grid_z", kernel.grid_z},
                       {"blocks_per_sm", ks.blocks_per_sm},
                       {"waves", launch_waves(ks, r.num_sms).waves},
                       {"start_ns", ns(ks.start)},
                       {"end_ns", ns(ks.end)},
                       {"reads", rj},
                       {"writes", wj}});
  }
  return kernels;
}

// One entry per dispatch, as columns (the page's arrays): "blocks" holds the dispatched block
// (its tile, SM, times and own traffic), "steps" the run's running totals at that moment.
void add_dispatches(json& v, const Workload& w, const SimResult& r, const Recorder& rec, std::uint32_t sector_bytes) {
  // Block records by (kernel, dispatch position): their start, end and wait.
  std::map<std::pair<std::uint32_t, std::uint32_t>, const BlockRecord*> record;
  for (const BlockRecord& b : r.blocks) record[{b.kernel, b.position}] = &b;
  json blocks = columns({"kernel", "block", "tile_m", "tile_n", "tile_z", "position", "sm", "start_ns", "end_ns",
                         "wait_ns", "sectors", "hit_sectors", "dram_read_bytes", "loads"});
  json steps = columns({"t_ns", "dram_read_bytes", "dram_write_bytes", "sectors", "hit_sectors"});
  for (const Recorder::Step& s : rec.steps()) {
    const Block& b = w.kernels[s.kernel].blocks[s.block];
    const BlockRecord& br = *record.at({s.kernel, s.position});
    const std::pair<const char*, json> cols[] = {
        {"kernel", s.kernel},         {"block", s.block},          {"tile_m", b.tile_m},
        {"tile_n", b.tile_n},         {"tile_z", b.tile_z},        {"position", s.position},
        {"sm", s.sm},                 {"start_ns", ns(br.start)},  {"end_ns", ns(br.end)},
        {"wait_ns", ns(br.wait)},     {"sectors", s.sectors},      {"hit_sectors", s.hit_sectors},
        {"dram_read_bytes", s.dram_read_sectors * sector_bytes}, {"loads", s.loads}};
    for (const auto& [name, value] : cols) blocks[name].push_back(value);
    steps["t_ns"].push_back(ns(s.t));
    steps["dram_read_bytes"].push_back(s.cum.dram_read_bytes);
    steps["dram_write_bytes"].push_back(s.cum.dram_write_bytes);
    steps["sectors"].push_back(s.cum.read_sectors + s.cum.write_sectors);
    steps["hit_sectors"].push_back(s.cum.read_hit_sectors + s.cum.write_hit_sectors);
  }
  v["blocks"] = std::move(blocks);
  v["steps"] = std::move(steps);
}

}  // namespace

json explore_view(const ExperimentPlan& plan, std::size_t point, const std::string& label) {
  const ExperimentPoint p = plan.build(point);
  const Workload& w = *p.workload;
  // The page records every step; a kernel too large to hold its programs would not fit in it.
  for (const Kernel& k : w.kernels)
    if (k.lazy())
      throw InputError("explore: kernel '" + k.name + "' has " + std::to_string(k.num_blocks()) + " blocks and " +
                       std::to_string(k.mma_steps()) +
                       " k-steps, too many for a page that records every step; explore a smaller shape");
  const std::uint32_t sector_bytes = p.arch.l2.sector_bytes;
  std::vector<std::vector<Addr>> samples;
  const std::vector<TensorCells> cells = cut_cells(w, p.arch.l2.line_bytes, samples);

  Recorder rec(w, samples, sector_bytes);
  SimOptions opt = p.options;
  opt.observer = &rec;
  const SimResult r = simulate(w, p.arch, opt);

  json v;
  add_run_summary(v, plan, p, r, label);
  v["tensors"] = tensors_json(w, cells);
  v["kernels"] = kernels_json(w, r);
  add_dispatches(v, w, r, rec, sector_bytes);
  v["residency"] = {{"cells", samples.size()},
                    {"snapshot_steps", rec.snapshot_steps()},
                    {"data", base64_encode(rec.residency().data(), rec.residency().size())}};
  add_manual(v, plan, point, p, samples);  // manual_data.cpp
  return v;
}

json explore_data(std::vector<json> views) {
  return {{"format", "tilesim-explore"}, {"version", 1}, {"generator", std::string("tilesim ") + TILESIM_VERSION},
          {"views", std::move(views)}};
}

}  // namespace tilesim::explore
