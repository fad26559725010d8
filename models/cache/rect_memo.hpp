#pragma once
// Set locations of recently walked whole-line rectangles. A GEMM reads each operand tile once
// per block that uses it (64 times for an 8192^3 GEMM in 128-wide tiles), and its lines hash to
// the same sets every time, so the L2 computes them once and keeps them here. An entry is what
// the access loop needs of a line's hash: the byte offset of its set record within a
// partition, with the home partition in bit 0 (records are 64-byte aligned).
//
// Direct-mapped on the rectangle; a slot holds up to kLines lines. Only speed depends on it: a
// slot taken by another rectangle is refilled with the same values. Allocated on first use so
// caches that never walk a whole-line rectangle (most tests) pay nothing.
#include <cstdint>
#include <memory>

namespace tilesim {

class RectMemo {
 public:
  static constexpr std::uint32_t kLines = 128;    // an operand tile of 128 rows of one line
  static constexpr std::uint32_t kSlots = 1u << 15;  // 16 MiB of entries: every tile of an 8192^3 GEMM
  static constexpr std::uint32_t kMinLines = 8;      // smaller rectangles are hashed directly

  /// A rectangle of whole lines: `rows` runs of `per_row` lines, `pitch_lines` apart.
  struct Key {
    std::uint64_t first_line = 0;
    std::uint64_t pitch_lines = 0;
    std::uint32_t per_row = 0;
    std::uint32_t rows = 0;  // 0: an empty slot
    bool operator==(const Key&) const = default;
  };

  /// The entries of `k`'s slot (kLines of them). `filled` says whether they already hold k's
  /// lines; when it is false the slot now belongs to k and the caller must fill it before the
  /// next call.
  std::uint32_t* find(const Key& k, bool& filled) {
    if (!keys_) {
      keys_ = std::make_unique<Key[]>(kSlots);
      entries_.reset(new std::uint32_t[std::size_t{kSlots} * kLines]);  // uninitialised, as entries are written before read
    }
    std::uint64_t h = k.first_line * 0x9e3779b97f4a7c15ull ^ k.pitch_lines * 0xc2b2ae3d27d4eb4full ^
                      (std::uint64_t{k.per_row} << 32 | k.rows);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    const std::size_t slot = static_cast<std::size_t>(h & (kSlots - 1));
    filled = keys_[slot] == k;
    keys_[slot] = k;
    return entries_.get() + slot * kLines;
  }

 private:
  std::unique_ptr<Key[]> keys_;
  std::unique_ptr<std::uint32_t[]> entries_;
};

}  // namespace tilesim
