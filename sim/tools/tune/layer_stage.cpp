#include "sim/tools/tune/layer_stage.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "sim/tools/tune/layer.hpp"
#include "workloads/model_presets.hpp"

namespace tilesim::tune {

namespace {

std::string num(std::uint64_t v) { return std::to_string(v); }

std::string scalar(const YAML::Node& n, const char* key) {
  return n[key] && n[key].IsScalar() ? n[key].Scalar() : std::string();
}

}  // namespace

std::string option_text(const KernelOption& o) {
  std::string s;
  const auto add = [&](const std::string& part) { s += (s.empty() ? "" : " ") + part; };
  if (const YAML::Node t = o.keys["tile"]; t && t.IsSequence() && t.size() == 3)
    add(t[0].Scalar() + "x" + t[1].Scalar() + "x" + t[2].Scalar());
  for (const auto& [key, abbrev] : {std::pair{"block_q", "bq"}, {"block_kv", "bkv"}, {"stages", "s"}})
    if (const std::string v = scalar(o.keys, key); !v.empty()) add(abbrev + v);
  for (const auto& [key, abbrev] : {std::pair{"split_k", "splitk"}, {"split_kv", "splitkv"}})
    if (const std::string v = scalar(o.keys, key); !v.empty() && v != "1") add(abbrev + v);
  const std::string kind = scalar(o.order, "kind");
  if (kind == "grouped") add("grouped(" + scalar(o.order, "group_m") + ")");
  else if (kind == "swizzle") add("swizzle(" + scalar(o.order, "log_tile") + ")");
  else if (!kind.empty()) add(kind);
  return s.empty() ? "defaults" : s;
}

std::vector<KernelOption> ranked_options(const TunePlans& plans, const Outcome& o, Objective objective) {
  std::vector<std::size_t> done;
  for (std::size_t c = 0; c < o.candidates.size(); ++c)
    if (o.candidates[c].measured) done.push_back(c);
  const auto val = [&](std::size_t c) { return objective_value(*o.candidates[c].measured, objective); };
  std::stable_sort(done.begin(), done.end(), [&](std::size_t a, std::size_t b) { return val(a) < val(b); });
  std::vector<KernelOption> out;
  for (std::size_t c : done) {
    const YAML::Node point = plans.search.point_yaml(o.candidates[c].index);
    const YAML::Node w = point["workload"];
    KernelOption opt;
    opt.keys = YAML::Node(YAML::NodeType::Map);
    // The kernel keys the layer's `kernels:` entries take; the shape comes from the layer.
    for (const char* key : {"tile", "stages", "split_k", "block_q", "block_kv", "split_kv"})
      if (w[key]) opt.keys[key] = YAML::Clone(w[key]);
    opt.order = point["order"] ? YAML::Clone(point["order"]) : YAML::Load("{kind: row}");
    opt.isolated = *o.candidates[c].measured;
    out.push_back(opt);
  }
  return out;
}

std::string layer_experiment(const LayerRequest& r, const std::string& phase, const KernelOption& qkv,
                             const KernelOption& attention, const KernelOption& out_proj, const KernelOption& ffn_up,
                             const KernelOption& ffn_down) {
  const ModelPreset* model = find_model_preset(r.model);
  if (!model) throw InputError("--model: unknown model '" + r.model + "'");
  const auto kernel = [](const KernelOption& o) {
    YAML::Node n = YAML::Clone(o.keys);
    n["order"] = YAML::Clone(o.order);
    return n;
  };
  YAML::Node w(YAML::NodeType::Map);
  w["kind"] = "layer";
  w["model"] = r.model;
  w["phase"] = phase;
  w["batch"] = r.batch;
  // Decode: one new token per sequence after a KV cache of --seq positions.
  w["seq"] = phase == "prefill" ? r.seq : 1u;
  if (phase == "decode") w["context"] = r.seq;
  w["dtype"] = r.dtype;
  YAML::Node k(YAML::NodeType::Map);
  k["qkv"] = kernel(qkv);
  k["attention"] = kernel(attention);
  k["out_proj"] = kernel(out_proj);
  YAML::Node ffn(YAML::NodeType::Map);
  // Separate gate and up kernels, as the isolated search tunes them (one shape, one config).
  if (model->gated) ffn["gate_fusion"] = "separate";
  ffn["gemm0"] = YAML::Clone(ffn_up.keys);
  ffn["gemm1"] = YAML::Clone(ffn_down.keys);
  ffn["order"] = YAML::Clone(ffn_up.order);  // one launch order for the FFN's GEMMs
  k["ffn"] = ffn;
  w["kernels"] = k;
  YAML::Node root(YAML::NodeType::Map);
  root["name"] = "layer " + r.model + " " + phase + " batch " + num(r.batch) + " seq " + num(r.seq) + " " + r.dtype;
  root["arch"] = r.arch;
  root["workload"] = w;
  return "# tilesim tune --model " + r.model + ": one " + phase +
         " layer (kind: layer, stream order, L2 carried between kernels)\n" + yaml_document(root);
}

namespace {

using Config = std::array<std::size_t, 4>;  // option index per group: qkv, attention, out_proj, ffn
using FfnPair = std::pair<KernelOption, KernelOption>;

bool runs_together(const KernelOption& a, const KernelOption& b) {
  return a.keys["tile"][0].Scalar() == b.keys["tile"][0].Scalar() &&
         yaml_document(a.order) == yaml_document(b.order);
}

// kind: layer's FFN gives gemm0 and gemm1 one bm (consumer rows match producer rows) and one
// launch order, so the FFN's options are pairs that agree, by the sum of their isolated values.
std::vector<FfnPair> ffn_pairs(const LayerOptions& o, std::size_t top, Objective obj, std::string& note) {
  // Indices are sorted, never options: assigning a YAML::Node writes through to the node it
  // shares, so sorting the options themselves would mix their keys.
  std::vector<std::pair<double, std::pair<std::size_t, std::size_t>>> pairs;
  for (std::size_t i = 0; i < o.ffn_up.size(); ++i)
    for (std::size_t j = 0; j < o.ffn_down.size(); ++j)
      if (runs_together(o.ffn_up[i], o.ffn_down[j]))
        pairs.push_back({objective_value(*o.ffn_up[i].isolated, obj) + objective_value(*o.ffn_down[j].isolated, obj),
                         {i, j}});
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<FfnPair> out;
  for (std::size_t p = 0; p < pairs.size() && out.size() < top; ++p)
    out.emplace_back(o.ffn_up[pairs[p].second.first], o.ffn_down[pairs[p].second.second]);
  if (out.empty()) {
    // No simulated pair agrees: the down projection takes the up projection's bm and order.
    const KernelOption& up = o.ffn_up.front();
    KernelOption b{YAML::Clone(o.ffn_down.front().keys), YAML::Clone(up.order), std::nullopt,
                   "bm and order of ffn_up's best"};
    b.keys["tile"][0] = up.keys["tile"][0].as<std::uint32_t>();
    out.emplace_back(up, b);
  }
  if (pairs.empty() || pairs.front().second != std::pair<std::size_t, std::size_t>{0, 0})
    note = "the layer's FFN runs gemm0 and gemm1 with one bm and one launch order; the isolated bests differ, so (a) "
           "starts from the best pair that agrees";
  return out;
}

std::vector<KernelOption> top_of(const std::vector<KernelOption>& v, std::size_t top, const char* role) {
  if (v.empty()) throw InputError(std::string("tune --model: the isolated search of ") + role + " simulated no point");
  return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(top, v.size()))};
}

// The kernels of the layer (names after "L0.") that make up each role.
double role_ns(const Measured& m, const std::string& role, bool gated) {
  std::vector<std::string> names;
  if (role == "attention") names = {"attention", "attention_split", "attention_combine", "qk", "softmax", "pv"};
  else if (role == "attn_out") names = {"out_proj"};
  else if (role == "ffn_gate") names = {"gate"};
  else if (role == "ffn_up") names = {gated ? "up" : "gemm0"};
  else if (role == "ffn_down") names = {"gemm1"};
  else names = {role};
  double t = 0;
  for (const auto& [name, ns] : m.kernel_ns)
    if (std::find(names.begin(), names.end(), name.substr(name.find('.') + 1)) != names.end()) t += ns;
  return t;
}

class Descent {
 public:
  Descent(const LayerRequest& r, const std::string& phase, const Settings& s, LayerStage& out)
      : r_(r), phase_(phase), settings_(s), out_(out) {}

  std::vector<KernelOption> qkv_, attention_, out_proj_;
  std::vector<FfnPair> ffn_;

  std::size_t options(std::size_t group) const {
    return group == 0 ? qkv_.size() : group == 1 ? attention_.size() : group == 2 ? out_proj_.size() : ffn_.size();
  }

  std::string yaml(const Config& c) const {
    return layer_experiment(r_, phase_, qkv_[c[0]], attention_[c[1]], out_proj_[c[2]], ffn_[c[3]].first,
                            ffn_[c[3]].second);
  }

  // Simulates (or takes from the cache) the configurations not seen yet, in parallel.
  void evaluate(const std::vector<Config>& configs) {
    std::vector<Config> fresh;
    for (const Config& c : configs)
      if (!seen_.count(c) && std::find(fresh.begin(), fresh.end(), c) == fresh.end()) fresh.push_back(c);
    std::vector<ExperimentPlan> plans;
    for (const Config& c : fresh)
      plans.push_back(load_plan_text(yaml(c), "tilesim tune --model " + r_.model + " (" + phase_ + " layer)", ".", {}));
    std::vector<const ExperimentPlan*> ptrs;
    for (const ExperimentPlan& p : plans) ptrs.push_back(&p);
    const std::vector<Measured> m = measure_plans(ptrs, settings_, out_.simulated, out_.cached);
    for (std::size_t i = 0; i < fresh.size(); ++i) seen_[fresh[i]] = m[i];
    out_.layers = seen_.size();
  }

  double value(const Config& c) const { return objective_value(seen_.at(c), settings_.objective); }
  const Measured& measured(const Config& c) const { return seen_.at(c); }

  // Coordinate descent over the groups from `cur`; returns where it stops.
  Config run(Config cur, std::size_t max_passes) {
    evaluate({cur});
    for (std::size_t pass = 1; pass <= max_passes; ++pass) {
      out_.passes = pass;
      bool moved = false;
      for (std::size_t g = 0; g < cur.size(); ++g) {
        std::vector<Config> tries;
        for (std::size_t i = 0; i < options(g); ++i)
          if (i != cur[g]) {
            Config c = cur;
            c[g] = i;
            tries.push_back(c);
          }
        evaluate(tries);
        for (const Config& c : tries)
          if (value(c) < value(cur)) {
            cur = c;
            moved = true;
          }
      }
      if (!moved) break;
    }
    return cur;
  }

 private:
  const LayerRequest& r_;
  const std::string& phase_;
  const Settings& settings_;
  LayerStage& out_;
  std::map<Config, Measured> seen_;
};

}  // namespace

LayerStage run_layer_stage(const LayerRequest& r, const std::string& phase, const LayerOptions& o, std::size_t top,
                           const Settings& settings) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool gated = find_model_preset(r.model)->gated;
  LayerStage st;
  st.phase = phase;
  Descent d(r, phase, settings, st);
  d.qkv_ = top_of(o.qkv, top, "qkv");
  d.attention_ = top_of(o.attention, top, "the attention");
  d.out_proj_ = top_of(o.out_proj, top, "attn_out");
  top_of(o.ffn_up, top, "ffn_up");
  top_of(o.ffn_down, top, "ffn_down");
  d.ffn_ = ffn_pairs(o, top, settings.objective, st.note);
  const Config start{0, 0, 0, 0};
  const Config best = d.run(start, kLayerMaxPasses);
  st.start = d.measured(start);
  st.best = d.measured(best);
  st.start_yaml = d.yaml(start);
  st.best_yaml = d.yaml(best);
  const auto isolated = [&](const std::string& role) -> const KernelOption& {
    return role == "qkv"         ? o.qkv.front()
           : role == "attention" ? o.attention.front()
           : role == "attn_out"  ? o.out_proj.front()
           : role == "ffn_down"  ? o.ffn_down.front()
                                 : o.ffn_up.front();
  };
  const auto option = [&](const Config& c, const std::string& role) -> const KernelOption& {
    if (role == "qkv") return d.qkv_[c[0]];
    if (role == "attention") return d.attention_[c[1]];
    if (role == "attn_out") return d.out_proj_[c[2]];
    return role == "ffn_down" ? d.ffn_[c[3]].second : d.ffn_[c[3]].first;
  };
  std::vector<std::string> roles{"qkv", "attention", "attn_out"};
  if (gated) roles.push_back("ffn_gate");
  roles.insert(roles.end(), {"ffn_up", "ffn_down"});
  for (const std::string& role : roles)
    st.rows.push_back({role, isolated(role), option(start, role), option(best, role), role_ns(st.start, role, gated),
                       role_ns(st.best, role, gated)});
  st.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

}  // namespace tilesim::tune
