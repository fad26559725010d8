#pragma once
// Least recently used, as recency ranks: a hit or fill moves the way to rank 0, the victim is
// the way at rank ways-1. Exact LRU with no clock to wrap.
#include "models/cache/replacement/replacement.hpp"

namespace tilesim {

struct LruPolicy {
  static constexpr std::string_view kName = "lru";
  static constexpr std::string_view kDescription = "least recently used: a hit or fill makes a line the newest";
  void init(std::uint8_t* m, std::uint32_t ways) { rank_init(m, ways); }
  __attribute__((always_inline)) void on_hit(std::uint8_t* m, std::uint32_t way, std::uint32_t ways) { rank_to_front(m, way, ways); }
  void on_fill(std::uint8_t* m, std::uint32_t way, std::uint32_t ways) { rank_to_front(m, way, ways); }
  void on_invalidate(std::uint8_t* m, std::uint32_t way, std::uint32_t ways) { rank_to_back(m, way, ways); }
  std::uint32_t victim(const std::uint8_t* m, std::uint32_t ways) const { return rank_oldest(m, ways); }
};

}  // namespace tilesim
