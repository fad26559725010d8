#pragma once
// A 64-bit mixer for values that must look random yet repeat exactly from a seed (per-step
// noise, per-SM deviations, test workloads): splitmix64's finaliser (Steele, Lea and Flood 2014).
#include <cstdint>

namespace tilesim {

/// splitmix64: one step of the generator, a bijection of `h` whose bits all depend on all of h's.
inline std::uint64_t splitmix64(std::uint64_t h) {
  h += 0x9E3779B97F4A7C15ull;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

/// A 64-bit value's top 53 bits as a double in [0, 1): a uniform draw from a hash or generator.
inline double unit_interval(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

}  // namespace tilesim
