#pragma once
// What matters for a producer -> consumer chain as a whole: the intermediate tensors (written
// and read within the run) and how much of their reading hit in L2, and the waiting time.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/stats.hpp"

namespace tilesim {

struct ChainSummary {
  std::vector<std::string> intermediates;  ///< tensors both written and read in the run
  std::uint64_t intermediate_read_sectors = 0;
  std::uint64_t intermediate_read_hit_sectors = 0;
  std::uint64_t wait_ps = 0;               ///< all kernels' block-time spent waiting
  double intermediate_read_hit_rate() const {
    return intermediate_read_sectors ? static_cast<double>(intermediate_read_hit_sectors) /
                                           static_cast<double>(intermediate_read_sectors)
                                     : 0.0;
  }
};

ChainSummary summarize_chain(const SimResult& r);

/// One row per point: time, DRAM bytes, the intermediates' L2 read hit rate, waiting time —
/// printed after the kernel table when some point has more than one kernel or intermediates.
void print_chain_summary(std::ostream& out, const std::vector<nlohmann::json>& results);

}  // namespace tilesim
