#include "models/cache/l2.hpp"

#include <algorithm>
#include <bit>

#include "common/error.hpp"
#include "common/text.hpp"
#include "models/cache/l2_access.hpp"

namespace tilesim {

L2AccessResult& L2AccessResult::operator+=(const L2AccessResult& o) {
  sectors += o.sectors;
  hit_sectors += o.hit_sectors;
  near_copy_hit_sectors += o.near_copy_hit_sectors;
  fabric_sectors += o.fabric_sectors;
  fill_hit_sectors += o.fill_hit_sectors;
  dram_read_sectors += o.dram_read_sectors;
  dram_write_sectors += o.dram_write_sectors;
  partition_sectors[0] += o.partition_sectors[0];
  partition_sectors[1] += o.partition_sectors[1];
  return *this;
}

std::uint64_t L2Cache::set_record_bytes(std::uint32_t ways) {
  return round_up<std::uint64_t>(ways * 7ull + 16, 64);  // +16: SSE2 reads past the tags
}

std::uint64_t L2Cache::arena_bytes(const L2Spec& spec) {
  const std::uint64_t sets = spec.bytes / (static_cast<std::uint64_t>(spec.line_bytes) * spec.ways);  // all partitions
  return sets * set_record_bytes(spec.ways) + 64;  // +64: aligning the records to a cache line
}

L2Cache::L2Cache(const L2Spec& spec, std::uint64_t seed, const std::string& origin) : impl_(std::make_unique<Impl>()) {
  geo_.partitions = spec.partitions;
  geo_.ways = spec.ways;
  geo_.sets = static_cast<std::uint32_t>(spec.bytes / (static_cast<std::uint64_t>(spec.line_bytes) * spec.ways * spec.partitions));
  geo_.line_shift = static_cast<std::uint32_t>(std::countr_zero(spec.line_bytes));
  geo_.sector_shift = static_cast<std::uint32_t>(std::countr_zero(spec.sector_bytes));
  geo_.sectors_per_line = spec.line_bytes / spec.sector_bytes;
  geo_.full_mask = static_cast<std::uint8_t>((1u << geo_.sectors_per_line) - 1);
  if (geo_.sets == 0) throw_input_error(origin + ": l2: fewer lines than ways x partitions");

  // The arch loader checked both names; this guards other callers (the explorer's replay).
  const std::size_t hash = HashPolicies::index_of(spec.hash);
  if (hash == HashPolicies::size)
    throw_input_error(origin + ": l2.hash: unknown hash '" + spec.hash + "' (expected one of: " + join(hash_names()) + ")");
  impl_->hash = HashPolicies::make(hash, geo_);
  const std::size_t repl = ReplacementPolicies::index_of(spec.replacement);
  if (repl == ReplacementPolicies::size)
    throw_input_error(origin + ": l2.replacement: unknown policy '" + spec.replacement + "' (expected one of: " +
                      join(replacement_names()) + ")");
  for (std::uint32_t p = 0; p < geo_.partitions; ++p)
    impl_->repl.push_back(ReplacementPolicies::make(repl, std::uint64_t{seed + p}));
  impl_->far_copy = spec.far_copy && geo_.partitions == 2;
  impl_->fill_bytes = spec.fill_bytes;
  for (std::uint32_t k = 0; k < impl_->grow.size(); ++k) {
    const std::uint32_t chunk = 1u << k, ones = (1u << chunk) - 1;
    for (std::uint32_t mask = 0; mask < 256; ++mask) {
      std::uint32_t out = 0;
      for (std::uint32_t s = 0; s < 8; s += chunk)
        if (mask >> s & ones) out |= ones << s;
      impl_->grow[k][mask] = static_cast<std::uint8_t>(out & geo_.full_mask);
    }
  }
  Impl& m = *impl_;
  m.valid_off = geo_.ways * 4;
  m.dirty_off = geo_.ways * 5;
  m.meta_off = geo_.ways * 6;
  m.set_stride = set_record_bytes(geo_.ways);
  m.num_sets = static_cast<std::uint64_t>(geo_.partitions) * geo_.sets;
  // The access loop locates a set record by a 32-bit offset within its partition (RectMemo).
  if (m.set_stride * geo_.sets > 0xffffffffull)
    throw_input_error(origin + ": l2: a partition's set records exceed 4 GiB of host memory");
  m.arena.raw = std::make_unique<std::uint8_t[]>(m.num_sets * m.set_stride + 64);
  m.arena.data = m.arena.raw.get() + (64 - reinterpret_cast<std::uintptr_t>(m.arena.raw.get()) % 64) % 64;
  invalidate_all();
}

L2Cache::~L2Cache() = default;

L2AccessResult L2Cache::access(const ByteRect& rect, std::uint32_t requester_partition, bool write,
                              std::uint32_t fill_bytes) {
  L2AccessResult r;
  if (rect.rows == 0 || rect.row_bytes == 0) return r;
  const std::uint32_t req = requester_partition % geo_.partitions;
  // The fill chunk: the cache's own, widened by the load's prefetch size, at most a line.
  const std::uint32_t chunk_sectors = fill_chunk_bytes(fill_bytes) >> geo_.sector_shift;
  const std::uint8_t* const grow =
      chunk_sectors > 1 ? impl_->grow[static_cast<std::size_t>(std::countr_zero(chunk_sectors))].data() : nullptr;
  // Partitions hold their policy state in separate variants; the loop needs contiguous typed
  // state, so copy it out and back (two small structs) around the access.
  std::visit(
      [&](auto first) {
        using Repl = decltype(first);
        std::array<Repl, 2> st{std::get<Repl>(impl_->repl[0]),
                               std::get<Repl>(impl_->repl[geo_.partitions - 1])};
        std::visit(
            [&](const auto& hash) {
              using Hash = std::decay_t<decltype(hash)>;
              L2Access<Repl, Hash> acc(*this, *impl_, st.data(), hash, geo_, grow);
              acc.rect(rect, req, write);
              r = acc.r;
            },
            impl_->hash);
        for (std::uint32_t p = 0; p < geo_.partitions; ++p) impl_->repl[p] = st[p];
      },
      impl_->repl[0]);
  return r;
}

std::uint32_t L2Cache::fill_chunk_bytes(std::uint32_t prefetch_bytes) const {
  const std::uint32_t line = geo_.sectors_per_line << geo_.sector_shift;
  return std::clamp(std::max(prefetch_bytes, impl_->fill_bytes), std::uint32_t{1} << geo_.sector_shift, line);
}

L2AccessResult L2Cache::access_line(Addr addr, std::uint8_t sector_mask, std::uint32_t requester_partition, bool write) {
  // A one-line rectangle covering exactly the sectors of the mask, issued sector run by run.
  L2AccessResult r;
  const std::uint64_t line_base = (addr >> geo_.line_shift) << geo_.line_shift;
  for (std::uint32_t s = 0; s < geo_.sectors_per_line; ++s) {
    if (!(sector_mask >> s & 1)) continue;
    std::uint32_t e = s;
    while (e + 1 < geo_.sectors_per_line && (sector_mask >> (e + 1) & 1)) ++e;
    ByteRect b{line_base + (static_cast<std::uint64_t>(s) << geo_.sector_shift), 0,
               static_cast<std::uint64_t>(e - s + 1) << geo_.sector_shift, 1};
    r += access(b, requester_partition, write);
    s = e;
  }
  return r;
}

void L2Cache::set_regions(std::vector<Addr> region_starts) {
  region_starts_ = std::move(region_starts);
  region_writebacks_.assign(region_starts_.size() + 1, 0);
}

void L2Cache::count_writeback(std::uint32_t line, std::uint32_t sectors) {
  if (region_writebacks_.empty()) region_writebacks_.assign(1, 0);
  const Addr a = static_cast<Addr>(line) << geo_.line_shift;
  // Region i covers [starts[i], starts[i+1]); addresses before the first go to the last slot.
  auto it = std::upper_bound(region_starts_.begin(), region_starts_.end(), a);
  const std::size_t idx = it == region_starts_.begin() ? region_writebacks_.size() - 1
                                                       : static_cast<std::size_t>(it - region_starts_.begin() - 1);
  region_writebacks_[idx] += sectors;
}

std::uint64_t L2Cache::flush_dirty() {
  std::uint64_t total = 0;
  Impl& m = *impl_;
  for (std::uint64_t set = 0; set < m.num_sets; ++set) {
    std::uint8_t* p = m.arena.data + set * m.set_stride;
    for (std::uint32_t w = 0; w < geo_.ways; ++w) {
      if (const std::uint8_t d = m.dirty(p)[w]) {
        total += pop8(d);
        count_writeback(Impl::tags(p)[w] - 1, pop8(d));
        m.dirty(p)[w] = 0;
      }
    }
  }
  return total;
}

void L2Cache::invalidate_all() {
  Impl& m = *impl_;
  std::fill(m.arena.data, m.arena.data + m.num_sets * m.set_stride, 0);
  std::visit(
      [&](auto& policy) {
        for (std::uint64_t set = 0; set < m.num_sets; ++set) policy.init(m.meta(m.arena.data + set * m.set_stride), geo_.ways);
      },
      m.repl[0]);
}

void L2Cache::write_flush(Addr base, std::uint64_t bytes, double dirty_fraction) {
  // Whole rows of 1 MiB (line aligned) keep the walk in the batched rectangle loop.
  constexpr std::uint64_t kRow = 1 << 20;
  const Addr start = base & ~static_cast<Addr>(kRow - 1);
  for (std::uint64_t done = 0; done < bytes; done += kRow * 64) {
    const auto rows = static_cast<std::uint32_t>(std::min<std::uint64_t>(64, (bytes - done + kRow - 1) / kRow));
    access(ByteRect{start + done, kRow, kRow, rows}, 0, true);
  }
  const std::uint64_t first = start >> geo_.line_shift, end = (start + bytes + kRow - 1) >> geo_.line_shift;
  const auto keep = static_cast<std::uint64_t>(dirty_fraction * 4294967296.0);
  Impl& m = *impl_;
  for (std::uint64_t set = 0; set < m.num_sets; ++set) {
    std::uint8_t* p = m.arena.data + set * m.set_stride;
    for (std::uint32_t w = 0; w < geo_.ways; ++w) {
      const std::uint64_t line = Impl::tags(p)[w] - std::uint64_t{1};
      if (!m.dirty(p)[w] || line < first || line >= end) continue;
      // A 32-bit mix of the line number (splitmix64's finaliser): which lines stay dirty
      // depends on nothing but the line, so every run leaves the same ones.
      std::uint64_t h = line + 0x9e3779b97f4a7c15ull;
      h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
      h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
      if (((h ^ (h >> 31)) & 0xffffffffull) >= keep) m.dirty(p)[w] = 0;
    }
  }
}

std::uint32_t L2Cache::home_partition(Addr addr) const {
  const auto line = static_cast<std::uint32_t>(addr >> geo_.line_shift);
  return std::visit([&](const auto& h) { return h.slot(line).partition; }, impl_->hash);
}

LineProbe L2Cache::probe(Addr addr, std::uint32_t partition) const {
  const auto line = static_cast<std::uint32_t>(addr >> geo_.line_shift);
  const SetSlot slot = std::visit([&](const auto& h) { return h.slot(line); }, impl_->hash);
  std::uint8_t* p = impl_->set_ptr(partition, slot.set, geo_.sets);
  for (std::uint32_t w = 0; w < geo_.ways; ++w)
    if (Impl::tags(p)[w] == line + 1) return {true, impl_->valid(p)[w], impl_->dirty(p)[w]};
  return {};
}

}  // namespace tilesim
