#include "sim/tools/tune/layer.hpp"

#include <chrono>
#include <cstdio>
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
  if (r.prefill && r.seq == 0) throw InputError("--seq: expected a positive prompt length for the prefill phase");
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
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

void print_layer(std::ostream& out, const LayerRequest& r, const LayerResult& res, const Settings& s) {
  out << "tune layer: " << r.model << "  batch " << r.batch << "  seq " << r.seq << "  arch " << r.arch << "  "
      << r.dtype << "  " << settings_text(s) << "\n";
  char buf[512];
  std::vector<bool> reported(res.plans.size(), false);
  std::string phase;
  double total = 0, base_total = 0, dram = 0;
  const auto flush = [&]() {
    if (phase.empty()) return;
    std::snprintf(buf, sizeof buf, "  %-9s %-20s %10.1f %9.1f %8.3fx  (default configs: %.1f us)\n", "layer", "",
                  total / 1e3, dram / 1e6, total > 0 ? base_total / total : 0.0, base_total / 1e3);
    out << buf;
  };
  for (std::size_t i = 0; i < res.gemms.size(); ++i) {
    const LayerGemm& g = res.gemms[i];
    if (g.phase != phase) {
      flush();
      phase = g.phase;
      total = base_total = dram = 0;
      const std::uint64_t tokens = g.m;
      out << "\n" << phase << ": " << tokens << " tokens"
          << (phase == "prefill" ? " (batch " + num(r.batch) + " x seq " + num(r.seq) + ")"
                                 : " (one per sequence; the KV cache is read by attention, not by these GEMMs)")
          << "\n";
      std::snprintf(buf, sizeof buf, "  %-9s %-20s %10s %9s %9s  %s\n", "gemm", "MxNxK", "time_us", "dram_mb", "speedup",
                    "best configuration [search]");
      out << buf;
    }
    const std::size_t sh = res.shape_of[i];
    const Outcome& o = res.outcomes[sh];
    const Measured& best = o.best ? *o.candidates[*o.best].measured : o.base;
    std::string note;
    if (reported[sh]) {
      note = "[same shape as above: reused]";
    } else {
      note = "[" + num(o.legal) + " legal, " + num(o.simulated) + " simulated, " + num(o.from_cache) + " cached";
      if (o.gap) {
        std::snprintf(buf, sizeof buf, ", gap %.2f%%", 100 * *o.gap);
        note += buf;
      }
      note += "]";
      reported[sh] = true;
    }
    const std::string label = o.best ? o.candidates[*o.best].label : o.base_label;
    std::snprintf(buf, sizeof buf, "  %-9s %-20s %10.1f %9.1f %8.3fx  %s %s\n", g.role.c_str(), shape_text(g).c_str(),
                  best.duration_ns / 1e3, best.dram_bytes / 1e6,
                  objective_value(best, s.objective) > 0
                      ? objective_value(o.base, s.objective) / objective_value(best, s.objective)
                      : 0.0,
                  label.c_str(), note.c_str());
    out << buf;
    total += best.duration_ns;
    base_total += o.base.duration_ns;
    dram += best.dram_bytes;
  }
  flush();
  std::size_t simulated = 0, cached = 0;
  for (const Outcome& o : res.outcomes) {
    simulated += o.simulated;
    cached += o.from_cache;
  }
  std::snprintf(buf, sizeof buf, "%.2f s", res.wall_s);
  out << "\nsearch: " << res.gemms.size() << " GEMMs, " << res.plans.size() << " distinct shapes tuned; " << simulated
      << " points simulated, " << cached << " from cache; " << buf << "\n"
      << "layer = the sum of the GEMMs' best times, run one after another (attention core excluded)\n";
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
  return paths;
}

}  // namespace tilesim::tune
