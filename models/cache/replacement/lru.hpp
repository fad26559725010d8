#pragma once
// Least recently used: each way holds the clock of its last touch; the victim is the oldest.
#include "models/cache/replacement/replacement.hpp"

namespace tilesim {

struct LruPolicy {
  std::uint32_t clock = 1;

  void on_hit(std::uint32_t* m, std::uint32_t way) { m[way] = clock++; }
  void on_fill(std::uint32_t* m, std::uint32_t way) { m[way] = clock++; }
  void on_invalidate(std::uint32_t* m, std::uint32_t way) { m[way] = 0; }
  std::uint32_t victim(const std::uint32_t* m, std::uint32_t ways) const {
    std::uint32_t best = 0;
    for (std::uint32_t w = 1; w < ways; ++w)
      if (m[w] < m[best]) best = w;
    return best;
  }
  // The 32-bit clock would wrap after ~4e9 touches: the cache then rebases every set's stamps.
  bool needs_rebase() const { return clock > 0xf0000000u; }
  std::uint32_t clock_value() const { return clock; }
  void reset_clock(std::uint32_t ways) { clock = ways; }
};

}  // namespace tilesim
