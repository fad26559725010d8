#pragma once
// Set-index hash family: maps a line index to (home partition, set within the partition).
// Header-only structs, instantiated into the L2's access loop as template parameters so the
// hot path pays no indirect call. One header per hash; names are resolved once at load.
#include <cstdint>
#include <string>
#include <vector>

#include "models/cache/geometry.hpp"

namespace tilesim {

struct SetSlot {
  std::uint32_t partition;
  std::uint32_t set;
};

enum class HashKind : std::uint8_t { modulo, xor_fold };

/// Resolves a hash name ("modulo", "xor_fold"); nullopt-like: returns false when unknown.
bool hash_from_name(const std::string& name, HashKind& out);
std::vector<std::string> hash_names();

}  // namespace tilesim
