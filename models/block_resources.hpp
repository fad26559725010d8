#pragma once
// What a block asks of an SM: the resources that decide occupancy (models/occupancy.hpp).
// Workloads fill it in per kernel (workloads/kernel.hpp); the occupancy model reads it.
#include <cstdint>

namespace tilesim {

/// Per-block resources that decide occupancy.
struct BlockResources {
  std::uint32_t threads = 128;
  std::uint32_t regs_per_thread = 128;
  std::uint64_t smem_bytes = 0;
  bool operator==(const BlockResources&) const = default;
};

}  // namespace tilesim
