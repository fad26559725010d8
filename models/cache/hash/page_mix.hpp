#pragma once
// Pages placed at random: the lines of one 2 MiB page take distinct slots (half, then set) of a
// run that starts where a bit mixer of the page number says, in an order scrambled within the
// page by a bijection keyed by the page, so scattered chunks of a page land apart. The hardware
// hashes physical addresses and the driver maps each 2 MiB page of a tensor to a frame of its
// own, so a footprint is spread evenly within a page and at random between pages: a contiguous
// footprint fills the sets more evenly than scattered chunks do, and both fill them unevenly
// enough that some sets overflow before the cache is full (docs/validation.md, "Sets filled
// page by page").
#include "models/cache/hash/hash.hpp"

namespace tilesim {

/// The 64-bit finaliser of MurmurHash3: every input bit moves about half of the output bits.
inline std::uint64_t mix_bits(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

struct PageMixHash {
  static constexpr std::string_view kName = "page_mix";
  static constexpr std::string_view kDescription =
      "each 2 MiB page's lines on distinct slots of a run from a random start: even within a page, random between pages";
  static constexpr std::uint32_t kPageShiftBytes = 21;  // 2 MiB, the GPU's large page
  FastMod slot_mod;
  std::uint32_t partitions = 1;
  std::uint32_t page_shift = 14;

  explicit PageMixHash(const CacheGeometry& g)
      : slot_mod(g.partitions * g.sets),
        partitions(g.partitions),
        page_shift(kPageShiftBytes > g.line_shift ? kPageShiftBytes - g.line_shift : 0) {}
  SetSlot slot(std::uint32_t line) const {
    const std::uint32_t mask = (1u << page_shift) - 1u;
    const std::uint64_t key = mix_bits(line >> page_shift);
    // A keyed bijection of the page offset: xor, odd multiply and xor-shift are each one-to-one
    // on page_shift bits, so a whole page still takes 2^page_shift distinct slots.
    std::uint32_t x = (line ^ static_cast<std::uint32_t>(key)) & mask;
    x = (x * 0x9e37u) & mask;
    x ^= x >> (page_shift / 2);
    x = (x * 0x85ebu) & mask;
    x ^= x >> (page_shift / 3 + 1);
    const std::uint32_t start = slot_mod(static_cast<std::uint32_t>(key >> 32));
    // x < 2^page_shift and start < slots, both below 2^31 for any cache tilesim builds.
    const std::uint32_t s = slot_mod(x + start);
    if (partitions == 2) return {s & 1u, s >> 1};  // arch.cpp allows 1 or 2 partitions
    return {0, s};
  }
};

}  // namespace tilesim
