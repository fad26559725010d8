#pragma once
// `tilesim tune --model NAME --batch B --seq S`: tune every weight GEMM of one transformer
// layer (QKV, attention output, FFN gate/up/down) for prefill and decode, one `tilesim tune`
// search per distinct shape, and add the best times into a layer total. The attention core
// (QK^T, softmax, PV) is not a weight GEMM and is left out (tune it with a `kind: attention`
// experiment). Search space and shapes: docs/tune.md, "Tuning a transformer layer".
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/tools/tune/tune.hpp"
#include "workloads/model_presets.hpp"

namespace tilesim::tune {

struct LayerRequest {
  std::string model;
  std::uint32_t batch = 1;   ///< sequences
  std::uint32_t seq = 0;     ///< prompt length (prefill tokens per sequence; the KV length at decode)
  std::string arch = "h100";
  std::string dtype = "fp16";
  bool prefill = true, decode = true;
};

/// One weight GEMM of the layer: tokens x in -> tokens x out.
struct LayerGemm {
  std::string phase;  ///< prefill | decode
  std::string role;   ///< qkv | attn_out | ffn_gate | ffn_up | ffn_down
  std::uint32_t m = 0, n = 0, k = 0;
};

/// The layer's GEMMs in execution order, per requested phase. Prefill runs batch x seq
/// tokens, decode one token per sequence (batch). InputError for an unknown model or a
/// token count out of range.
std::vector<LayerGemm> layer_gemms(const LayerRequest& r);

/// The tune experiment of one shape: the GEMM with a default configuration (tile 128x128x64,
/// or M rounded up when smaller, 3 stages, row order) and its `tune:` axes. Named after the
/// shape alone, so equal shapes of any role or model share cache entries.
std::string layer_gemm_experiment(const LayerGemm& g, const LayerRequest& r);

struct LayerResult {
  std::vector<LayerGemm> gemms;
  std::vector<std::size_t> shape_of;  ///< gemms[i] -> index into `shapes`
  std::vector<TunePlans> plans;       ///< per distinct shape
  std::vector<Outcome> outcomes;      ///< per distinct shape
  double wall_s = 0;
};

/// Tunes each distinct shape once (equal shapes, e.g. gate and up, reuse the first search).
LayerResult tune_layer(const LayerRequest& r, const Settings& settings);

/// The per-GEMM table and the layer total of each phase, then the search's cost.
void print_layer(std::ostream& out, const LayerRequest& r, const LayerResult& result, const Settings& settings);

/// Writes DIR/PHASE_ROLE.yaml (the best configuration of each GEMM) and returns the paths.
std::vector<std::string> write_layer_best(const LayerResult& result, const std::string& dir);

}  // namespace tilesim::tune
