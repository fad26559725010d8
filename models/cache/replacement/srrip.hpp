#pragma once
// Static re-reference interval prediction (Jaleel et al., ISCA 2010), 2-bit RRPV, hit-priority
// promotion: fills predict a "long" re-reference (RRPV 2), hits promote to 0; the victim is the
// first way at RRPV 3, ageing the whole set until one exists. Scan-resistant, unlike LRU,
// which matters for streamed GEMM operands larger than the L2.
#include "models/cache/replacement/replacement.hpp"

namespace tilesim {

struct SrripPolicy {
  static constexpr std::uint32_t kMax = 3;

  void on_hit(std::uint32_t* m, std::uint32_t way) { m[way] = 0; }
  void on_fill(std::uint32_t* m, std::uint32_t way) { m[way] = kMax - 1; }
  void on_invalidate(std::uint32_t* m, std::uint32_t way) { m[way] = kMax; }
  std::uint32_t victim(std::uint32_t* m, std::uint32_t ways) const {
    while (true) {
      for (std::uint32_t w = 0; w < ways; ++w)
        if (m[w] >= kMax) return w;
      for (std::uint32_t w = 0; w < ways; ++w) ++m[w];
    }
  }
  bool needs_rebase() const { return false; }
  std::uint32_t clock_value() const { return 0; }
  void reset_clock(std::uint32_t) {}
};

}  // namespace tilesim
