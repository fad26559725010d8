#pragma once
// Replacement-policy family. A policy is a small struct with per-partition state and three
// hooks over one set's metadata words (one uint32 per way):
//   void on_hit(std::uint32_t* set_meta, std::uint32_t way);
//   void on_fill(std::uint32_t* set_meta, std::uint32_t way);
//   std::uint32_t victim(std::uint32_t* set_meta, std::uint32_t ways);   // all ways valid
//   void on_invalidate(std::uint32_t* set_meta, std::uint32_t way);
// and, for policies whose 32-bit clock could wrap, `bool needs_rebase()`, `clock_value()` and
// `reset_clock(ways)`: after a tile access the cache rebases every set's stamps to ranks
// (rebase_stamps) when asked. The cache instantiates its access loop per policy (no virtual
// calls per line). One header per policy.
#include <cstdint>
#include <string>
#include <vector>

namespace tilesim {

enum class ReplacementKind : std::uint8_t { lru, fifo, srrip, random };

bool replacement_from_name(const std::string& name, ReplacementKind& out);
std::vector<std::string> replacement_names();

/// Shared by the stamp-based policies (LRU, FIFO): when the 32-bit clock nears its end, every
/// set's stamps are replaced by their ranks, which keeps each set's order and frees the range.
void rebase_stamps(std::uint32_t* meta, std::uint32_t sets, std::uint32_t ways, std::uint32_t& clock);

}  // namespace tilesim
