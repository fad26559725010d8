#pragma once
// Static re-reference interval prediction (Jaleel et al., ISCA 2010), 2-bit RRPV, hit-priority
// promotion: fills predict a "long" re-reference (RRPV 2), hits promote to 0; the victim is the
// first way at RRPV 3, ageing the whole set until one exists. Scan-resistant, unlike LRU,
// which matters for streamed GEMM operands larger than the L2.
#include "models/cache/replacement/replacement.hpp"

namespace tilesim {

struct SrripPolicy {
  static constexpr std::uint8_t kMax = 3;

  void init(std::uint8_t* m, std::uint32_t ways) {
    for (std::uint32_t w = 0; w < ways; ++w) m[w] = kMax;
  }
  void on_hit(std::uint8_t* m, std::uint32_t way, std::uint32_t) { m[way] = 0; }
  void on_fill(std::uint8_t* m, std::uint32_t way, std::uint32_t) { m[way] = kMax - 1; }
  void on_invalidate(std::uint8_t* m, std::uint32_t way, std::uint32_t) { m[way] = kMax; }
  std::uint32_t victim(std::uint8_t* m, std::uint32_t ways) const {
    while (true) {
      for (std::uint32_t w = 0; w < ways; ++w)
        if (m[w] >= kMax) return w;
      for (std::uint32_t w = 0; w < ways; ++w) ++m[w];
    }
  }
};

}  // namespace tilesim
