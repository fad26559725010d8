#include "models/cache/l2.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <variant>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/error.hpp"
#include "models/cache/hash/modulo.hpp"
#include "models/cache/hash/xor_fold.hpp"
#include "models/cache/replacement/fifo.hpp"
#include "models/cache/replacement/lru.hpp"
#include "models/cache/replacement/random.hpp"
#include "models/cache/replacement/srrip.hpp"

namespace tilesim {

L2AccessResult& L2AccessResult::operator+=(const L2AccessResult& o) {
  sectors += o.sectors;
  hit_sectors += o.hit_sectors;
  near_copy_hit_sectors += o.near_copy_hit_sectors;
  fabric_sectors += o.fabric_sectors;
  dram_read_sectors += o.dram_read_sectors;
  dram_write_sectors += o.dram_write_sectors;
  partition_sectors[0] += o.partition_sectors[0];
  partition_sectors[1] += o.partition_sectors[1];
  return *this;
}

using ReplVariant = std::variant<LruPolicy, FifoPolicy, SrripPolicy, RandomPolicy>;
using HashVariant = std::variant<ModuloHash, XorFoldHash>;

// Population count of a sector mask (at most 8 sectors), without relying on a CPU flag.
constexpr std::array<std::uint8_t, 256> make_popcount_table() {
  std::array<std::uint8_t, 256> t{};
  for (int i = 0; i < 256; ++i) t[i] = static_cast<std::uint8_t>(std::popcount(static_cast<unsigned>(i)));
  return t;
}
constexpr std::array<std::uint8_t, 256> kPopcount = make_popcount_table();
inline std::uint32_t pop8(std::uint8_t m) { return kPopcount[m]; }

// Bit w of `hit` is set when way w holds `tag`, of `free` when way w is empty (tag 0).
// SSE2 (the x86-64 baseline) compares four ways per instruction; a set record is padded so
// reading a few bytes past the last tag stays inside it.
inline void match_ways(const std::uint32_t* tags, std::uint32_t tag, std::uint32_t ways, std::uint64_t& hit,
                       std::uint64_t& free) {
#if defined(__SSE2__)
  const __m128i want = _mm_set1_epi32(static_cast<int>(tag));
  const __m128i zero = _mm_setzero_si128();
  for (std::uint32_t w = 0; w < ways; w += 4) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + w));
    hit |= static_cast<std::uint64_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, want)))) << w;
    free |= static_cast<std::uint64_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, zero)))) << w;
  }
  const std::uint64_t valid_ways = ways >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << ways) - 1;
  hit &= valid_ways;
  free &= valid_ways;
#else
  for (std::uint32_t w = 0; w < ways; ++w) {
    hit |= static_cast<std::uint64_t>(tags[w] == tag) << w;
    free |= static_cast<std::uint64_t>(tags[w] == 0) << w;
  }
#endif
}

struct L2Cache::Impl {
  // One record per set, 64-byte aligned: the ways' tags, replacement words, valid and dirty
  // sector masks side by side, so a lookup touches one contiguous run of host cache lines
  // (three for 16 ways) that can be prefetched as a unit.
  struct Arena {
    std::unique_ptr<std::uint8_t[]> raw;
    std::uint8_t* data = nullptr;
  } arena;
  std::uint64_t set_stride = 0;  // bytes per set record
  std::uint32_t meta_off = 0, valid_off = 0, dirty_off = 0;
  std::uint64_t num_sets = 0;    // all partitions
  std::vector<ReplVariant> repl; // one per partition
  HashVariant hash{ModuloHash(CacheGeometry{})};
  bool far_copy = true;

  std::uint8_t* set_ptr(std::uint32_t part, std::uint32_t set, std::uint32_t sets) const {
    return arena.data + (static_cast<std::uint64_t>(part) * sets + set) * set_stride;
  }
  static std::uint32_t* tags(std::uint8_t* p) { return reinterpret_cast<std::uint32_t*>(p); }
  std::uint32_t* meta(std::uint8_t* p) const { return reinterpret_cast<std::uint32_t*>(p + meta_off); }
  std::uint8_t* valid(std::uint8_t* p) const { return p + valid_off; }
  std::uint8_t* dirty(std::uint8_t* p) const { return p + dirty_off; }
  void prefetch(std::uint8_t* p) const {
    for (std::uint64_t off = 0; off < set_stride; off += 64) __builtin_prefetch(p + off, 1, 3);
  }
};

// The access loop, one instantiation per (replacement, hash) pair.
template <class Repl, class Hash>
struct L2Access {
  L2Cache& c;
  L2Cache::Impl& s;
  Repl* repl;  // array, one per partition
  const Hash& hash;
  const CacheGeometry& g;
  L2AccessResult& r;

  // Makes `mask` valid in (part, set) for `line`; returns the part of mask that was already valid.
  std::uint8_t touch(std::uint32_t part, std::uint32_t set, std::uint32_t line, std::uint8_t mask, bool make_dirty) {
    std::uint8_t* p = s.set_ptr(part, set, g.sets);
    std::uint32_t* tags = L2Cache::Impl::tags(p);
    std::uint32_t* meta = s.meta(p);
    std::uint8_t* valid = s.valid(p);
    std::uint8_t* dirty = s.dirty(p);
    const std::uint32_t tag = line + 1;
    std::uint64_t hit_bits = 0, free_bits = 0;
    match_ways(tags, tag, g.ways, hit_bits, free_bits);
    if (hit_bits) {
      const auto w = static_cast<std::uint32_t>(std::countr_zero(hit_bits));
      const std::uint8_t prev = valid[w] & mask;
      valid[w] |= mask;
      if (make_dirty) dirty[w] |= mask;
      repl[part].on_hit(meta, w);
      return prev;
    }
    const std::uint32_t free_way = free_bits ? static_cast<std::uint32_t>(std::countr_zero(free_bits)) : g.ways;
    std::uint32_t w = free_way;
    if (w == g.ways) {
      w = repl[part].victim(meta, g.ways);
      if (const std::uint8_t d = dirty[w]) {
        r.dram_write_sectors += pop8(d);
        c.count_writeback(tags[w] - 1, pop8(d));
      }
    }
    tags[w] = tag;
    valid[w] = mask;
    dirty[w] = make_dirty ? mask : 0;
    repl[part].on_fill(meta, w);
    return 0;
  }

  void invalidate(std::uint32_t part, std::uint32_t set, std::uint32_t line) {
    std::uint8_t* p = s.set_ptr(part, set, g.sets);
    std::uint32_t* tags = L2Cache::Impl::tags(p);
    for (std::uint32_t w = 0; w < g.ways; ++w) {
      if (tags[w] == line + 1) {
        // Copies are never dirty (writes go to the home half), so nothing is written back.
        tags[w] = 0;
        s.valid(p)[w] = 0;
        s.dirty(p)[w] = 0;
        repl[part].on_invalidate(s.meta(p), w);
        return;
      }
    }
  }

  void line(std::uint32_t line, std::uint8_t mask, const SetSlot slot, std::uint32_t req, bool write) {
    const std::uint32_t home = slot.partition;
    const std::uint32_t n = pop8(mask);
    r.sectors += n;
    if (write) {
      r.hit_sectors += pop8(touch(home, slot.set, line, mask, true));
      r.partition_sectors[home] += n;
      if (home != req) r.fabric_sectors += n;
      if (g.partitions == 2 && s.far_copy) invalidate(1 - home, slot.set, line);
      return;
    }
    if (home == req || !s.far_copy) {
      const std::uint8_t hit = touch(home, slot.set, line, mask, false);
      const std::uint32_t h = pop8(hit);
      r.hit_sectors += h;
      r.dram_read_sectors += n - h;
      r.partition_sectors[home] += n;
      if (home != req) r.fabric_sectors += n;
      return;
    }
    // Far line: the near copy first, then the home half over the fabric; the rest is copied near.
    const std::uint8_t near_hit = touch(req, slot.set, line, mask, false);
    const std::uint32_t nh = pop8(near_hit);
    r.hit_sectors += nh;
    r.near_copy_hit_sectors += nh;
    r.partition_sectors[req] += n;
    const std::uint8_t rest = mask & static_cast<std::uint8_t>(~near_hit);
    if (!rest) return;
    const std::uint32_t nr = pop8(rest);
    const std::uint8_t home_hit = touch(home, slot.set, line, rest, false);
    const std::uint32_t hh = pop8(home_hit);
    r.hit_sectors += hh;
    r.dram_read_sectors += nr - hh;
    r.fabric_sectors += nr;
    r.partition_sectors[home] += nr;
  }

  // Walks the rectangle in batches: first the batch's sets are computed and prefetched, then
  // looked up, so the host's cache misses on the set records overlap instead of queueing.
  void rect(const ByteRect& b, std::uint32_t req, bool write) {
    constexpr std::uint32_t kBatch = 32;
    std::uint32_t lines[kBatch];
    std::uint8_t masks[kBatch];
    SetSlot slots[kBatch];
    std::uint32_t n = 0;
    const bool near_too = !write && s.far_copy;
    const auto flush = [&] {
      for (std::uint32_t i = 0; i < n; ++i) {
        slots[i] = hash.slot(lines[i]);
        s.prefetch(s.set_ptr(slots[i].partition, slots[i].set, g.sets));
        if (near_too && slots[i].partition != req) s.prefetch(s.set_ptr(req, slots[i].set, g.sets));
      }
      for (std::uint32_t i = 0; i < n; ++i) line(lines[i], masks[i], slots[i], req, write);
      n = 0;
    };
    const std::uint32_t spl_mask = g.sectors_per_line - 1;
    for (std::uint32_t row = 0; row < b.rows; ++row) {
      const Addr a = b.start + row * b.pitch;
      const Addr e = a + b.row_bytes - 1;  // inclusive
      const std::uint64_t first = a >> g.line_shift, last = e >> g.line_shift;
      for (std::uint64_t l = first; l <= last; ++l) {
        const std::uint32_t lo = l == first ? (a >> g.sector_shift) & spl_mask : 0;
        const std::uint32_t hi = l == last ? (e >> g.sector_shift) & spl_mask : spl_mask;
        lines[n] = static_cast<std::uint32_t>(l);
        masks[n] = static_cast<std::uint8_t>(((2u << hi) - 1) & ~((1u << lo) - 1));
        if (++n == kBatch) flush();
      }
    }
    flush();
  }
};

L2Cache::L2Cache(const L2Spec& spec, std::uint64_t seed, const std::string& origin) : impl_(std::make_unique<Impl>()) {
  geo_.partitions = spec.partitions;
  geo_.ways = spec.ways;
  geo_.sets = static_cast<std::uint32_t>(spec.bytes / (static_cast<std::uint64_t>(spec.line_bytes) * spec.ways * spec.partitions));
  geo_.line_shift = static_cast<std::uint32_t>(std::countr_zero(spec.line_bytes));
  geo_.sector_shift = static_cast<std::uint32_t>(std::countr_zero(spec.sector_bytes));
  geo_.sectors_per_line = spec.line_bytes / spec.sector_bytes;
  geo_.full_mask = static_cast<std::uint8_t>((1u << geo_.sectors_per_line) - 1);
  if (geo_.sets == 0) throw InputError(origin + ": l2: fewer lines than ways x partitions");

  HashKind hk;
  if (!hash_from_name(spec.hash, hk)) throw InputError(origin + ": l2.hash: unknown hash '" + spec.hash + "' (expected modulo or xor_fold)");
  if (hk == HashKind::modulo) impl_->hash = ModuloHash(geo_);
  else impl_->hash = XorFoldHash(geo_);
  ReplacementKind rk;
  if (!replacement_from_name(spec.replacement, rk))
    throw InputError(origin + ": l2.replacement: unknown policy '" + spec.replacement + "' (expected lru, fifo, srrip or random)");
  for (std::uint32_t p = 0; p < geo_.partitions; ++p) {
    switch (rk) {
      case ReplacementKind::lru: impl_->repl.emplace_back(LruPolicy{}); break;
      case ReplacementKind::fifo: impl_->repl.emplace_back(FifoPolicy{}); break;
      case ReplacementKind::srrip: impl_->repl.emplace_back(SrripPolicy{}); break;
      case ReplacementKind::random: impl_->repl.emplace_back(RandomPolicy(seed + p)); break;
    }
  }
  impl_->far_copy = spec.far_copy && geo_.partitions == 2;
  Impl& m = *impl_;
  m.meta_off = geo_.ways * 4;
  m.valid_off = geo_.ways * 8;
  m.dirty_off = geo_.ways * 9;
  m.set_stride = round_up<std::uint64_t>(geo_.ways * 10ull + 16, 64);  // +16: SSE2 reads past the tags
  m.num_sets = static_cast<std::uint64_t>(geo_.partitions) * geo_.sets;
  m.arena.raw = std::make_unique<std::uint8_t[]>(m.num_sets * m.set_stride + 64);
  m.arena.data = m.arena.raw.get() + (64 - reinterpret_cast<std::uintptr_t>(m.arena.raw.get()) % 64) % 64;
  initial_meta_ = rk == ReplacementKind::srrip ? SrripPolicy::kMax : 0;
  invalidate_all();
}

L2Cache::~L2Cache() = default;

L2AccessResult L2Cache::access(const ByteRect& rect, std::uint32_t requester_partition, bool write) {
  L2AccessResult r;
  if (rect.rows == 0 || rect.row_bytes == 0) return r;
  const std::uint32_t req = requester_partition % geo_.partitions;
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
              L2Access<Repl, Hash> acc{*this, *impl_, st.data(), hash, geo_, r};
              acc.rect(rect, req, write);
            },
            impl_->hash);
        for (std::uint32_t p = 0; p < geo_.partitions; ++p) {
          // Stamps live inside each set's record: rebase set by set (one set is one "sets=1" call).
          if (st[p].needs_rebase())
            for (std::uint32_t set = 0; set < geo_.sets; ++set) {
              std::uint32_t clock = st[p].clock_value();
              rebase_stamps(impl_->meta(impl_->set_ptr(p, set, geo_.sets)), 1, geo_.ways, clock);
            }
          if (st[p].needs_rebase()) st[p].reset_clock(geo_.ways);
          impl_->repl[p] = st[p];
        }
      },
      impl_->repl[0]);
  return r;
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
  for (std::uint64_t set = 0; set < m.num_sets; ++set) {
    std::uint32_t* meta = m.meta(m.arena.data + set * m.set_stride);
    std::fill(meta, meta + geo_.ways, initial_meta_);
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
