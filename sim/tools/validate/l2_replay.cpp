#include "sim/tools/validate/l2_replay.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <tuple>

#include "common/error.hpp"
#include "common/text.hpp"
#include "models/cache/l2.hpp"
#include "sim/core/tile_rect.hpp"
#include "sim/tools/validate/measured.hpp"

namespace tilesim {

namespace {

// The header's columns this reader knows; -1 where absent.
struct Columns {
  int case_name = -1, kernel = -1, block = -1, pid_m = -1, pid_n = -1, pid_z = -1, sm = -1, start = -1, end = -1;
};

Columns find_columns(const std::vector<std::string>& header, const std::string& where) {
  Columns c;
  const std::pair<const char*, int*> names[] = {{"case", &c.case_name}, {"kernel_index", &c.kernel}, {"block", &c.block},
                                                {"pid_m", &c.pid_m},    {"pid_n", &c.pid_n},          {"pid_z", &c.pid_z},
                                                {"sm", &c.sm},          {"start_ns", &c.start},       {"end_ns", &c.end}};
  for (std::size_t i = 0; i < header.size(); ++i)
    for (const auto& [name, slot] : names)
      if (trim(header[i]) == name) *slot = static_cast<int>(i);
  if (c.sm < 0 || c.start < 0 || c.end < 0)
    throw InputError(where + ": expected a header with the columns sm, start_ns, end_ns and block (or pid_m, pid_n)");
  if (c.block < 0 && (c.pid_m < 0 || c.pid_n < 0))
    throw InputError(where + ": expected a column `block`, or `pid_m` and `pid_n`, to name each row's block");
  return c;
}

double number_cell(const std::vector<std::string>& row, int col, const std::string& where, const char* what) {
  const std::string s = col < static_cast<int>(row.size()) ? trim(row[col]) : std::string();
  char* end = nullptr;
  const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  if (!std::isfinite(v) || end == nullptr || *end != '\0' || v < 0)
    throw InputError(where + ": " + what + ": expected a number >= 0, got '" + s + "'");
  return v;
}

std::uint32_t index_cell(const std::vector<std::string>& row, int col, std::uint64_t limit, const std::string& where,
                         const char* what) {
  const double v = number_cell(row, col, where, what);
  if (v != std::floor(v) || v >= static_cast<double>(limit))
    throw InputError(where + ": " + what + ": expected an integer below " + std::to_string(limit) + ", got " +
                     trim(row[col]));
  return static_cast<std::uint32_t>(v);
}

// The block a row names: `block` directly, or its output tile.
std::uint32_t row_block(const std::vector<std::string>& row, const Columns& c, const Kernel& k, const std::string& where) {
  if (c.block >= 0) return index_cell(row, c.block, k.num_blocks(), where, "block");
  const std::uint32_t tm = index_cell(row, c.pid_m, k.grid_m, where, "pid_m");
  const std::uint32_t tn = index_cell(row, c.pid_n, k.grid_n, where, "pid_n");
  const std::uint32_t tz = c.pid_z >= 0 ? index_cell(row, c.pid_z, k.grid_z, where, "pid_z") : 0;
  const std::uint64_t b = (std::uint64_t{tz} * k.grid_m + tm) * k.grid_n + tn;
  if (b >= k.num_blocks() || k.blocks[b].tile_m != tm || k.blocks[b].tile_n != tn)
    throw InputError(where + ": kernel '" + k.name + "' has no block for tile (" + std::to_string(tm) + ", " +
                     std::to_string(tn) + ") (a persistent or split kernel: name its blocks with the column `block`)");
  return static_cast<std::uint32_t>(b);
}

// When step i of a block of n steps issues its requests: the block's steps run evenly over its
// span, the last (the epilogue's stores) at its end, and a main loop `stages` deep issues step
// i's loads when step i - stages has finished with its buffer (the first `stages` at the start).
double issue_ns(const TimelineBlock& b, std::uint32_t i, std::uint32_t n, std::uint32_t stages) {
  if (n <= 1) return b.start_ns;
  const std::uint32_t ahead = std::max<std::uint32_t>(stages, 1) - 1;
  const std::uint32_t done = i + 1 == n ? n - 1 : (i > ahead ? i - ahead : 0);
  return b.start_ns + (b.end_ns - b.start_ns) * done / (n - 1);
}

}  // namespace

std::vector<TimelineBlock> read_block_timeline(const std::string& path, const Workload& w, const std::string& case_name) {
  const CsvFile f = read_csv(path);
  const Columns c = find_columns(f.rows[0], at_line(f, 0));
  if (!case_name.empty() && c.case_name < 0)
    throw InputError(at_line(f, 0) + ": --case " + case_name + " given, but the header has no column `case`");
  std::vector<TimelineBlock> out;
  std::vector<std::vector<std::size_t>> seen(w.kernels.size());  // line that named each block, 0 = none
  for (std::size_t k = 0; k < w.kernels.size(); ++k) seen[k].assign(w.kernels[k].num_blocks(), 0);
  for (std::size_t r = 1; r < f.rows.size(); ++r) {
    const std::vector<std::string>& row = f.rows[r];
    const std::string where = at_line(f, r);
    if (!case_name.empty() && (c.case_name >= static_cast<int>(row.size()) || trim(row[c.case_name]) != case_name))
      continue;
    TimelineBlock b;
    b.kernel = c.kernel >= 0 ? index_cell(row, c.kernel, w.kernels.size(), where, "kernel_index") : 0;
    const Kernel& k = w.kernels[b.kernel];
    b.block = row_block(row, c, k, where);
    b.sm = index_cell(row, c.sm, 1u << 16, where, "sm");
    b.start_ns = number_cell(row, c.start, where, "start_ns");
    b.end_ns = number_cell(row, c.end, where, "end_ns");
    if (b.end_ns < b.start_ns) throw InputError(where + ": end_ns is before start_ns");
    std::size_t& prev = seen[b.kernel][b.block];
    if (prev)
      throw InputError(where + ": block " + std::to_string(b.block) + " of kernel '" + k.name +
                       "' appears twice (first on line " + std::to_string(prev) + ")");
    prev = f.lines[r];
    out.push_back(b);
  }
  if (out.empty())
    throw InputError(path + ": no blocks" + (case_name.empty() ? std::string() : " of case '" + case_name + "'"));
  for (std::size_t k = 0; k < seen.size(); ++k) {
    const auto missing = std::find(seen[k].begin(), seen[k].end(), 0);
    const bool any = std::any_of(seen[k].begin(), seen[k].end(), [](std::size_t x) { return x != 0; });
    if (any && missing != seen[k].end())
      throw InputError(path + ": kernel '" + w.kernels[k].name + "' lacks block " +
                       std::to_string(missing - seen[k].begin()) + " (every block of a kernel in the timeline must be in it)");
  }
  return out;
}

std::vector<L2ReplayKernel> replay_l2(const Workload& w, const ArchSpec& arch, const std::vector<TimelineBlock>& blocks) {
  std::vector<L2ReplayKernel> out(w.kernels.size());
  for (std::size_t k = 0; k < w.kernels.size(); ++k) out[k].name = w.kernels[k].name;
  for (const TimelineBlock& b : blocks)
    if (b.sm >= arch.sm.count)
      throw InputError("timeline: SM " + std::to_string(b.sm) + " does not exist on " + arch.name + " (" +
                       std::to_string(arch.sm.count) + " SMs)");
  L2Cache l2(arch.l2, 1);
  // One program at a time per block would regenerate lazy kernels' programs at every step;
  // the programs of the blocks in flight are kept instead (a timeline's blocks are few).
  struct Live {
    ProgramBuffer buf;
    ProgramView view;
  };
  std::vector<Live> live(blocks.size());
  // (time, kernel, block, step, index into blocks): the earliest request first, ties in order.
  using Event = std::tuple<double, std::uint32_t, std::uint32_t, std::uint32_t, std::size_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue;
  for (std::size_t i = 0; i < blocks.size(); ++i) queue.emplace(blocks[i].start_ns, blocks[i].kernel, blocks[i].block, 0, i);
  while (!queue.empty()) {
    const auto [t, kernel, block, step, i] = queue.top();
    queue.pop();
    const Kernel& k = w.kernels[kernel];
    Live& l = live[i];
    if (step == 0) {
      l.view = k.program(block, l.buf);
      ++out[kernel].blocks;
    }
    const TimelineBlock& b = blocks[i];
    const std::uint32_t part = arch.l2.partitions == 1 ? 0 : arch.sm.sm_half[b.sm];
    L2ReplayKernel& r = out[kernel];
    const Step& st = l.view.steps[step];
    for (std::uint32_t a = 0; a < st.num_accesses; ++a) {
      const TileAccess& acc = l.view.accesses[st.first_access + a];
      if (acc.kind == AccessKind::multicast) continue;  // a partner's slice: not looked up
      const bool write = acc.kind == AccessKind::store;
      const L2AccessResult res = l2.access(to_rect(w.tensors[acc.tensor], acc), part, write, k.l2_prefetch_bytes);
      (write ? r.write_sectors : r.read_sectors) += res.sectors;
      if (!write) r.read_hit_sectors += res.hit_sectors;
      r.dram_read_bytes += res.dram_read_sectors * arch.l2.sector_bytes;
      r.fabric_sectors += res.fabric_sectors;
      r.dram_write_bytes += res.dram_write_sectors * arch.l2.sector_bytes;
    }
    if (step + 1 < l.view.num_steps) {
      queue.emplace(issue_ns(b, step + 1, l.view.num_steps, k.stages), kernel, block, step + 1, i);
    } else {
      l.buf = ProgramBuffer();  // done: its program's memory goes back
    }
  }
  return out;
}

}  // namespace tilesim
