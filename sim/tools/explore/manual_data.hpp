#pragma once
// The explorer's manual mode in the page's data (docs/explore.md, `view.manual`): the replay
// program the WebAssembly module runs, the L2 it runs through, and the experiment that makes
// `tilesim run` reproduce a clicked order. Two kinds: one GEMM (the order file lists its tiles)
// and a producer/consumer chain fused under `sync: dataflow` (a chain order file).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/experiment.hpp"

namespace tilesim::explore {

/// Largest grid (tiles of one GEMM; of each GEMM of a chain) the manual mode is offered for.
inline constexpr std::uint32_t kMaxManualTiles = 4096;

/// The manual mode's experiment: point `point` as `tilesim run` reproduces a manual order —
/// order from the file `@ORDER_FILE@`, one SM, one block per SM (a chain: the fused kernel's
/// `sync.blocks_per_sm`, its `after`/`rows` dropped); sweep/tune/validate removed and a
/// relative arch file made absolute. Empty when the point is neither a single GEMM nor an
/// FFN under `sync: dataflow`, with `why` set.
std::string manual_experiment_yaml(const ExperimentPlan& plan, std::size_t point, std::string& why);

/// The manual mode's `l2` object: the L2's shape, and the ids the WebAssembly module takes
/// for its hash (0 modulo, 1 xor_fold, 2 page_mix) and replacement (0 lru, 1 fifo, 2 srrip, 3 random).
nlohmann::json manual_l2_json(const L2Spec& l2);

/// Sets v["manual"] (the replay program over `samples`' cells, the L2, the experiment) or,
/// where the mode is not offered, v["manual"] = null and v["manual_note"] saying why.
void add_manual(nlohmann::json& v, const ExperimentPlan& plan, std::size_t point, const ExperimentPoint& p,
                const std::vector<std::vector<Addr>>& samples);

}  // namespace tilesim::explore
