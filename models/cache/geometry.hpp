#pragma once
// Cache geometry and the per-way state arrays every policy reads. Plain integers only.
#include <cstdint>

namespace tilesim {

/// Lemire's fast modulo for 32-bit operands: one multiply instead of a divide, because the
/// set count of real L2s (12800 per H100 half) is not a power of two.
class FastMod {
 public:
  FastMod() = default;
  explicit FastMod(std::uint32_t d) : d_(d), m_(~std::uint64_t{0} / d + 1) {}
  std::uint32_t operator()(std::uint32_t a) const {
    const std::uint64_t low = m_ * a;
    return static_cast<std::uint32_t>((static_cast<unsigned __int128>(low) * d_) >> 64);
  }
  std::uint32_t divisor() const { return d_; }

 private:
  std::uint32_t d_ = 1;
  std::uint64_t m_ = 0;
};

struct CacheGeometry {
  std::uint32_t partitions = 1;
  std::uint32_t sets = 1;           ///< per partition
  std::uint32_t ways = 16;
  std::uint32_t line_shift = 7;     ///< log2(line bytes)
  std::uint32_t sector_shift = 5;   ///< log2(sector bytes)
  std::uint32_t sectors_per_line = 4;
  std::uint8_t full_mask = 0xf;
};

}  // namespace tilesim
