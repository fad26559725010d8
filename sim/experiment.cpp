#include "sim/experiment.hpp"

#include <filesystem>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "workloads/workload.hpp"

namespace tilesim {

namespace {

const std::vector<std::string> kTopKeys{"name", "description", "arch", "arch_overrides", "workload",
                                        "order", "sync", "sim", "sweep", "validate"};

// A short, readable label for a swept value: scalars as they are, mappings as kind(k=v,...).
std::string value_label(const YAML::Node& v) {
  if (v.IsScalar()) return v.Scalar();
  if (v.IsSequence()) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + value_label(v[i]);
    return s + "]";
  }
  if (v.IsMap()) {
    std::string kind, params;
    for (const auto& kv : v) {
      const std::string k = kv.first.as<std::string>();
      if (k == "kind") kind = value_label(kv.second);
      else params += (params.empty() ? "" : ",") + k + "=" + value_label(kv.second);
    }
    return params.empty() ? kind : kind + "(" + params + ")";
  }
  return "~";
}

SimOptions parse_sim_options(const ConfigNode& root) {
  SimOptions o;
  if (auto s = root.find("sim")) {
    s->allow_keys({"cold_l2", "dispatch", "launch_gap_ns", "poll_interval_ns", "writeback_at_end", "seed"});
    o.cold_l2 = s->choice_or("cold_l2", "workload", {"workload", "kernel"}) == "kernel" ? SimOptions::ColdL2::per_kernel
                                                                                     : SimOptions::ColdL2::per_workload;
    o.dispatch = s->choice_or("dispatch", "oldest_kernel", {"oldest_kernel", "round_robin"}) == "round_robin"
                     ? SimOptions::Dispatch::round_robin
                     : SimOptions::Dispatch::oldest_kernel;
    o.launch_gap_ns = s->number_or("launch_gap_ns", 0, 0, 1e9);
    o.poll_interval_ns = s->number_or("poll_interval_ns", 200, 1, 1e9);
    o.writeback_at_end = s->boolean_or("writeback_at_end", true);
    o.seed = static_cast<std::uint64_t>(s->integer_or("seed", 1, 0, INT64_MAX));
  }
  return o;
}

ExperimentPoint build_point(const YAML::Node& root_yaml, const std::string& file, const std::string& base_dir,
                            const std::string& label) {
  const std::string where = label.empty() ? file : file + " [sweep point " + label + "]";
  ConfigNode root(root_yaml, where, "");
  root.allow_keys(kTopKeys);
  ExperimentPoint p;
  p.label = label;
  const YAML::Node overrides = root.has("arch_overrides") ? root.at("arch_overrides").raw() : YAML::Node();
  p.arch = load_arch(root.string_or("arch", "h100"), overrides, where);
  p.options = parse_sim_options(root);
  const WorkloadContext ctx{root.at("workload"), root, p.arch, base_dir};
  p.workload = build_workload(ctx);
  p.workload.name = root.string_or("name", std::filesystem::path(file).stem().string());
  validate_workload(p.workload, where);
  return p;
}

// Each point is parsed afresh from the experiment's text rather than cloned (YAML::Clone drops
// source marks), so errors keep pointing at the right line of the file.
Experiment expand(const std::string& text, const std::string& file, const std::string& base_dir,
                  const std::vector<std::string>& overrides) {
  const auto parse = [&] {
    YAML::Node n = load_yaml_text(text, file);
    if (!n.IsMap()) throw InputError(file + ": expected a mapping of experiment keys at the top level");
    for (const auto& o : overrides) apply_override(n, o);
    return n;
  };
  YAML::Node root = parse();
  ConfigNode top(root, file, "");
  top.allow_keys(kTopKeys);
  Experiment e;
  e.file = file;
  e.name = top.string_or("name", std::filesystem::path(file).stem().string());
  e.validate.case_name = e.name;
  if (auto v = top.find("validate")) {
    v->allow_keys({"case", "group", "subset", "compare"});
    if (auto c = v->find("compare")) {
      if (!c->is_sequence() || c->size() == 0) c->fail("expected a list of hit_rate, dram, duration");
      e.validate.hit_rate = e.validate.dram = e.validate.duration = false;
      for (std::size_t i = 0; i < c->size(); ++i) {
        const std::string what = c->element(i).as_choice({"hit_rate", "dram", "duration"});
        (what == "hit_rate" ? e.validate.hit_rate : what == "dram" ? e.validate.dram : e.validate.duration) = true;
      }
    }
    e.validate.case_name = v->string_or("case", e.name);
    e.validate.subset = v->choice_or("subset", "validation", {"calibration", "validation"});
    e.validate.group = v->string_or("group", "");
  }
  if (e.validate.group.empty()) {
    const auto us = e.validate.case_name.rfind('_');
    e.validate.group = us == std::string::npos ? e.validate.case_name : e.validate.case_name.substr(0, us);
  }

  // Sweep axes, in file order; the grid's first axis varies slowest.
  std::vector<std::pair<std::string, YAML::Node>> axes;
  if (auto sweep = top.find("sweep")) {
    sweep->expect_map();
    for (const auto& kv : sweep->raw()) {
      const std::string key = kv.first.as<std::string>();
      ConfigNode values(kv.second, file, "sweep." + key);
      if (!values.is_sequence() || values.size() == 0) values.fail("expected a non-empty list of values");
      axes.emplace_back(key, kv.second);
    }
  }
  std::size_t total = 1;
  for (const auto& a : axes) total *= a.second.size();
  if (total > 1000000) throw InputError(file + ": sweep: " + std::to_string(total) + " points is more than 1000000");
  for (std::size_t i = 0; i < total; ++i) {
    YAML::Node point = i == 0 ? root : parse();
    point.remove("sweep");
    std::string label;
    std::size_t rest = i;
    std::vector<std::size_t> idx(axes.size());
    for (std::size_t a = axes.size(); a-- > 0;) {
      idx[a] = rest % axes[a].second.size();
      rest /= axes[a].second.size();
    }
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const YAML::Node v = axes[a].second[idx[a]];
      // Reuse --set's path logic: emit the value as YAML and assign it at the dotted key.
      YAML::Emitter em;
      em << YAML::Flow << v;
      apply_override(point, axes[a].first + "=" + em.c_str());
      label += (label.empty() ? "" : " ") + axes[a].first + "=" + value_label(v);
    }
    e.points.push_back(build_point(point, file, base_dir, label));
  }
  return e;
}

}  // namespace

Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides) {
  return expand(read_text_file(path), path, std::filesystem::path(path).parent_path().string(), overrides);
}

Experiment load_experiment_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                                const std::vector<std::string>& overrides) {
  return expand(text, origin, base_dir, overrides);
}

const std::string& default_experiment_yaml() {
  static const std::string yaml = R"(# Built-in experiment of `tilesim run` with no file.
name: default-launch-orders
arch: h100
workload: {kind: gemm, m: 8192, n: 8192, k: 8192, dtype: fp16, tile: [128, 128, 64], stages: 3, blocks_per_sm: 2}
sweep:
  order:
    - {kind: row}
    - {kind: column}
    - {kind: swizzle, log_tile: 3}
    - {kind: grouped, group_m: 8}
    - {kind: hilbert}
)";
  return yaml;
}

}  // namespace tilesim
