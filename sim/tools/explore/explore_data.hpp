#pragma once
// The explorer's data (docs/explore.md, "The page's data"): one experiment point simulated with
// an observer that records every dispatch, the cumulative L2 counters between dispatches and
// snapshots of which tiles of the read tensors the L2 holds; plus the manual mode's replay
// program. The page (sim/tools/explore/page.hpp) draws only what is in here.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/experiment.hpp"

namespace tilesim::explore {

/// Budget for residency bytes per view (snapshots x cells); beyond it snapshots are spaced out.
inline constexpr std::uint64_t kResidencyBudget = 2u << 20;
/// Most cells a tensor is cut into.
inline constexpr std::uint32_t kMaxCellsPerTensor = 4096;

/// How a tensor is cut into residency cells (a tile of its kernel's loads, merged down to
/// kMaxCellsPerTensor); tensors nobody reads have no cells (first = -1).
struct TensorCells {
  std::uint32_t cell_rows = 0, cell_cols = 0, grid_rows = 0, grid_cols = 0;
  std::int64_t first = -1;
};

/// Cuts every read tensor of `w` (batch 0) and returns each cell's sample line addresses.
std::vector<TensorCells> cut_cells(const Workload& w, std::uint32_t line_bytes,
                                   std::vector<std::vector<Addr>>& samples);

/// Point `point` of `plan` simulated and recorded as one view. `label` names it on the page.
nlohmann::json explore_view(const ExperimentPlan& plan, std::size_t point, const std::string& label);

/// The page's whole data: {"format", "version", "views"}.
nlohmann::json explore_data(std::vector<nlohmann::json> views);

}  // namespace tilesim::explore
