#pragma once
// Set-index hash family: maps a line index to (home partition, set within the partition).
// Header-only structs, instantiated into the L2's access loop as template parameters so the
// hot path pays no indirect call. One header per hash, listed in family.hpp; names are
// resolved once, when the L2 is built.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/named_policy.hpp"
#include "models/cache/geometry.hpp"

namespace tilesim {

struct SetSlot {
  std::uint32_t partition;
  std::uint32_t set;
};

/// The family's names, in the order of its list (family.hpp), and what each does.
std::vector<std::string> hash_names();
std::vector<NamedPolicy> hash_policies();

}  // namespace tilesim
