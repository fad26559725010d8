#pragma once
// The L2 model's inside, for models/cache/l2.cpp alone: the set records (L2Cache::Impl), the
// tag match, and the access loop (L2Access), one instantiation per (replacement, hash) pair.
// Kept apart from l2.cpp, which holds the cache's whole-array operations, so that each stays
// readable; nothing else includes it.
#include <algorithm>
#include <array>
#include <bit>
#include <variant>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "models/cache/hash/family.hpp"
#include "models/cache/l2.hpp"
#include "models/cache/rect_memo.hpp"
#include "models/cache/replacement/family.hpp"

// The per-line lambdas of the access loop must inline into it: as calls they spill the loop's
// counters and cost a third of its time.
#define TILESIM_INLINE __attribute__((always_inline))

namespace tilesim {
using ReplVariant = ReplacementPolicies::Variant;
using HashVariant = HashPolicies::Variant;

// Population count of a sector mask (at most 8 sectors), without relying on a CPU flag.
constexpr std::array<std::uint8_t, 256> make_popcount_table() {
  std::array<std::uint8_t, 256> t{};
  for (int i = 0; i < 256; ++i) t[i] = static_cast<std::uint8_t>(std::popcount(static_cast<unsigned>(i)));
  return t;
}
inline constexpr std::array<std::uint8_t, 256> kPopcount = make_popcount_table();
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
    const bool whole = whole_lines(b, line_bytes);
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
    constexpr bool kGrows = !Write && !Whole;  // only reads of part lines fetch beyond their mask
    const std::uint8_t* const gr = kGrows ? grow : nullptr;
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
    std::uint8_t far_asked[Copies && kGrows ? kMaxBatch : 1];  // the requested part of far_rest
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
          dram_rd += n - nh;
          if constexpr (kGrows) dram_rd += pop8(extra);
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
        if constexpr (kGrows) far_asked[n_far] = asked;
        far_recs[n_far++] = home_rec;
      } else {
        const std::uint32_t hm = pop8(touch(home, p, line, mask));
        hits += hm;
        dram_rd += n - hm;
        if constexpr (kGrows) dram_rd += pop8(extra);
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
          const std::uint32_t hh = pop8(held);
          dram_rd += nr - hh;
          if constexpr (kGrows) {
            const std::uint32_t asked_hits = pop8(held & far_asked[i]);
            hits += asked_hits;
            fill_hits += hh - asked_hits;
            dram_rd += pop8(extra);
          } else {
            hits += hh;
          }
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

}  // namespace tilesim
