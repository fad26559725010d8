#pragma once
// XOR-folded indexing, the usual shape of GPU L2 slice hashes: higher address bits are folded
// onto the low ones before the modulo, so power-of-two strides (matrix rows, tile panels)
// spread over all sets. The home partition is the parity of the line index's low 20 bits.
#include "models/cache/hash/hash.hpp"

namespace tilesim {

struct XorFoldHash {
  static constexpr std::string_view kName = "xor_fold";
  static constexpr std::string_view kDescription = "higher address bits folded onto the set index, as GPU slice hashes do";
  FastMod set_mod;
  std::uint32_t partitions = 1;

  explicit XorFoldHash(const CacheGeometry& g) : set_mod(g.sets), partitions(g.partitions) {}
  SetSlot slot(std::uint32_t line) const {
    std::uint32_t part = 0;
    if (partitions == 2) part = static_cast<std::uint32_t>(__builtin_parity(line & 0xfffffu));
    const std::uint32_t folded = line ^ (line >> 11) ^ (line >> 19) ^ (line >> 27);
    return {part, set_mod(folded)};
  }
};

}  // namespace tilesim
