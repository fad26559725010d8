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

/// One kernel's reads of an intermediate through one tensor (the tensor itself or a view of it,
/// such as a layer's Q inside its QKV projection's output).
struct IntermediateRead {
  std::string tensor;    ///< the tensor read
  std::string storage;   ///< the tensor holding its bytes (itself, or the view's parent)
  std::string producer;  ///< the kernel that wrote them last before `consumer` (or `consumer` itself, fused)
  std::string consumer;  ///< the kernel reading
  std::uint64_t read_sectors = 0, read_hit_sectors = 0;
  double read_hit_rate() const {
    return read_sectors ? static_cast<double>(read_hit_sectors) / static_cast<double>(read_sectors) : 0.0;
  }
};

struct ChainSummary {
  std::vector<std::string> intermediates;  ///< tensors both written and read in the run (views by their parent)
  std::uint64_t intermediate_read_sectors = 0;
  std::uint64_t intermediate_read_hit_sectors = 0;
  std::uint64_t wait_ps = 0;               ///< all kernels' block-time spent waiting
  /// Whether some tensor is a view of another's bytes (a layer's Q, K, V, O); only then are the
  /// intermediates' reads listed one by one in `reads` (and in the result JSON).
  bool views = false;
  std::vector<IntermediateRead> reads;
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
