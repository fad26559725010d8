#pragma once
// `tilesim tune --model NAME --batch B --seq S`: tune every kernel of one transformer layer
// (the weight GEMMs QKV, attention output, FFN gate/up/down, one `tilesim tune` search per
// distinct shape, and the attention core) alone for prefill and decode, then simulate the whole
// layer as one `kind: layer` workload with the L2 carried between kernels and search the
// kernels' configurations jointly (layer_stage.hpp). Search spaces and shapes: docs/tune.md,
// "Tuning a transformer layer".
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/tools/tune/layer_stage.hpp"
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
  std::size_t layer_top = 3;  ///< options per kernel group in the layer stage; 0: no layer stage
};

/// One weight GEMM of the layer: tokens x in -> tokens x out.
struct LayerGemm {
  std::string phase;  ///< prefill | decode
  std::string role;   ///< qkv | attn_out | ffn_gate | ffn_up | ffn_down
  std::uint32_t m = 0, n = 0, k = 0;
};

/// The layer's GEMMs in execution order, per requested phase. Prefill runs batch x seq
/// tokens, decode one token per sequence (batch) after a KV cache of seq positions. InputError
/// for an unknown model, a token count out of range, or a dtype the layer stage cannot run.
std::vector<LayerGemm> layer_gemms(const LayerRequest& r);

/// The tune experiment of one shape: the GEMM with a default configuration (tile 128x128x64,
/// or M rounded up when smaller, 3 stages, row order) and its `tune:` axes. Named after the
/// shape alone, so equal shapes of any role or model share cache entries.
std::string layer_gemm_experiment(const LayerGemm& g, const LayerRequest& r);

/// The tune experiment of the phase's attention core alone (`kind: attention`, causal, the
/// layer's heads; decode: one query per sequence over seq + 1 keys): prefill searches block_q
/// and block_kv, decode split_kv and block_kv; the base is the generator's defaults.
std::string layer_attention_experiment(const std::string& phase, const LayerRequest& r);

/// "4x32h q256 kv256": the attention's shape as the tables print it.
std::string attention_shape_text(const std::string& phase, const LayerRequest& r);

struct LayerResult {
  std::vector<LayerGemm> gemms;
  std::vector<std::size_t> shape_of;  ///< gemms[i] -> index into `shapes`
  std::vector<TunePlans> plans;       ///< per distinct shape
  std::vector<Outcome> outcomes;      ///< per distinct shape
  std::vector<std::string> phases;    ///< in order
  std::vector<TunePlans> attention_plans;  ///< per phase
  std::vector<Outcome> attention;          ///< per phase: the attention searched alone (exhaustively)
  std::vector<LayerStage> stages;          ///< per phase; empty without the layer stage
  double wall_s = 0;
};

/// Tunes each distinct shape once (equal shapes, e.g. gate and up, reuse the first search),
/// each phase's attention, then (layer_top > 0) each phase's whole layer.
LayerResult tune_layer(const LayerRequest& r, const Settings& settings);

/// The per-kernel table and the summed total of each phase, the layer stage's table (isolated
/// best, in-layer times, the layer-tuned choice and the two layer totals), then the search's cost.
void print_layer(std::ostream& out, const LayerRequest& r, const LayerResult& result, const Settings& settings);

/// The same as JSON (`tilesim tune --model ... --json FILE`; docs/tune.md gives the fields).
nlohmann::json layer_json(const LayerRequest& r, const LayerResult& result, const Settings& settings);

/// Writes DIR/PHASE_ROLE.yaml (the best configuration of each GEMM alone), and with the layer
/// stage DIR/PHASE_layer.yaml (the layer-tuned layer, `kind: layer`), and returns the paths.
std::vector<std::string> write_layer_best(const LayerResult& result, const std::string& dir);

}  // namespace tilesim::tune
