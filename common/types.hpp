#pragma once
// Basic scalar types shared by every folder.
#include <cstdint>

namespace tilesim {

/// Simulated time in picoseconds. Integer so that event order is exact and reproducible.
using Time = std::int64_t;
/// A byte address in the simulated device memory.
using Addr = std::uint64_t;

inline constexpr Time kPsPerNs = 1000;

/// Integer division rounding up.
template <class T>
constexpr T ceil_div(T a, T b) { return (a + b - 1) / b; }

/// Rounds a up to a multiple of b.
template <class T>
constexpr T round_up(T a, T b) { return ceil_div(a, b) * b; }

}  // namespace tilesim
