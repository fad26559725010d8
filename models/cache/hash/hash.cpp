#include "models/cache/hash/hash.hpp"

namespace tilesim {

bool hash_from_name(const std::string& name, HashKind& out) {
  if (name == "modulo") out = HashKind::modulo;
  else if (name == "xor_fold") out = HashKind::xor_fold;
  else return false;
  return true;
}

std::vector<std::string> hash_names() { return {"modulo", "xor_fold"}; }

}  // namespace tilesim
