#pragma once
// The replacement family: every policy the L2 can be built with, in the order the explorer
// numbers them. A new policy is its header, its test and an entry here.
#include "common/policy_list.hpp"
#include "models/cache/replacement/fifo.hpp"
#include "models/cache/replacement/lru.hpp"
#include "models/cache/replacement/random.hpp"
#include "models/cache/replacement/srrip.hpp"

namespace tilesim {

using ReplacementPolicies = PolicyList<LruPolicy, FifoPolicy, SrripPolicy, RandomPolicy>;

}  // namespace tilesim
