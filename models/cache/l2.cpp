#include "models/cache/l2.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <variant>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// The per-line lambdas of the access loop must inline into it: as calls they spill the loop's
// counters and cost a third of its time.
#define TILESIM_INLINE __attribute__((always_inline))

#include "common/error.hpp"
#include "common/text.hpp"
#include "models/cache/hash/family.hpp"
#include "models/cache/rect_memo.hpp"
#include "models/cache/replacement/family.hpp"

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

using ReplVariant = ReplacementPolicies::Variant;
using HashVariant = HashPolicies::Variant;

// Population count of a sector mask (at most 8 sectors), without relying on a CPU flag.
constexpr std::array<std::uint8_t, 256> make_popcount_table() {
  std::array<std::uint8_t, 256> t{};
  for (int i = 0; i < 256; ++i) t[i] = static_cast<std::uint8_t>(std::popcount(static_cast<unsigned>(i)));
  return t;
}
constexpr std::array<std::uint8_t, 256> kPopcount = make_popcount_table();
inline std::uint32_t pop8(std::uint8_t m) { return kPopcount[m]; }

// Bitmask of the ways whose tag equals `tag` (tag 0 finds the empty ways). SSE2, the x86-64
// baseline, compares four ways per instruction; a set record is padded so reading a few bytes
// past the last tag stays inside it.
__attribute__((always_inline)) inline std::uint64_t match_ways(const std::uint32_t* tags, std::uint32_t tag, std::uint32_t ways) {
  std::uint64_t bits = 0;
#if defined(__SSE2__)
  const __m128i want = _mm_set1_epi32(static_cast<int>(tag));
  if (ways == 16) {  // every preset: four compares packed into one 16-bit mask
    const auto* t = reinterpret_cast<const __m128i*>(tags);
    const __m128i lo = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(t), want),
                                       _mm_cmpeq_epi32(_mm_loadu_si128(t + 1), want));
    const __m128i hi = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(t + 2), want),
                                       _mm_cmpeq_epi32(_mm_loadu_si128(t + 3), want));
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(lo, hi)));
  }
  for (std::uint32_t w = 0; w < ways; w += 4) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + w));
    bits |= static_cast<std::uint64_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, want)))) << w;
  }
  return ways >= 64 ? bits : bits & ((std::uint64_t{1} << ways) - 1);
#else
  for (std::uint32_t w = 0; w < ways; ++w) bits |= static_cast<std::uint64_t>(tags[w] == tag) << w;
  return bits;
#endif
}

struct L2Cache::Impl {
  // One record per set, 64-byte aligned: the ways' tags, then their valid and dirty sector
  // masks and replacement bytes, so a lookup touches one contiguous run of host cache lines
  // (two for 16 ways: the tags, then the rest) that can be prefetched as a unit.
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
  RectMemo memo;
  // grow[k][m]: sector mask m widened to the aligned chunks of 2^k sectors it touches (a read
  // miss's fill); k = 0 is the mask itself.
  std::array<std::array<std::uint8_t, 256>, 4> grow{};
  std::uint32_t fill_bytes = 0;  // l2.fill_bytes (0: one sector)

  std::uint8_t* set_ptr(std::uint32_t part, std::uint32_t set, std::uint32_t sets) const {
    return arena.data + (static_cast<std::uint64_t>(part) * sets + set) * set_stride;
  }
  static std::uint32_t* tags(std::uint8_t* p) { return reinterpret_cast<std::uint32_t*>(p); }
  std::uint8_t* meta(std::uint8_t* p) const { return p + meta_off; }
  std::uint8_t* valid(std::uint8_t* p) const { return p + valid_off; }
  std::uint8_t* dirty(std::uint8_t* p) const { return p + dirty_off; }
};

// Bitmask of the ways whose valid mask is 0, i.e. the free ways: a filled way always holds a
// non-empty sector mask and an empty one tag 0, so this equals matching tag 0, from one host
// line of 16 bytes instead of the 64 of the tags.
__attribute__((always_inline)) inline std::uint64_t free_ways(const std::uint8_t* valid, std::uint32_t ways) {
#if defined(__SSE2__)
  if (ways == 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(valid));
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128())));
  }
#endif
  std::uint64_t bits = 0;
  for (std::uint32_t w = 0; w < ways; ++w) bits |= static_cast<std::uint64_t>(valid[w] == 0) << w;
  return bits;
}

// The access loop, one instantiation per (replacement, hash) pair. Everything it reads is held
// by value: the set records are written through byte pointers, which may alias anything, so
// fields reached through references would be reloaded after every store.
template <class Repl, class Hash>
struct L2Access {
  L2Cache& c;
  Repl* repl;  // array, one per partition
  const Hash hash;
  RectMemo& memo;
  std::uint8_t* const arena;
  const std::uint64_t stride;
  const std::uint64_t part_bytes;  // one partition's set records: partition p starts p * part_bytes in
  const std::uint32_t valid_off, dirty_off, meta_off;
  const std::uint32_t ways, partitions, line_shift, sector_shift, sectors_per_line;
  const bool far_copy;
  const std::uint8_t* const grow;  // a read miss's fill chunks by sector mask (nullptr: the sectors alone)
  L2AccessResult r{};

  L2Access(L2Cache& cache, L2Cache::Impl& s, Repl* policies, const Hash& h, const CacheGeometry& g,
           const std::uint8_t* fill_grow)
      : c(cache), repl(policies), hash(h), memo(s.memo), arena(s.arena.data), stride(s.set_stride),
        part_bytes(static_cast<std::uint64_t>(g.sets) * s.set_stride), valid_off(s.valid_off),
        dirty_off(s.dirty_off), meta_off(s.meta_off), ways(g.ways), partitions(g.partitions),
        line_shift(g.line_shift), sector_shift(g.sector_shift), sectors_per_line(g.sectors_per_line),
        far_copy(s.far_copy), grow(fill_grow) {}

  // Picks the walk for this access: the mode flags are constants inside it, so each line pays
  // only for the branches of its own case (reads of whole lines with copies are nearly all of
  // a GEMM's lines), and 16 ways (every preset) make the record layout constant.
  void rect(const ByteRect& b, const std::uint32_t req, const bool write) {
    if (ways == 16) mode<true>(b, req, write);
    else mode<false>(b, req, write);
  }
  template <bool W16>
  void mode(const ByteRect& b, const std::uint32_t req, const bool write) {
    const bool copies = far_copy && partitions == 2;
    const std::uint64_t line_bytes = std::uint64_t{1} << line_shift;
    // Whole lines (aligned tiles of aligned tensors, the common case): no sector masks to build.
    const bool whole = b.start % line_bytes == 0 && b.row_bytes % line_bytes == 0 && b.pitch % line_bytes == 0;
    if (write) copies ? walk<W16, true, true, false>(b, req) : walk<W16, true, false, false>(b, req);
    else if (copies) whole ? walk<W16, false, true, true>(b, req) : walk<W16, false, true, false>(b, req);
    else whole ? walk<W16, false, false, true>(b, req) : walk<W16, false, false, false>(b, req);
  }

  // Where a set record keeps its valid masks, dirty masks and replacement bytes, and its ways.
  struct RecordLayout {
    std::uint32_t valid, dirty, meta, ways;
  };

  // Makes `mask` valid in the record `p` for `line` (filling a way, evicting the policy's victim
  // and counting its dirty sectors as written back when the set is full); returns the part of
  // mask that was already valid. A read that misses fetches more than it asked for when `grow`
  // is given (grow[m]: the fill chunks around the sectors m): `extra` returns the sectors outside
  // `mask` it made valid (fetched with the miss, looked up by nobody).
  template <bool Write>
  TILESIM_INLINE static std::uint8_t touch_line(Repl& policy, const RecordLayout lay, std::uint8_t* p,
                                                std::uint32_t line, std::uint8_t mask, std::uint64_t& dram_wr,
                                                L2Cache& cache, const std::uint8_t* grow, std::uint8_t& extra) {
    auto* tags = reinterpret_cast<std::uint32_t*>(p);
    std::uint8_t* meta = p + lay.meta;
    std::uint8_t* valid = p + lay.valid;
    std::uint8_t* dirty = p + lay.dirty;
    const std::uint32_t tag = line + 1;
    if (const std::uint64_t hit = match_ways(tags, tag, lay.ways)) {
      const auto w = static_cast<std::uint32_t>(std::countr_zero(hit));
      const std::uint8_t prev = valid[w] & mask;
      const std::uint8_t miss = mask & static_cast<std::uint8_t>(~prev);
      extra = grow && miss ? grow[miss] & static_cast<std::uint8_t>(~(mask | valid[w])) : 0;
      valid[w] |= mask | extra;
      if constexpr (Write) dirty[w] |= mask;
      policy.on_hit(meta, w, lay.ways);
      return prev;
    }
    const std::uint64_t free = free_ways(valid, lay.ways);
    std::uint32_t w;
    if (free) {
      w = static_cast<std::uint32_t>(std::countr_zero(free));
    } else {
      w = policy.victim(meta, lay.ways);
      if (const std::uint8_t d = dirty[w]) {
        dram_wr += pop8(d);
        cache.count_writeback(tags[w] - 1, pop8(d));
      }
    }
    extra = grow ? grow[mask] & static_cast<std::uint8_t>(~mask) : 0;
    tags[w] = tag;
    valid[w] = mask | extra;
    dirty[w] = Write ? mask : 0;
    policy.on_fill(meta, w, lay.ways);
    return 0;
  }

  // Drops `line` from the record `p` if it is there. Only copies are invalidated, and copies
  // are never dirty (writes go to the home half), so nothing is written back.
  TILESIM_INLINE static void invalidate_line(Repl& policy, const RecordLayout lay, std::uint8_t* p, std::uint32_t line) {
    const std::uint64_t hit = match_ways(reinterpret_cast<std::uint32_t*>(p), line + 1, lay.ways);
    if (!hit) return;
    const auto w = static_cast<std::uint32_t>(std::countr_zero(hit));
    reinterpret_cast<std::uint32_t*>(p)[w] = 0;
    p[lay.valid + w] = 0;
    p[lay.dirty + w] = 0;
    policy.on_invalidate(p + lay.meta, w, lay.ways);
  }

  // The two ways of enumerating a rectangle's lines for lookup(ents, n, line_at), which looks
  // them up in batches; entry(line) locates a line's set record.
  static constexpr std::uint32_t kBatch = 64, kPrefetch = 8;

  // Whole lines, row by row, left to right: a cursor that both the entry pass and the lookup
  // pass run. The entries of a rectangle of memo size come from the memo (or fill it).
  template <class Entry, class Lookup>
  TILESIM_INLINE static void walk_whole_lines(const ByteRect& b, RectMemo& memo, const std::uint32_t ls,
                                              Entry&& entry, Lookup&& lookup) {
    const std::uint64_t per_row = b.row_bytes >> ls, pitch_lines = b.pitch >> ls;
    struct Cursor {
      std::uint64_t row_first, l, j;
    };
    const auto step = [&](Cursor& cur) TILESIM_INLINE {
      if (++cur.j == per_row) {
        cur.j = 0;
        cur.row_first += pitch_lines;
        cur.l = cur.row_first;
      } else {
        ++cur.l;
      }
    };
    Cursor fill{b.start >> ls, b.start >> ls, 0}, use = fill;
    const auto use_line = [&](std::uint32_t, std::uint8_t&) TILESIM_INLINE {
      const auto l = static_cast<std::uint32_t>(use.l);
      step(use);
      return l;
    };
    const std::uint64_t total = per_row * b.rows;
    // A rectangle of a few lines (a semaphore poll, a random access) hashes faster than it
    // can fetch a memo slot that is most likely cold.
    if (total >= RectMemo::kMinLines && total <= RectMemo::kLines) {
      bool filled;
      std::uint32_t* ents = memo.find({fill.l, pitch_lines, static_cast<std::uint32_t>(per_row), b.rows}, filled);
      const auto n = static_cast<std::uint32_t>(total);
      if (!filled)
        for (std::uint32_t i = 0; i < n; ++i, step(fill)) ents[i] = entry(static_cast<std::uint32_t>(fill.l));
      lookup(ents, n, use_line);
    } else {
      std::uint32_t ents[kBatch];
      for (std::uint64_t done = 0; done < total; done += kBatch) {
        const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(kBatch, total - done));
        for (std::uint32_t i = 0; i < n; ++i, step(fill)) ents[i] = entry(static_cast<std::uint32_t>(fill.l));
        lookup(ents, n, use_line);
      }
    }
  }

  // Any rectangle: each row's lines with the sector mask the row covers in each, in batches.
  template <class Entry, class Lookup>
  TILESIM_INLINE static void walk_sector_runs(const ByteRect& b, const std::uint32_t ls, const std::uint32_t ss,
                                              const std::uint32_t sectors_per_line, Entry&& entry, Lookup&& lookup) {
    std::uint32_t lines[kBatch], ents[kBatch];
    std::uint8_t masks[kBatch];
    std::uint32_t n = 0;
    const auto flush = [&]() TILESIM_INLINE {
      lookup(ents, n, [&](std::uint32_t i, std::uint8_t& mask) TILESIM_INLINE {
        mask = masks[i];
        return lines[i];
      });
      n = 0;
    };
    const std::uint32_t spl_mask = sectors_per_line - 1;
    for (std::uint32_t row = 0; row < b.rows; ++row) {
      const Addr a = b.start + row * b.pitch;
      const Addr e = a + b.row_bytes - 1;  // inclusive
      const std::uint64_t first = a >> ls, last = e >> ls;
      for (std::uint64_t l = first; l <= last; ++l) {
        const std::uint32_t lo = l == first ? (a >> ss) & spl_mask : 0;
        const std::uint32_t hi = l == last ? (e >> ss) & spl_mask : spl_mask;
        lines[n] = static_cast<std::uint32_t>(l);
        masks[n] = static_cast<std::uint8_t>(((2u << hi) - 1) & ~((1u << lo) - 1));
        ents[n] = entry(static_cast<std::uint32_t>(l));
        if (++n == kBatch) flush();
      }
    }
    flush();
  }

  // Walks the rectangle. Counters and geometry are locals of this function (registers), and
  // the per-line work is lambdas over them: byte stores into set records cannot alias a local
  // whose address never escapes. A line is located by an entry (RectMemo): its set record's
  // offset within a partition and its home partition in bit 0. Entries are computed (or found
  // in the memo) for a batch of lines first, then the lines are looked up while the record
  // kPrefetch entries ahead is prefetched, so host cache misses on the records overlap without
  // flooding the CPU's miss buffers.
  template <bool W16, bool Write, bool Copies, bool Whole>
  void walk(const ByteRect& b, const std::uint32_t req) {
    std::uint8_t* const base = arena;
    const Hash h = hash;
    const std::uint64_t set_stride = stride, pbytes = part_bytes;
    const std::uint32_t n_ways = W16 ? 16 : ways;
    const std::uint32_t v_off = W16 ? 16 * 4 : valid_off, d_off = W16 ? 16 * 5 : dirty_off,
                        m_off = W16 ? 16 * 6 : meta_off;
    const RecordLayout lay{v_off, d_off, m_off, n_ways};
    std::uint64_t sectors = 0, hits = 0, near_hits = 0, fabric = 0, fill_hits = 0, dram_rd = 0, dram_wr = 0, part0 = 0,
                  part1 = 0;
    const auto count_part = [&](std::uint32_t part, std::uint64_t n) TILESIM_INLINE { (part ? part1 : part0) += n; };
    // Reads of part lines fetch the fill chunks around their missed sectors (whole lines
    // and writes fetch nothing more); `extra` gets the sectors fetched beyond the mask.
    const std::uint8_t* const gr = Write || Whole ? nullptr : grow;
    std::uint8_t extra = 0;
    const auto touch = [&](std::uint32_t part, std::uint8_t* p, std::uint32_t line,
                           std::uint8_t mask) TILESIM_INLINE -> std::uint8_t {
      return touch_line<Write>(repl[part], lay, p, line, mask, dram_wr, c, gr, extra);
    };
    const auto invalidate = [&](std::uint32_t part, std::uint8_t* p, std::uint32_t line) TILESIM_INLINE {
      invalidate_line(repl[part], lay, p, line);
    };
    // The other half's record of the same set is one partition's worth of records away.
    const auto other_half = [&](std::uint8_t* p, std::uint32_t part) TILESIM_INLINE {
      return part ? p - pbytes : p + pbytes;
    };
    const std::uint8_t full = static_cast<std::uint8_t>((1u << sectors_per_line) - 1);
    const std::uint32_t n_full = pop8(full);
    // Far lines of a read with copies whose sectors were not all in the near half: their home
    // lookups wait until the batch's near lookups are done, their records prefetched meanwhile.
    // The reorder changes nothing: near lookups touch only the requester's half and home
    // lookups only the other one, each half still sees its lookups in line order, and the
    // counters are sums.
    constexpr std::uint32_t kMaxBatch = RectMemo::kLines;
    std::uint32_t far_lines[Copies && !Write ? kMaxBatch : 1];
    std::uint8_t far_rest[Copies && !Write ? kMaxBatch : 1];
    std::uint8_t far_asked[Copies && !Write ? kMaxBatch : 1];  // the requested part of far_rest
    std::uint8_t* far_recs[Copies && !Write ? kMaxBatch : 1];
    std::uint32_t n_far = 0;
    // One line. `p` is the record of the set looked up first: the requester's half for reads
    // with copies (a home line lives there, a far line may have a copy there), else the home half.
    const auto line = [&](std::uint32_t line, std::uint8_t mask, std::uint32_t home, std::uint8_t* p) TILESIM_INLINE {
      const std::uint32_t n = Whole ? n_full : pop8(mask);
      sectors += n;
      if constexpr (Write) {
        hits += pop8(touch(home, p, line, mask));
        count_part(home, n);
        if (home != req) fabric += n;
        if constexpr (Copies) invalidate(1 - home, other_half(p, home), line);
      } else if constexpr (Copies) {
        // Every sector is looked up in the requester's half (counted there at the end); a far
        // line's sectors missing there, and those its fill fetches with them, come from the home
        // half over the fabric and are copied (measured: the near half keeps the whole fill).
        const std::uint8_t near_hit = touch(req, p, line, mask);
        const std::uint32_t nh = pop8(near_hit);
        hits += nh;
        if (home == req) {
          dram_rd += n - nh + pop8(extra);
          return;
        }
        near_hits += nh;
        const std::uint8_t asked = mask & static_cast<std::uint8_t>(~near_hit), rest = asked | extra;
        if (!rest) return;
        std::uint8_t* const home_rec = other_half(p, req);
        __builtin_prefetch(home_rec, 1, 3);
        __builtin_prefetch(home_rec + 64, 1, 3);
        far_lines[n_far] = line;
        far_rest[n_far] = rest;
        far_asked[n_far] = asked;
        far_recs[n_far++] = home_rec;
      } else {
        const std::uint32_t hm = pop8(touch(home, p, line, mask));
        hits += hm;
        dram_rd += n - hm + pop8(extra);
        count_part(home, n);
        if (home != req) fabric += n;
      }
    };

    const auto entry = [&](std::uint32_t l) TILESIM_INLINE {
      const SetSlot slot = h.slot(l);
      return static_cast<std::uint32_t>(slot.set * set_stride) | slot.partition;
    };
    // The record an entry names: in the requester's half for reads with copies, else the home half.
    std::uint8_t* const near_base = base + req * pbytes;
    const auto record = [&](std::uint32_t e) TILESIM_INLINE {
      std::uint8_t* const part_base = Copies && !Write ? near_base : base + (e & 1) * pbytes;
      return part_base + (e & ~1u);
    };
    const auto fetch = [&](std::uint32_t e) TILESIM_INLINE {
      // A 16-way set record is two host lines: fetch both without a loop.
      const std::uint8_t* p = record(e);
      __builtin_prefetch(p, 1, 3);
      __builtin_prefetch(p + 64, 1, 3);
      if constexpr (!W16)
        for (std::uint64_t off = 128; off < set_stride; off += 64) __builtin_prefetch(p + off, 1, 3);
    };
    // Looks up `n` lines by their entries; line_at(i) gives the i-th line and its sector mask.
    static_assert(kBatch <= kMaxBatch, "a lookup batch must fit the deferred far lookups");
    const auto lookup = [&](const std::uint32_t* ents, std::uint32_t n, auto&& line_at) TILESIM_INLINE {
      for (std::uint32_t i = 0; i < std::min(n, kPrefetch); ++i) fetch(ents[i]);
      for (std::uint32_t i = 0; i < n; ++i) {
        if (i + kPrefetch < n) fetch(ents[i + kPrefetch]);
        const std::uint32_t e = ents[i];
        std::uint8_t mask = full;
        const std::uint32_t l = line_at(i, mask);
        line(l, mask, e & 1, record(e));
      }
      if constexpr (Copies && !Write) {
        const std::uint32_t home = 1 - req;
        for (std::uint32_t i = 0; i < n_far; ++i) {
          const std::uint32_t nr = pop8(far_rest[i]);
          const std::uint8_t held = touch(home, far_recs[i], far_lines[i], far_rest[i]);
          const std::uint32_t hh = pop8(held), asked_hits = pop8(held & far_asked[i]);
          hits += asked_hits;
          fill_hits += hh - asked_hits;
          dram_rd += nr - hh + pop8(extra);
          fabric += nr;
        }
        n_far = 0;
      }
    };
    if constexpr (Whole) walk_whole_lines(b, memo, line_shift, entry, lookup);
    else walk_sector_runs(b, line_shift, sector_shift, sectors_per_line, entry, lookup);
    if constexpr (Copies && !Write) {
      part0 = req ? fabric : sectors;
      part1 = req ? sectors : fabric;
    }
    r.sectors = sectors;
    r.hit_sectors = hits;
    r.near_copy_hit_sectors = near_hits;
    r.fabric_sectors = fabric;
    r.fill_hit_sectors = fill_hits;
    r.dram_read_sectors = dram_rd;
    r.dram_write_sectors = dram_wr;
    r.partition_sectors = {part0, part1};
  }
};

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
  const std::uint32_t fill = std::min(std::max(fill_bytes, impl_->fill_bytes), geo_.sectors_per_line << geo_.sector_shift);
  const std::uint32_t chunk_sectors = fill >> geo_.sector_shift;
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
