// The simulator-backed searches' scoring (sim_scorer.hpp).
#include "sim/tools/search/sim_scorer.hpp"

#include <limits>

#include "common/error.hpp"
#include "sim/core/simulator.hpp"

namespace tilesim {

DispatchScorer::DispatchScorer(const ExperimentPlan& plan, SimSearchObjective objective, const std::string& command)
    : objective_(objective) {
  if (plan.size() != 1)
    throw InputError(plan.file + ": " + command + " searches one point; the sweep has " + std::to_string(plan.size()) +
                     " (drop it with --set 'sweep={}')");
  const ExperimentPoint p = plan.build(0);
  arch_ = p.arch;
  options_ = p.options;
  work_ = *p.workload;
}

double DispatchScorer::score(std::size_t kernel, const std::vector<std::uint32_t>& dispatch) {
  work_.kernels.at(kernel).dispatch = dispatch;
  ++simulated_;
  try {
    const SimResult r = simulate(work_, arch_, options_);
    return objective_ == SimSearchObjective::dram ? static_cast<double>(r.total.dram_read_bytes)
                                                  : static_cast<double>(r.duration) / kPsPerNs;
  } catch (const DeadlockError&) {
    return std::numeric_limits<double>::infinity();
  }
}

}  // namespace tilesim
