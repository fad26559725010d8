#include "models/cache/replacement/replacement.hpp"

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

}  // namespace tilesim
