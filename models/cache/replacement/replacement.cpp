#include "models/cache/replacement/replacement.hpp"

#include <algorithm>
#include <numeric>

namespace tilesim {

bool replacement_from_name(const std::string& name, ReplacementKind& out) {
  if (name == "lru") out = ReplacementKind::lru;
  else if (name == "fifo") out = ReplacementKind::fifo;
  else if (name == "srrip") out = ReplacementKind::srrip;
  else if (name == "random") out = ReplacementKind::random;
  else return false;
  return true;
}

std::vector<std::string> replacement_names() { return {"lru", "fifo", "srrip", "random"}; }

void rebase_stamps(std::uint32_t* meta, std::uint32_t sets, std::uint32_t ways, std::uint32_t& clock) {
  std::vector<std::uint32_t> idx(ways);
  for (std::uint32_t s = 0; s < sets; ++s) {
    std::uint32_t* m = meta + static_cast<std::uint64_t>(s) * ways;
    std::iota(idx.begin(), idx.end(), 0u);
    std::sort(idx.begin(), idx.end(), [&](std::uint32_t a, std::uint32_t b) { return m[a] < m[b]; });
    for (std::uint32_t r = 0; r < ways; ++r) m[idx[r]] = r;
  }
  clock = ways;
}

}  // namespace tilesim
