#pragma once
// Plain modulo indexing: consecutive lines alternate partitions, then walk the sets in order.
// The textbook baseline; strided tile rows can map to few sets with it (see tests).
#include "models/cache/hash/hash.hpp"

namespace tilesim {

struct ModuloHash {
  static constexpr std::string_view kName = "modulo";
  static constexpr std::string_view kDescription = "line index modulo partitions, then sets: the textbook baseline";
  FastMod part_mod;
  FastMod set_mod;
  std::uint32_t partitions = 1;

  explicit ModuloHash(const CacheGeometry& g) : part_mod(g.partitions), set_mod(g.sets), partitions(g.partitions) {}
  SetSlot slot(std::uint32_t line) const {
    if (partitions == 1) return {0, set_mod(line)};
    return {part_mod(line), set_mod(line / partitions)};
  }
};

}  // namespace tilesim
