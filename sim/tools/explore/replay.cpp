#include "sim/tools/explore/replay.hpp"

#include <algorithm>

namespace tilesim::explore {

Replay::Replay(const L2Spec& spec, std::uint64_t seed, std::uint32_t partition)
    : l2_(spec, seed, "arch"), partition_(partition) {}

void Replay::run(const ReplayRequest* requests, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const L2AccessResult r = l2_.access(requests[i].rect, partition_, requests[i].write);
    totals_.sectors += r.sectors;
    totals_.hit_sectors += r.hit_sectors;
    totals_.dram_read_sectors += r.dram_read_sectors;
    totals_.dram_write_sectors += r.dram_write_sectors;
  }
}

void Replay::flush() { totals_.dram_write_sectors += l2_.flush_dirty(); }

double resident_fraction(const L2Cache& l2, const Addr* lines, std::size_t count) {
  if (count == 0) return 0.0;
  std::size_t held = 0;
  const std::uint32_t parts = l2.geometry().partitions;
  for (std::size_t i = 0; i < count; ++i)
    for (std::uint32_t p = 0; p < parts; ++p)
      if (l2.probe(lines[i], p).present) {
        ++held;
        break;
      }
  return static_cast<double>(held) / static_cast<double>(count);
}

double Replay::resident_fraction(const Addr* lines, std::size_t count) const {
  return explore::resident_fraction(l2_, lines, count);
}

namespace {
constexpr std::uint32_t kMagic = 0x50525354u, kVersion = 1;
}  // namespace

std::vector<std::uint32_t> pack_program(const ReplayProgram& p) {
  std::vector<std::uint32_t> w{kMagic,
                               kVersion,
                               static_cast<std::uint32_t>(p.block_first.empty() ? 0 : p.block_first.size() - 1),
                               static_cast<std::uint32_t>(p.requests.size()),
                               static_cast<std::uint32_t>(p.cell_first.empty() ? 0 : p.cell_first.size() - 1),
                               static_cast<std::uint32_t>(p.samples.size())};
  const auto u64 = [&](std::uint64_t v) {
    w.push_back(static_cast<std::uint32_t>(v));
    w.push_back(static_cast<std::uint32_t>(v >> 32));
  };
  w.insert(w.end(), p.block_first.begin(), p.block_first.end());
  for (const ReplayRequest& r : p.requests) {
    u64(r.rect.start);
    u64(r.rect.pitch);
    u64(r.rect.row_bytes);
    w.push_back(r.rect.rows);
    w.push_back(r.write ? 1u : 0u);
  }
  w.insert(w.end(), p.cell_first.begin(), p.cell_first.end());
  for (Addr a : p.samples) u64(a);
  return w;
}

bool unpack_program(const std::uint32_t* w, std::size_t n, ReplayProgram& out) {
  if (n < 6 || w[0] != kMagic || w[1] != kVersion) return false;
  const std::uint64_t blocks = w[2], requests = w[3], cells = w[4], samples = w[5];
  const std::uint64_t need = 6 + (blocks + 1) + 8 * requests + (cells + 1) + 2 * samples;
  if (n != need) return false;
  const std::uint32_t* at = w + 6;
  const auto u64 = [&]() {
    const std::uint64_t v = at[0] | static_cast<std::uint64_t>(at[1]) << 32;
    at += 2;
    return v;
  };
  out = ReplayProgram{};
  out.block_first.assign(at, at + blocks + 1);
  at += blocks + 1;
  out.requests.resize(requests);
  for (ReplayRequest& r : out.requests) {
    r.rect.start = u64();
    r.rect.pitch = u64();
    r.rect.row_bytes = u64();
    r.rect.rows = *at++;
    r.write = *at++ != 0;
  }
  out.cell_first.assign(at, at + cells + 1);
  at += cells + 1;
  out.samples.resize(samples);
  for (Addr& a : out.samples) a = u64();
  // Ranges must be monotone and inside the arrays.
  for (std::size_t i = 0; i + 1 < out.block_first.size(); ++i)
    if (out.block_first[i] > out.block_first[i + 1]) return false;
  for (std::size_t i = 0; i + 1 < out.cell_first.size(); ++i)
    if (out.cell_first[i] > out.cell_first[i + 1]) return false;
  return out.block_first.back() <= requests && out.cell_first.back() <= samples && out.block_first.front() == 0 &&
         out.cell_first.front() == 0;
}

std::vector<Addr> sample_lines(const ByteRect& r, std::uint32_t line_bytes, std::uint32_t max_rows,
                               std::uint32_t max_cols) {
  std::vector<Addr> out;
  if (r.rows == 0 || r.row_bytes == 0) return out;
  const std::uint32_t nr = std::min(max_rows, r.rows);
  for (std::uint32_t i = 0; i < nr; ++i) {
    const std::uint64_t row = nr == 1 ? 0 : static_cast<std::uint64_t>(i) * (r.rows - 1) / (nr - 1);
    const Addr begin = r.start + row * r.pitch, end = begin + r.row_bytes;
    const Addr first = begin / line_bytes, last = (end - 1) / line_bytes;
    const std::uint64_t lines = last - first + 1;
    const std::uint64_t nc = std::min<std::uint64_t>(max_cols, lines);
    for (std::uint64_t j = 0; j < nc; ++j) {
      const std::uint64_t at = nc == 1 ? 0 : j * (lines - 1) / (nc - 1);
      out.push_back((first + at) * line_bytes);
    }
  }
  return out;
}

}  // namespace tilesim::explore
