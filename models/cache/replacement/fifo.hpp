#pragma once
// First in, first out: the rank moves to the front when a line is filled, never on a hit.
#include "models/cache/replacement/replacement.hpp"

namespace tilesim {

struct FifoPolicy {
  static constexpr std::string_view kName = "fifo";
  static constexpr std::string_view kDescription = "first in, first out: the oldest fill goes, hits change nothing";
  void init(std::uint8_t* m, std::uint32_t ways) { rank_init(m, ways); }
  void on_hit(std::uint8_t*, std::uint32_t, std::uint32_t) {}
  void on_fill(std::uint8_t* m, std::uint32_t way, std::uint32_t ways) { rank_to_front(m, way, ways); }
  void on_invalidate(std::uint8_t* m, std::uint32_t way, std::uint32_t ways) { rank_to_back(m, way, ways); }
  std::uint32_t victim(const std::uint8_t* m, std::uint32_t ways) const { return rank_oldest(m, ways); }
};

}  // namespace tilesim
