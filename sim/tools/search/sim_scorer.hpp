#pragma once
// What the simulator-backed order searches (sim_order_search, sim_chain_search) score a
// candidate with: the experiment's one point, simulated exactly with one kernel's dispatch
// sequence replaced.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/experiment.hpp"

namespace tilesim {

enum class SimSearchObjective { dram, time };

class DispatchScorer {
 public:
  /// Builds point 0 of `plan`; a sweep of several points is an InputError naming `command`.
  DispatchScorer(const ExperimentPlan& plan, SimSearchObjective objective, const std::string& command);
  const Workload& workload() const { return work_; }
  const ArchSpec& arch() const { return arch_; }
  /// DRAM read bytes or duration in ns of the run with kernel `kernel` dispatching `dispatch`;
  /// +inf when that deadlocks (blocks waiting in every slot for blocks not yet dispatched).
  double score(std::size_t kernel, const std::vector<std::uint32_t>& dispatch);
  std::uint64_t simulated() const { return simulated_; }

 private:
  SimSearchObjective objective_;
  ArchSpec arch_;
  SimOptions options_;
  Workload work_;
  std::uint64_t simulated_ = 0;
};

}  // namespace tilesim
