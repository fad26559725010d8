#include "models/cache/replacement/family.hpp"

namespace tilesim {

std::vector<std::string> replacement_names() { return ReplacementPolicies::names(); }
std::vector<NamedPolicy> replacement_policies() { return ReplacementPolicies::described(); }

}  // namespace tilesim
