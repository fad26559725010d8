#pragma once
// Replacement-policy family. A policy is a small struct with per-partition state and hooks over
// one set's metadata, one byte per way (so a 16-way set record fits two host cache lines):
//   void init(std::uint8_t* m, std::uint32_t ways);                       // an empty set
//   void on_hit(std::uint8_t* m, std::uint32_t way, std::uint32_t ways);
//   void on_fill(std::uint8_t* m, std::uint32_t way, std::uint32_t ways);
//   void on_invalidate(std::uint8_t* m, std::uint32_t way, std::uint32_t ways);
//   std::uint32_t victim(std::uint8_t* m, std::uint32_t ways);            // all ways valid
// The cache instantiates its access loop per policy (no virtual calls per line) and always
// fills an invalid way before asking for a victim. One header per policy, listed in family.hpp.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/named_policy.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tilesim {

/// The family's names, in the order of its list (family.hpp), and what each does.
std::vector<std::string> replacement_names();
std::vector<NamedPolicy> replacement_policies();

/// Recency ranks shared by LRU and FIFO: m is a permutation of 0..ways-1, 0 the newest.
/// Moving a way to the front ages exactly the ways that were newer than it.
__attribute__((always_inline)) inline void rank_to_front(std::uint8_t* m, std::uint32_t way, std::uint32_t ways) {
  const std::uint8_t r = m[way];
#if defined(__SSE2__)
  if (ways == 16) {  // every preset: one compare and one subtract of 16 bytes (ranks < 128)
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(m));
    const __m128i newer = _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(r)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(m), _mm_sub_epi8(v, newer));
    m[way] = 0;
    return;
  }
#endif
  for (std::uint32_t v = 0; v < ways; ++v) m[v] = static_cast<std::uint8_t>(m[v] + (m[v] < r));
  m[way] = 0;
}
inline void rank_to_back(std::uint8_t* m, std::uint32_t way, std::uint32_t ways) {
  const std::uint8_t r = m[way];
  for (std::uint32_t v = 0; v < ways; ++v) m[v] = static_cast<std::uint8_t>(m[v] - (m[v] > r));
  m[way] = static_cast<std::uint8_t>(ways - 1);
}
inline std::uint32_t rank_oldest(const std::uint8_t* m, std::uint32_t ways) {
#if defined(__SSE2__)
  if (ways == 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(m));
    const int hit = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(15)));
    return hit ? static_cast<std::uint32_t>(__builtin_ctz(static_cast<unsigned>(hit))) : 0;
  }
#endif
  for (std::uint32_t v = 0; v < ways; ++v)
    if (m[v] == ways - 1) return v;
  return 0;  // unreachable while m is a permutation
}
inline void rank_init(std::uint8_t* m, std::uint32_t ways) {
  for (std::uint32_t v = 0; v < ways; ++v) m[v] = static_cast<std::uint8_t>(v);
}

}  // namespace tilesim
