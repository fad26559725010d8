#pragma once
// Static re-reference interval prediction (Jaleel et al., ISCA 2010), 2-bit RRPV, hit-priority
// promotion: fills predict a "long" re-reference (RRPV 2), hits promote to 0; the victim is the
// first way at RRPV 3, ageing the whole set until one exists. Scan-resistant, unlike LRU,
// which matters for streamed GEMM operands larger than the L2.
#include "models/cache/replacement/replacement.hpp"

namespace tilesim {

struct SrripPolicy {
  static constexpr std::string_view kName = "srrip";
  static constexpr std::string_view kDescription = "static re-reference interval prediction (2-bit, hit priority): scan-resistant";
  static constexpr std::uint8_t kMax = 3;

  void init(std::uint8_t* m, std::uint32_t ways) {
    for (std::uint32_t w = 0; w < ways; ++w) m[w] = kMax;
  }
  void on_hit(std::uint8_t* m, std::uint32_t way, std::uint32_t) { m[way] = 0; }
  void on_fill(std::uint8_t* m, std::uint32_t way, std::uint32_t) { m[way] = kMax - 1; }
  void on_invalidate(std::uint8_t* m, std::uint32_t way, std::uint32_t) { m[way] = kMax; }
  std::uint32_t victim(std::uint8_t* m, std::uint32_t ways) const {
#if defined(__SSE2__)
    if (ways == 16) {
      // Ageing d rounds then taking the first way at kMax is taking the first way at kMax - d,
      // for the least d that has one, and adding d to every way: one compare per candidate d.
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(m));
      for (std::uint8_t d = 0;; ++d) {
        const __m128i at_least = _mm_set1_epi8(static_cast<char>(kMax - d));  // v >= k as max(v, k) == v
        const int hit = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, at_least), v));
        if (hit) {
          if (d) _mm_storeu_si128(reinterpret_cast<__m128i*>(m), _mm_add_epi8(v, _mm_set1_epi8(static_cast<char>(d))));
          return static_cast<std::uint32_t>(__builtin_ctz(static_cast<unsigned>(hit)));
        }
      }
    }
#endif
    while (true) {
      for (std::uint32_t w = 0; w < ways; ++w)
        if (m[w] >= kMax) return w;
      for (std::uint32_t w = 0; w < ways; ++w) ++m[w];
    }
  }
};

}  // namespace tilesim
