#pragma once
// The set-hash family: every hash the L2 can be built with, in the order the explorer numbers
// them. A new hash is its header, its test and an entry here.
#include "common/policy_list.hpp"
#include "models/cache/hash/modulo.hpp"
#include "models/cache/hash/page_mix.hpp"
#include "models/cache/hash/xor_fold.hpp"

namespace tilesim {

using HashPolicies = PolicyList<ModuloHash, XorFoldHash, PageMixHash>;

}  // namespace tilesim
