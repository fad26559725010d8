#pragma once
// The layer stage of `tilesim tune --model`: after each kernel of a transformer layer has been
// tuned alone, simulate the whole layer as one `kind: layer` workload (the L2 carried from
// kernel to kernel, the attention core included) and search the kernels' configurations
// jointly by bounded coordinate descent over each kernel's best isolated candidates. What is
// searched: docs/tune.md, "Tuning a transformer layer".
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/tools/tune/tune.hpp"

namespace tilesim::tune {

struct LayerRequest;

/// One configuration of one kernel of the layer, as the layer's `kernels:` entries take it.
struct KernelOption {
  // Copies share their YAML nodes and assigning a YAML::Node writes through to the node it
  // refers to: sort and reorder indices into vectors of options, never the options themselves.
  YAML::Node keys;                   ///< tile, stages, split_k (GEMMs); block_q, block_kv, split_kv (attention)
  YAML::Node order;                  ///< its launch order
  std::optional<Measured> isolated;  ///< its simulated time alone; absent for a derived configuration
  std::string derived;               ///< why it is not an isolated candidate (empty when it is one)
};

/// "128x256x64 s3 grouped(8)": an option as the tables print it.
std::string option_text(const KernelOption& o);

/// The simulated candidates of an isolated search, best first by the objective (ties in sweep
/// order); none when it simulated none.
std::vector<KernelOption> ranked_options(const TunePlans& plans, const Outcome& o, Objective objective);

/// The isolated searches' options of one phase, each best first.
struct LayerOptions {
  std::vector<KernelOption> qkv, attention, out_proj;
  std::vector<KernelOption> ffn_up;    ///< gate and up (one shape): the FFN's gemm0
  std::vector<KernelOption> ffn_down;  ///< the FFN's gemm1
};

/// One role's kernel in the layer: its isolated best and what the layer stage chose.
struct LayerStageRow {
  std::string role;  ///< qkv, attention, attn_out, ffn_gate, ffn_up, ffn_down
  KernelOption isolated;       ///< the kernel's isolated best
  KernelOption start, chosen;  ///< in (a), the start (the isolated best, or the FFN's agreeing pair), and in (b)
  double start_ns = 0, chosen_ns = 0;  ///< in-layer times (the role's kernels' durations)
};

struct LayerStage {
  std::string phase;
  std::vector<LayerStageRow> rows;  ///< in the layer's order
  Measured start, best;             ///< the layer: (a) the isolated bests together, (b) the chosen configuration
  std::string start_yaml, best_yaml;
  std::size_t layers = 0;           ///< distinct layer configurations evaluated
  std::size_t simulated = 0, cached = 0, passes = 0;
  double wall_s = 0;
  std::string note;  ///< how the FFN's start differs from the isolated bests, when it must
};

/// The experiment of a whole layer (`kind: layer`, stream order) of phase `phase` with the
/// given kernel options: ready for `tilesim run`.
std::string layer_experiment(const LayerRequest& r, const std::string& phase, const KernelOption& qkv,
                             const KernelOption& attention, const KernelOption& out_proj, const KernelOption& ffn_up,
                             const KernelOption& ffn_down);

/// Starts from the isolated bests (for the FFN the best pair it can run together: one bm, one
/// order) and does coordinate descent over the top `top` options of each kernel group (QKV,
/// attention, output projection, FFN pair), at most `max_passes` passes, keeping a change only
/// when it lowers the layer's objective.
LayerStage run_layer_stage(const LayerRequest& r, const std::string& phase, const LayerOptions& options,
                           std::size_t top, const Settings& settings);

inline constexpr std::size_t kLayerMaxPasses = 3;

}  // namespace tilesim::tune
