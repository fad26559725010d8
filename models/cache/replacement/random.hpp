#pragma once
// Pseudo-random victim from a seeded xorshift64*, so runs stay reproducible bit for bit.
#include "models/cache/replacement/replacement.hpp"

namespace tilesim {

struct RandomPolicy {
  static constexpr std::string_view kName = "random";
  static constexpr std::string_view kDescription = "a pseudo-random victim from a seeded generator (reproducible)";
  std::uint64_t state = 0x9e3779b97f4a7c15ull;

  explicit RandomPolicy(std::uint64_t seed = 1) : state(seed * 0x9e3779b97f4a7c15ull + 1) {}
  void init(std::uint8_t*, std::uint32_t) {}
  void on_hit(std::uint8_t*, std::uint32_t, std::uint32_t) {}
  void on_fill(std::uint8_t*, std::uint32_t, std::uint32_t) {}
  void on_invalidate(std::uint8_t*, std::uint32_t, std::uint32_t) {}
  std::uint32_t victim(const std::uint8_t*, std::uint32_t ways) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<std::uint32_t>(((state * 0x2545f4914f6cdd1dull) >> 32) % ways);
  }
};

}  // namespace tilesim
