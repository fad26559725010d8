// `tilesim tune --model`'s output: the kernels tuned alone per phase, the layer stage's table,
// and the same figures as JSON (docs/tune.md, "Tuning a transformer layer").
#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

#include "sim/tools/tune/layer.hpp"

namespace tilesim::tune {

using nlohmann::json;

namespace {

std::string num(std::uint64_t v) { return std::to_string(v); }

std::string shape_text(const LayerGemm& g) { return num(g.m) + "x" + num(g.n) + "x" + num(g.k); }

const Measured& best_of(const Outcome& o) { return o.best ? *o.candidates[*o.best].measured : o.base; }

// One kernel's isolated search as the tables and the JSON show it.
struct IsolatedRow {
  std::string role, shape;
  const Outcome* outcome = nullptr;
  bool reused = false;  ///< a shape searched for an earlier row
};

std::vector<IsolatedRow> isolated_rows(const LayerResult& res, std::size_t phase_index) {
  const std::string& phase = res.phases[phase_index];
  std::vector<IsolatedRow> rows;
  std::vector<bool> reported(res.plans.size(), false);
  for (std::size_t i = 0; i < res.gemms.size(); ++i) {
    const LayerGemm& g = res.gemms[i];
    const std::size_t sh = res.shape_of[i];
    const bool reused = reported[sh];
    reported[sh] = true;
    if (g.phase != phase) continue;
    rows.push_back({g.role, shape_text(g), &res.outcomes[sh], reused});
    if (g.role == "qkv") rows.push_back({"attention", "", &res.attention[phase_index], false});
  }
  return rows;
}

std::string search_note(const IsolatedRow& row) {
  if (row.reused) return "[same shape as above: reused]";
  const Outcome& o = *row.outcome;
  std::string note = "[" + num(o.legal) + " legal, " + num(o.simulated) + " simulated, " + num(o.from_cache) + " cached";
  if (o.gap) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ", gap %.2f%%", 100 * *o.gap);
    note += buf;
  }
  return note + "]";
}

std::string best_label(const Outcome& o) { return o.best ? o.candidates[*o.best].label : o.base_label; }

void print_isolated(std::ostream& out, const LayerRequest& r, const LayerResult& res, std::size_t p, const Settings& s) {
  const std::string& phase = res.phases[p];
  const std::uint64_t tokens = phase == "prefill" ? std::uint64_t(r.batch) * r.seq : r.batch;
  out << "\n" << phase << ": " << tokens << " tokens"
      << (phase == "prefill" ? " (batch " + num(r.batch) + " x seq " + num(r.seq) + ")"
                             : " (one per sequence, after a KV cache of " + num(r.seq) + ")")
      << "; each kernel tuned alone\n";
  char buf[512];
  std::snprintf(buf, sizeof buf, "  %-9s %-20s %10s %9s %9s  %s\n", "kernel", "shape", "time_us", "dram_mb", "speedup",
                "best configuration [search]");
  out << buf;
  double total = 0, base_total = 0, dram = 0;
  for (const IsolatedRow& row : isolated_rows(res, p)) {
    const Outcome& o = *row.outcome;
    const Measured& best = best_of(o);
    const std::string shape = row.role == "attention" ? attention_shape_text(phase, r) : row.shape;
    const double speedup = objective_value(best, s.objective) > 0
                               ? objective_value(o.base, s.objective) / objective_value(best, s.objective)
                               : 0.0;
    std::snprintf(buf, sizeof buf, "  %-9s %-20s %10.1f %9.1f %8.3fx  %s %s\n", row.role.c_str(), shape.c_str(),
                  best.duration_ns / 1e3, best.dram_bytes / 1e6, speedup, best_label(o).c_str(),
                  search_note(row).c_str());
    out << buf;
    total += best.duration_ns;
    base_total += o.base.duration_ns;
    dram += best.dram_bytes;
  }
  std::snprintf(buf, sizeof buf, "  %-9s %-20s %10.1f %9.1f %8.3fx  (default configs: %.1f us)\n", "sum", "",
                total / 1e3, dram / 1e6, total > 0 ? base_total / total : 0.0, base_total / 1e3);
  out << buf;
}

void print_stage(std::ostream& out, const LayerStage& st) {
  char buf[512];
  out << "  in one layer (kind: layer, L2 carried from kernel to kernel): (a) the isolated bests together, "
         "(b) layer-tuned\n";
  std::snprintf(buf, sizeof buf, "  %-9s %-32s %10s %10s  %-32s %10s\n", "kernel", "isolated best", "alone_us",
                "(a)_us", "layer-tuned (b)", "(b)_us");
  out << buf;
  std::string moved;
  for (const LayerStageRow& row : st.rows) {
    // (a) runs another configuration where the isolated bests cannot run together (the FFN).
    const bool differs = option_text(row.start) != option_text(row.isolated);
    if (differs) moved += (moved.empty() ? "" : ", ") + row.role + " " + option_text(row.start);
    std::snprintf(buf, sizeof buf, "  %-9s %-32s %10.1f %9.1f%s  %-32s %10.1f\n", row.role.c_str(),
                  option_text(row.isolated).c_str(), row.isolated.isolated->duration_ns / 1e3, row.start_ns / 1e3,
                  differs ? "*" : " ", option_text(row.chosen).c_str(), row.chosen_ns / 1e3);
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "  %-9s %-32s %10s %9.1f   %-32s %10.1f  %.3fx\n", "layer", "", "",
                st.start.duration_ns / 1e3, "", st.best.duration_ns / 1e3,
                st.best.duration_ns > 0 ? st.start.duration_ns / st.best.duration_ns : 0.0);
  out << buf;
  std::snprintf(buf, sizeof buf, "%.2f s", st.wall_s);
  out << "  layer stage: " << st.layers << " layer configurations (" << st.simulated << " simulated, " << st.cached
      << " from cache), " << st.passes << " pass" << (st.passes == 1 ? "" : "es") << ", " << buf << "\n";
  if (!st.note.empty()) out << "  * " << st.note << ": " << moved << "\n";
}

}  // namespace

void print_layer(std::ostream& out, const LayerRequest& r, const LayerResult& res, const Settings& s) {
  out << "tune layer: " << r.model << "  batch " << r.batch << "  seq " << r.seq << "  arch " << r.arch << "  "
      << r.dtype << "  " << settings_text(s) << "  layer-top " << r.layer_top << "\n";
  for (std::size_t p = 0; p < res.phases.size(); ++p) {
    print_isolated(out, r, res, p, s);
    if (p < res.stages.size()) print_stage(out, res.stages[p]);
  }
  std::size_t simulated = 0, cached = 0;
  for (const Outcome& o : res.outcomes) {
    simulated += o.simulated;
    cached += o.from_cache;
  }
  for (const Outcome& o : res.attention) {
    simulated += o.simulated;
    cached += o.from_cache;
  }
  for (const LayerStage& st : res.stages) {
    simulated += st.simulated;
    cached += st.cached;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f s", res.wall_s);
  out << "\nsearch: " << res.gemms.size() << " GEMMs, " << res.plans.size() << " distinct shapes tuned, "
      << res.phases.size() << " attention" << (res.phases.size() == 1 ? "" : "s") << "; " << simulated
      << " points simulated, " << cached << " from cache; " << buf << "\n"
      << "sum = the kernels' isolated best times, run one after another with an empty L2 each\n";
  if (!res.stages.empty())
    out << "layer = one kind: layer simulation (stream order); (a) with the isolated bests, (b) with the layer stage's "
           "choice\n";
}

namespace {

// A kernel's keys as JSON: integers as numbers, the rest as strings.
json yaml_json(const YAML::Node& n) {
  if (n.IsMap()) {
    json j = json::object();
    for (const auto& kv : n) j[kv.first.as<std::string>()] = yaml_json(kv.second);
    return j;
  }
  if (n.IsSequence()) {
    json j = json::array();
    for (const auto& v : n) j.push_back(yaml_json(v));
    return j;
  }
  long long v = 0;
  if (n.IsScalar() && YAML::convert<long long>::decode(n, v)) return v;
  return n.IsScalar() ? json(n.Scalar()) : json();
}

json option_json(const KernelOption& o, double in_layer_ns) {
  json j = {{"config", option_text(o)}, {"keys", yaml_json(o.keys)}, {"order", yaml_json(o.order)},
            {"in_layer_duration_ns", in_layer_ns}};
  if (!o.derived.empty()) j["derived"] = o.derived;
  return j;
}

json stage_json(const LayerStage& st) {
  json rows = json::array();
  for (const LayerStageRow& row : st.rows)
    rows.push_back({{"role", row.role},
                    {"isolated_best", {{"config", option_text(row.isolated)},
                                       {"duration_ns", row.isolated.isolated->duration_ns}}},
                    {"isolated_bests", option_json(row.start, row.start_ns)},
                    {"layer_tuned", option_json(row.chosen, row.chosen_ns)}});
  json j = {{"kernels", rows},
            {"isolated_bests", {{"duration_ns", st.start.duration_ns}, {"dram_bytes", st.start.dram_bytes}}},
            {"layer_tuned", {{"duration_ns", st.best.duration_ns}, {"dram_bytes", st.best.dram_bytes}}},
            {"layer_configurations", st.layers},
            {"simulated", st.simulated},
            {"from_cache", st.cached},
            {"passes", st.passes},
            {"wall_s", st.wall_s}};
  if (!st.note.empty()) j["note"] = st.note;
  return j;
}

}  // namespace

json layer_json(const LayerRequest& r, const LayerResult& res, const Settings& s) {
  json phases = json::array();
  for (std::size_t p = 0; p < res.phases.size(); ++p) {
    json kernels = json::array();
    double sum = 0, base_sum = 0;
    for (const IsolatedRow& row : isolated_rows(res, p)) {
      const Outcome& o = *row.outcome;
      const Measured& best = best_of(o);
      sum += best.duration_ns;
      base_sum += o.base.duration_ns;
      kernels.push_back({{"role", row.role},
                         {"shape", row.role == "attention" ? attention_shape_text(res.phases[p], r) : row.shape},
                         {"best", best_label(o)},
                         {"duration_ns", best.duration_ns},
                         {"dram_bytes", best.dram_bytes},
                         {"base_duration_ns", o.base.duration_ns},
                         {"legal", o.legal},
                         {"simulated", o.simulated},
                         {"from_cache", o.from_cache}});
    }
    json phase = {{"phase", res.phases[p]}, {"isolated", kernels}, {"isolated_sum_ns", sum},
                  {"isolated_base_sum_ns", base_sum}};
    if (p < res.stages.size()) phase["layer"] = stage_json(res.stages[p]);
    phases.push_back(phase);
  }
  return {{"model", r.model},         {"batch", r.batch},         {"seq", r.seq},
          {"arch", r.arch},           {"dtype", r.dtype},         {"settings", settings_text(s)},
          {"layer_top", r.layer_top}, {"phases", phases},         {"wall_s", res.wall_s}};
}

}  // namespace tilesim::tune
