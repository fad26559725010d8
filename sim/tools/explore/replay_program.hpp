#pragma once
// Building the manual mode's replay program from a workload (native only: the page gets the
// program packed, sim/tools/explore/replay.hpp).
#include <cstdint>
#include <vector>

#include "sim/tools/explore/replay.hpp"
#include "workloads/kernel.hpp"

namespace tilesim::explore {

/// The requests of every block of `kernel`, in the order the simulator issues them when the
/// block runs alone on an SM: step by step, a step's loads (in access order) then its stores.
/// Cells are left empty (add them with add_cells).
ReplayProgram replay_program(const Workload& w, std::uint32_t kernel);

/// Appends one cell (its sample lines) to the program.
void add_cell(ReplayProgram& p, const std::vector<Addr>& samples);

}  // namespace tilesim::explore
