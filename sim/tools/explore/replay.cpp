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

void Replay::run_block(const ReplayProgram& p, std::uint32_t b) {
  for_each_request(p, b, [&](const ReplayRequest& r) { run(&r, 1); });
}

namespace {

constexpr std::uint32_t kMagic = 0x50525354u, kVersion = 2;
// Longest period looked for: a step's loads (A, B, a gate's second B, a concatenated A's
// second half) and a little room; a longer period only packs less tightly.
constexpr std::uint32_t kMaxPeriod = 8;
// Most requests one block may expand to in a program read from the page (a bound on the work
// of one run_block, far above any real block: a 64k-deep K loop).
constexpr std::uint64_t kMaxBlockRequests = 1u << 24;

bool same_shape(const ReplayRequest& a, const ReplayRequest& b) {
  return a.rect.pitch == b.rect.pitch && a.rect.row_bytes == b.rect.row_bytes && a.rect.rows == b.rect.rows &&
         a.write == b.write;
}

// How many repetitions of the period-p pattern at r[i] there are (1: none beyond itself).
std::uint32_t repeats(const std::vector<ReplayRequest>& r, std::size_t i, std::uint32_t p) {
  std::uint32_t n = 1;
  while (i + (n + 1) * std::size_t{p} <= r.size()) {
    for (std::uint32_t j = 0; j < p; ++j) {
      const ReplayRequest &base = r[i + j], &next = r[i + n * std::size_t{p} + j];
      const std::uint64_t delta = r[i + p + j].rect.start - base.rect.start;
      if (!same_shape(base, next) || next.rect.start != base.rect.start + n * delta) return n;
    }
    ++n;
  }
  return n;
}

}  // namespace

void append_block(ReplayProgram& p, const std::vector<ReplayRequest>& r) {
  std::size_t i = 0;
  while (i < r.size()) {
    // The period that covers the most requests from here (the shortest among equals).
    std::uint32_t best_p = 1, best_n = 1;
    for (std::uint32_t period = 1; period <= kMaxPeriod && i + 2 * std::size_t{period} <= r.size(); ++period) {
      const std::uint32_t n = repeats(r, i, period);
      if (n > 1 && std::uint64_t{n} * period > std::uint64_t{best_n} * best_p) best_p = period, best_n = n;
    }
    p.loops.push_back({static_cast<std::uint32_t>(p.requests.size()), best_p, best_n});
    for (std::uint32_t j = 0; j < best_p; ++j) {
      p.requests.push_back(r[i + j]);
      p.deltas.push_back(best_n > 1 ? r[i + best_p + j].rect.start - r[i + j].rect.start : 0);
    }
    i += std::size_t{best_p} * best_n;
  }
  p.block_first.push_back(static_cast<std::uint32_t>(p.loops.size()));
}

std::vector<ReplayRequest> block_requests(const ReplayProgram& p, std::uint32_t b) {
  std::vector<ReplayRequest> out;
  for_each_request(p, b, [&](const ReplayRequest& r) { out.push_back(r); });
  return out;
}

std::vector<std::uint32_t> pack_program(const ReplayProgram& p) {
  std::vector<std::uint32_t> w{kMagic,
                               kVersion,
                               p.blocks(),
                               static_cast<std::uint32_t>(p.loops.size()),
                               static_cast<std::uint32_t>(p.requests.size()),
                               p.cells(),
                               static_cast<std::uint32_t>(p.samples.size())};
  const auto u64 = [&](std::uint64_t v) {
    w.push_back(static_cast<std::uint32_t>(v));
    w.push_back(static_cast<std::uint32_t>(v >> 32));
  };
  w.insert(w.end(), p.block_first.begin(), p.block_first.end());
  for (const ReplayLoop& l : p.loops) w.insert(w.end(), {l.first, l.period, l.repeat});
  for (std::size_t i = 0; i < p.requests.size(); ++i) {
    const ReplayRequest& r = p.requests[i];
    u64(r.rect.start);
    u64(r.rect.pitch);
    u64(r.rect.row_bytes);
    w.push_back(r.rect.rows);
    w.push_back(r.write ? 1u : 0u);
    u64(p.deltas[i]);
  }
  w.insert(w.end(), p.cell_first.begin(), p.cell_first.end());
  for (Addr a : p.samples) u64(a);
  return w;
}

namespace {

// Ranges monotone from 0 and inside their arrays; loops inside the requests; no block that
// expands past kMaxBlockRequests.
bool well_formed(const ReplayProgram& p) {
  const auto monotone = [](const std::vector<std::uint32_t>& v, std::size_t limit) {
    for (std::size_t i = 0; i + 1 < v.size(); ++i)
      if (v[i] > v[i + 1]) return false;
    return v.front() == 0 && v.back() <= limit;
  };
  if (!monotone(p.block_first, p.loops.size()) || !monotone(p.cell_first, p.samples.size())) return false;
  for (const ReplayLoop& l : p.loops)
    if (l.period == 0 || l.repeat == 0 || std::uint64_t{l.first} + l.period > p.requests.size()) return false;
  for (std::uint32_t b = 0; b < p.blocks(); ++b) {
    std::uint64_t n = 0;
    for (std::uint32_t l = p.block_first[b]; l < p.block_first[b + 1]; ++l)
      n += std::uint64_t{p.loops[l].period} * p.loops[l].repeat;
    if (n > kMaxBlockRequests) return false;
  }
  return true;
}

}  // namespace

bool unpack_program(const std::uint32_t* w, std::size_t n, ReplayProgram& out) {
  if (n < 7 || w[0] != kMagic || w[1] != kVersion) return false;
  const std::uint64_t blocks = w[2], loops = w[3], requests = w[4], cells = w[5], samples = w[6];
  const std::uint64_t need = 7 + (blocks + 1) + 3 * loops + 10 * requests + (cells + 1) + 2 * samples;
  if (n != need) return false;
  const std::uint32_t* at = w + 7;
  const auto u64 = [&]() {
    const std::uint64_t v = at[0] | static_cast<std::uint64_t>(at[1]) << 32;
    at += 2;
    return v;
  };
  out = ReplayProgram{};
  out.block_first.assign(at, at + blocks + 1);
  at += blocks + 1;
  out.loops.resize(loops);
  for (ReplayLoop& l : out.loops) {
    l = {at[0], at[1], at[2]};
    at += 3;
  }
  out.requests.resize(requests);
  out.deltas.resize(requests);
  for (std::size_t i = 0; i < requests; ++i) {
    ReplayRequest& r = out.requests[i];
    r.rect.start = u64();
    r.rect.pitch = u64();
    r.rect.row_bytes = u64();
    r.rect.rows = *at++;
    r.write = *at++ != 0;
    out.deltas[i] = u64();
  }
  out.cell_first.assign(at, at + cells + 1);
  at += cells + 1;
  out.samples.resize(samples);
  for (Addr& a : out.samples) a = u64();
  return well_formed(out);
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
