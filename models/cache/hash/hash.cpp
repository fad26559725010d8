#include "models/cache/hash/family.hpp"

namespace tilesim {

std::vector<std::string> hash_names() { return HashPolicies::names(); }
std::vector<NamedPolicy> hash_policies() { return HashPolicies::described(); }

}  // namespace tilesim
