#pragma once
// Resident blocks per SM from threads, registers, shared memory and the block limit — the
// CUDA occupancy calculator's rules — and which of them binds.
#include <cstdint>
#include <string>

#include "models/arch.hpp"
#include "models/block_resources.hpp"

namespace tilesim {

struct Occupancy {
  std::uint32_t blocks_per_sm = 0;
  std::string limit;  ///< "threads", "registers", "shared_memory", "blocks" or "set" (explicit)
  std::uint32_t by_threads = 0, by_registers = 0, by_shared_memory = 0, by_blocks = 0;
};

/// Computes occupancy; an explicit `requested` (> 0) must not exceed what the resources allow.
/// Throws InputError (naming `origin`) when a block cannot fit on an SM at all.
Occupancy compute_occupancy(const ArchSpec& arch, const BlockResources& r, std::uint32_t requested,
                            const std::string& origin);

}  // namespace tilesim
