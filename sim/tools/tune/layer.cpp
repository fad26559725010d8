#include "sim/tools/tune/layer.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <tuple>

#include "common/error.hpp"
#include "models/arch.hpp"
#include "workloads/gemm.hpp"

namespace tilesim::tune {

namespace fs = std::filesystem;

std::vector<LayerGemm> layer_gemms(const LayerRequest& r) {
  const ModelPreset* model = find_model_preset(r.model);
  if (!model) throw InputError("--model: unknown model '" + r.model + "'; expected one of " + model_preset_names());
  if (r.batch == 0) throw InputError("--batch: expected a positive number of sequences");
  if (r.seq == 0)
    throw InputError(r.prefill ? "--seq: expected a positive prompt length for the prefill phase"
                               : "--seq: expected the decode phase's KV-cache length (its attention reads "
                                 "seq positions)");
  if (r.layer_top > 0 && r.dtype != "fp16" && r.dtype != "bf16")
    throw InputError("--dtype: the layer stage simulates kind: layer, which takes fp16 or bf16, got '" + r.dtype +
                     "' (--layer-top 0 tunes the kernels alone)");
  const std::uint64_t prefill_tokens = std::uint64_t(r.batch) * r.seq;
  if (r.prefill && prefill_tokens > (1u << 22))
    throw InputError("--batch x --seq = " + std::to_string(prefill_tokens) + " prefill tokens, over the GEMM limit of 4194304 rows");
  const std::uint32_t q_width = model->heads * model->head_dim;
  const std::uint32_t qkv_width = (model->heads + 2 * model->kv_heads) * model->head_dim;
  std::vector<LayerGemm> out;
  const auto phase = [&](const std::string& name, std::uint32_t tokens) {
    out.push_back({name, "qkv", tokens, qkv_width, model->d});
    out.push_back({name, "attn_out", tokens, model->d, q_width});
    if (model->gated) out.push_back({name, "ffn_gate", tokens, model->f, model->d});
    out.push_back({name, "ffn_up", tokens, model->f, model->d});
    out.push_back({name, "ffn_down", tokens, model->d, model->f});
  };
  if (r.prefill) phase("prefill", static_cast<std::uint32_t>(prefill_tokens));
  if (r.decode) phase("decode", r.batch);
  if (out.empty()) throw InputError("--phase: nothing to tune");
  return out;
}

namespace {

std::string num(std::uint64_t v) { return std::to_string(v); }

std::string shape_text(const LayerGemm& g) { return num(g.m) + "x" + num(g.n) + "x" + num(g.k); }

}  // namespace

std::string layer_gemm_experiment(const LayerGemm& g, const LayerRequest& r) {
  // The base tile is the one kind: ffn gives its projections.
  const std::uint32_t base_bm = default_tile_rows(g.m, load_arch(r.arch, YAML::Node(), "--arch"));
  // Search space (docs/tune.md): tiles over bm x bn with bk 64; small M (decode) also tries
  // narrow tiles and split-K, because a few output tiles leave most SMs idle; launch orders
  // only matter when there are several tile rows.
  const bool small = g.m < 256;
  const std::vector<std::uint32_t> bms = small ? std::vector<std::uint32_t>{16, 32, 64, 128}
                                               : std::vector<std::uint32_t>{64, 128, 256};
  std::string tiles;
  for (std::uint32_t bm : bms)
    for (std::uint32_t bn : {64u, 128u, 256u})
      tiles += std::string(tiles.empty() ? "" : ", ") + "[" + num(bm) + ", " + num(bn) + ", 64]";
  std::string y;
  y += "# tilesim tune --model " + r.model + ": the " + g.phase + " " + g.role + " GEMM (tokens x in -> tokens x out)\n";
  y += "name: gemm " + shape_text(g) + " " + r.dtype + "\n";
  y += "arch: " + r.arch + "\n";
  y += "workload:\n  kind: gemm\n  m: " + num(g.m) + "\n  n: " + num(g.n) + "\n  k: " + num(g.k) + "\n";
  y += "  dtype: " + r.dtype + "\n";
  y += "  layout: {a: row, b: col, c: row}  # nn.Linear weights: [out x in] row-major\n";
  y += "  tile: [" + num(base_bm) + ", 128, 64]\n  stages: 3\n";
  y += "order: {kind: row}\n";
  y += "tune:\n  workload.tile: [" + tiles + "]\n  workload.stages: [3, 4]\n";
  if (small) y += "  workload.split_k: [1, 2, 4]\n";
  else y += "  order: [{kind: row}, {kind: grouped, group_m: 8}, {kind: swizzle, log_tile: 2}]\n";
  return y;
}

std::string attention_shape_text(const std::string& phase, const LayerRequest& r) {
  const ModelPreset& m = *find_model_preset(r.model);
  const bool prefill = phase == "prefill";
  return num(r.batch) + "x" + num(m.heads) + "h q" + num(prefill ? r.seq : 1) + " kv" + num(prefill ? r.seq : r.seq + 1);
}

std::string layer_attention_experiment(const std::string& phase, const LayerRequest& r) {
  const ModelPreset& m = *find_model_preset(r.model);
  const bool prefill = phase == "prefill";
  // The layer's attention: causal, Q, K and V of this step; decode's query attends to the
  // seq cached positions and its own.
  std::string y = "# tilesim tune --model " + r.model + ": the " + phase + " attention core\n";
  y += "name: attention " + attention_shape_text(phase, r) + " kvh" + num(m.kv_heads) + " d" + num(m.head_dim) + " " +
       r.dtype + "\n";
  y += "arch: " + r.arch + "\n";
  y += "workload: {kind: attention, batch: " + num(r.batch) + ", heads: " + num(m.heads) + ", kv_heads: " +
       num(m.kv_heads) + ", seq_q: " + num(prefill ? r.seq : 1) + ", seq_kv: " + num(prefill ? r.seq : r.seq + 1) +
       ", head_dim: " + num(m.head_dim) + ", dtype: " + r.dtype + ", causal: true}\n";
  y += "order: {kind: row}\n";
  // Prefill: query and KV tile heights; decode has one query row, so the KV tiles and the
  // flash-decoding split, which spreads a few heads over more SMs. Illegal points are skipped.
  if (prefill) y += "tune:\n  workload.block_q: [32, 64, 128]\n  workload.block_kv: [64, 128]\n";
  else y += "tune:\n  workload.split_kv: [1, 2, 4, 8]\n  workload.block_kv: [64, 128]\n";
  return y;
}

namespace {

// The isolated options of one phase, best first, for the layer stage.
LayerOptions phase_options(const LayerResult& res, std::size_t phase_index, Objective obj) {
  LayerOptions o;
  const std::string& phase = res.phases[phase_index];
  o.attention = ranked_options(res.attention_plans[phase_index], res.attention[phase_index], obj);
  for (std::size_t i = 0; i < res.gemms.size(); ++i) {
    if (res.gemms[i].phase != phase) continue;
    const std::string& role = res.gemms[i].role;
    std::vector<KernelOption>* slot = role == "qkv" ? &o.qkv : role == "attn_out" ? &o.out_proj
                                    : role == "ffn_up" ? &o.ffn_up : role == "ffn_down" ? &o.ffn_down : nullptr;
    if (slot) *slot = ranked_options(res.plans[res.shape_of[i]], res.outcomes[res.shape_of[i]], obj);
  }
  return o;
}

}  // namespace

LayerResult tune_layer(const LayerRequest& r, const Settings& settings) {
  const auto t0 = std::chrono::steady_clock::now();
  LayerResult res;
  res.gemms = layer_gemms(r);
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::size_t> seen;
  for (const LayerGemm& g : res.gemms) {
    const auto key = std::make_tuple(g.m, g.n, g.k);
    auto it = seen.find(key);
    if (it == seen.end()) {
      const std::string origin = "tilesim tune --model " + r.model + " (" + g.phase + " " + g.role + ")";
      it = seen.emplace(key, res.plans.size()).first;
      res.plans.push_back(load_tune_plans_text(layer_gemm_experiment(g, r), origin, ".", {}));
      res.outcomes.push_back(run_tune(res.plans.back(), settings));
    }
    res.shape_of.push_back(it->second);
    if (res.phases.empty() || res.phases.back() != g.phase) res.phases.push_back(g.phase);
  }
  // The attention's few points are all simulated: the analytic estimate scores a non-GEMM
  // kernel by its tensors' bytes alone, which the tile heights barely change.
  Settings all = settings;
  all.strategy = Strategy::exhaustive;
  for (const std::string& phase : res.phases) {
    const std::string origin = "tilesim tune --model " + r.model + " (" + phase + " attention)";
    res.attention_plans.push_back(load_tune_plans_text(layer_attention_experiment(phase, r), origin, ".", {}));
    res.attention.push_back(run_tune(res.attention_plans.back(), all));
  }
  if (r.layer_top > 0)
    for (std::size_t p = 0; p < res.phases.size(); ++p)
      res.stages.push_back(
          run_layer_stage(r, res.phases[p], phase_options(res, p, settings.objective), r.layer_top, settings));
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

std::vector<std::string> write_layer_best(const LayerResult& res, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw InputError(dir + ": cannot create the output folder (-o)");
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < res.gemms.size(); ++i) {
    const std::size_t sh = res.shape_of[i];
    if (!res.outcomes[sh].best) continue;
    const std::string path = (fs::path(dir) / (res.gemms[i].phase + "_" + res.gemms[i].role + ".yaml")).string();
    std::ofstream f(path, std::ios::binary);
    f << best_yaml(res.plans[sh], res.outcomes[sh]);
    if (!f) throw InputError(path + ": write failed (-o)");
    paths.push_back(path);
  }
  for (const LayerStage& st : res.stages) {
    const std::string path = (fs::path(dir) / (st.phase + "_layer.yaml")).string();
    std::ofstream f(path, std::ios::binary);
    f << st.best_yaml;
    if (!f) throw InputError(path + ": write failed (-o)");
    paths.push_back(path);
  }
  return paths;
}

}  // namespace tilesim::tune
