#pragma once
// Building the manual mode's replay program from a workload (native only: the page gets the
// program packed, sim/tools/explore/replay.hpp).
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/tools/explore/replay.hpp"
#include "workloads/kernel.hpp"

namespace tilesim::explore {

/// The requests of every block of `kernel`, in the order the simulator issues them when the
/// block runs alone on an SM: step by step, a step's loads (in access order) then its stores.
/// Cells are left empty (add them with add_cell).
ReplayProgram replay_program(const Workload& w, std::uint32_t kernel);

/// The two tile grids of a fused dataflow kernel (an FFN under `sync: dataflow`): the producer's
/// grid_m x grid_n tiles and the consumer's grid_m x consumer_n, as a chain order file's header
/// names them.
struct ChainGrids {
  std::uint32_t grid_m = 0, grid_n = 0, consumer_n = 0;
  std::uint32_t producer_tiles() const { return grid_m * grid_n; }
  std::uint32_t tiles() const { return grid_m * (grid_n + consumer_n); }
};

/// The grids of `k` when it is a fused dataflow kernel: workloads/sync/dataflow.cpp appends the
/// producer's blocks at tile_z 0 and the consumer's at tile_z >= 1 (its z offset by the
/// producer's one slice). Nothing for any other kernel.
std::optional<ChainGrids> chain_grids(const Kernel& k);

/// The fused kernel's tiles as the program's blocks: producer tile (m, n) is block
/// m * grid_n + n, consumer tile (m, j) is producer_tiles() + m * consumer_n + j. A tile's
/// blocks (a consumer's split-K slices) run one after another in block-index order, as the
/// fused kernel hands them out for a chain order file's entry.
ReplayProgram chain_replay_program(const Workload& w, std::uint32_t kernel, const ChainGrids& g);

/// Appends one cell (its sample lines) to the program.
void add_cell(ReplayProgram& p, const std::vector<Addr>& samples);

}  // namespace tilesim::explore
