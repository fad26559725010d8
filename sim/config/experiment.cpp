#include "sim/config/experiment.hpp"

#include <filesystem>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "sim/config/canonical.hpp"
#include "workloads/workload.hpp"

namespace tilesim {

namespace {

const std::vector<std::string> kTopKeys{"name", "description", "arch", "arch_overrides", "workload",
                                        "order", "sync", "sim", "sweep", "validate",
                                        // `tilesim tune`'s search axes; `run` simulates the experiment as written
                                        "tune"};

// What triton.testing.do_bench writes before each timed call to empty the L2.
constexpr double kDoBenchFlushBytes = 256.0 * 1024 * 1024;

// sim.timing: steady (the default), do_bench, or {kind: launches | do_bench | steady, ...}; a map
// without a kind is a harness of launches.
void parse_timing(const ConfigNode& t, SimOptions::Timing& timing) {
  using Kind = SimOptions::Timing::Kind;
  const std::vector<std::string> kinds{"steady", "launches", "do_bench"};
  if (t.is_scalar()) {
    const std::string k = t.as_choice({"steady", "do_bench"});
    timing.kind = k == "steady" ? Kind::steady : Kind::do_bench;
    if (timing.kind == Kind::do_bench) timing.flush_bytes = kDoBenchFlushBytes;
    return;
  }
  if (!t.is_map()) t.fail("expected steady, do_bench, {warmup: W, launches: N} or {kind: do_bench, ...}");
  const std::string k = t.choice_or("kind", "launches", kinds);
  if (k == "steady") {
    t.allow_keys({"kind"});
    timing.kind = Kind::steady;
  } else if (k == "launches") {
    t.allow_keys({"kind", "warmup", "launches", "flush_bytes"});
    timing.kind = Kind::launches;
    timing.warmup = static_cast<int>(t.integer_or("warmup", 0, 0, 1000000));
    timing.launches = static_cast<int>(t.integer("launches", 1, 1000000));
    timing.flush_bytes = t.number_or("flush_bytes", 0, 0, 1e12);
  } else {
    t.allow_keys({"kind", "warmup_ms", "rep_ms", "flush_bytes"});
    timing.kind = Kind::do_bench;
    timing.warmup_ms = t.number_or("warmup_ms", 25, 0, 1e6);
    timing.rep_ms = t.number_or("rep_ms", 100, 1e-3, 1e6);
    timing.flush_bytes = t.number_or("flush_bytes", kDoBenchFlushBytes, 0, 1e12);
  }
}

SimOptions parse_sim_options(const ConfigNode& root) {
  SimOptions o;
  if (auto s = root.find("sim")) {
    s->allow_keys({"cold_l2", "l2_start", "dispatch", "launch_gap_ns", "poll_interval_ns", "writeback_at_end", "seed", "mode",
                   "sampling_tolerance", "timing"});
    o.cold_l2 = s->choice_or("cold_l2", "workload", {"workload", "kernel"}) == "kernel" ? SimOptions::ColdL2::per_kernel
                                                                                     : SimOptions::ColdL2::per_workload;
    o.l2_start = s->choice_or("l2_start", "empty", {"empty", "write_flushed"}) == "write_flushed"
                     ? SimOptions::L2Start::write_flushed
                     : SimOptions::L2Start::empty;
    o.dispatch = dispatch_rule(s->kind_or("dispatch", dispatch_names().front(), dispatch_names()));
    o.launch_gap_ns = s->number_or("launch_gap_ns", 0, 0, 1e9);
    o.poll_interval_ns = s->number_or("poll_interval_ns", 200, 1, 1e9);
    o.writeback_at_end = s->boolean_or("writeback_at_end", true);
    o.seed = static_cast<std::uint64_t>(s->integer_or("seed", 1, 0, INT64_MAX));
    o.mode = s->choice_or("mode", "exact", {"exact", "sampled"}) == "sampled" ? SimOptions::Mode::sampled
                                                                            : SimOptions::Mode::exact;
    o.sampling_tolerance = s->number_or("sampling_tolerance", 0.02, 0, 1);
    if (auto t = s->find("timing")) parse_timing(*t, o.timing);
  }
  return o;
}

void parse_validate_tag(const ConfigNode& top, ValidateTag& tag, const std::string& name) {
  tag.case_name = name;
  if (auto v = top.find("validate")) {
    v->allow_keys({"case", "group", "subset", "compare", "family", "events_after"});
    if (auto c = v->find("compare")) {
      if (!c->is_sequence() || c->size() == 0) c->fail("expected a list of hit_rate, dram, duration");
      tag.hit_rate = tag.dram = tag.duration = false;
      for (std::size_t i = 0; i < c->size(); ++i) {
        const std::string what = c->element(i).as_choice({"hit_rate", "dram", "duration"});
        (what == "hit_rate" ? tag.hit_rate : what == "dram" ? tag.dram : tag.duration) = true;
      }
    }
    tag.case_name = v->string_or("case", name);
    tag.subset = v->choice_or("subset", "validation", {"calibration", "validation"});
    tag.group = v->string_or("group", "");
    tag.family = v->string_or("family", "");
    tag.events_after_write_flush = v->choice_or("events_after", "none", {"none", "write_flush"}) == "write_flush";
  }
  if (tag.family.empty()) {
    const auto wl = top.find("workload");
    tag.family = wl && wl->is_map() && wl->has("kind") ? wl->at("kind").as_string() : "other";
  }
  if (tag.group.empty()) {
    const auto us = tag.case_name.rfind('_');
    tag.group = us == std::string::npos ? tag.case_name : tag.case_name.substr(0, us);
  }
}

// What the workload generator reads: everything but the model-only sections. Of the arch it
// reads the name (in messages) and the SM limits and MMA shapes, so overrides of other arch
// parts (L2, DRAM) keep the workload shared.
std::string workload_key(nlohmann::json point) {
  for (const char* k : {"sim", "name", "description", "validate"}) point.erase(k);
  if (point.contains("arch_overrides") && point["arch_overrides"].is_object()) {
    nlohmann::json kept = nlohmann::json::object();
    for (const char* k : {"sm", "compute"})
      if (point["arch_overrides"].contains(k)) kept[k] = point["arch_overrides"][k];
    point["arch_overrides"] = kept;
  }
  return point.dump();
}

// Appends the contents of every file a point names (`path:` keys, e.g. order files).
void append_named_files(const nlohmann::json& j, const std::string& base_dir, std::string& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "path" && it.value().is_string()) {
        std::filesystem::path p(it.value().get<std::string>());
        if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
        std::error_code ec;
        out += "\nfile " + p.string() + "\n";
        if (std::filesystem::is_regular_file(p, ec)) out += read_text_file(p.string());
      } else {
        append_named_files(it.value(), base_dir, out);
      }
    }
  } else if (j.is_array()) {
    for (const auto& e : j) append_named_files(e, base_dir, out);
  }
}

}  // namespace

YAML::Node ExperimentPlan::parse() const {
  YAML::Node n = load_yaml_text(text_, file);
  if (!n.IsMap()) throw InputError(file + ": expected a mapping of experiment keys at the top level");
  for (const auto& o : overrides_) apply_override(n, o);
  return n;
}

std::string ExperimentPlan::resolved_yaml() const { return yaml_document(parse()); }

YAML::Node ExperimentPlan::point_yaml(std::size_t i) const {
  YAML::Node n = parse();
  n.remove("sweep");
  n.remove("tune");  // read only by `tilesim tune`; a run ignores it
  for (const auto& [key, value] : sweep.assignments(sweep.points.at(i))) apply_override(n, key + "=" + value);
  return n;
}

ExperimentPoint ExperimentPlan::build(std::size_t i, sweep::WorkloadCache* cache) const {
  const std::string& lbl = label(i);
  const std::string where = lbl.empty() ? file : file + " [sweep point " + lbl + "]";
  const YAML::Node yaml = point_yaml(i);
  ConfigNode root(yaml, where, "");
  root.allow_keys(kTopKeys);
  ExperimentPoint p;
  p.label = lbl;
  const YAML::Node arch_over = root.has("arch_overrides") ? root.at("arch_overrides").raw() : YAML::Node();
  p.arch = load_arch(root.string_or("arch", "h100"), arch_over, where);
  p.options = parse_sim_options(root);
  const auto make = [&] {
    const WorkloadContext ctx{root.at("workload"), root.find("order"), root.find("sync"), p.arch, base_dir};
    Workload w;
    try {
      w = build_workload(ctx);
    } catch (const InputError& e) {
      // Generators name their keys through the config tree; the few checks on a whole kernel
      // (check_workload_memory) say "workload: ..." and get the file and point here.
      const std::string m = e.what();
      if (m.rfind("workload: ", 0) == 0) throw InputError(where + ": " + m);
      throw;
    }
    w.name = name;
    validate_workload(w, where);
    return w;
  };
  p.workload = cache ? cache->get(workload_key(sweep::yaml_to_json(yaml)), make) : std::make_shared<const Workload>(make());
  return p;
}

std::string ExperimentPlan::point_hash(std::size_t i) const {
  const YAML::Node yaml = point_yaml(i);
  const nlohmann::json j = sweep::yaml_to_json(yaml);
  std::string data = "tilesim point\n" + sweep::simulator_fingerprint() + "\n" + j.dump();
  const std::string arch = j.contains("arch") && j["arch"].is_string() ? j["arch"].get<std::string>() : "h100";
  const YAML::Node preset = arch_preset_yaml(arch);
  if (preset.IsDefined()) {
    data += "\npreset " + arch + "\n" + sweep::canonical_text(preset);
  } else {
    append_named_files(nlohmann::json{{"path", arch}}, base_dir, data);
  }
  append_named_files(j, base_dir, data);
  return sweep::digest_hex(data);
}

ExperimentPlan load_plan_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                              const std::vector<std::string>& overrides, const std::string& sweep_key) {
  ExperimentPlan plan;
  plan.file = origin;
  plan.base_dir = base_dir;
  plan.text_ = text;
  plan.overrides_ = overrides;
  YAML::Node root = plan.parse();
  ConfigNode top(root, origin, "");
  top.allow_keys(kTopKeys);
  plan.name = top.string_or("name", std::filesystem::path(origin).stem().string());
  parse_validate_tag(top, plan.validate, plan.name);
  const std::optional<ConfigNode> sweep_node = top.find(sweep_key);
  YAML::Node base = YAML::Clone(root);
  base.remove("sweep");
  base.remove("tune");
  plan.sweep = sweep::expand_sweep(sweep_node ? &*sweep_node : nullptr, base, origin);
  return plan;
}

ExperimentPlan load_plan(const std::string& path, const std::vector<std::string>& overrides) {
  return load_plan_text(read_text_file(path), path, std::filesystem::path(path).parent_path().string(), overrides);
}

Experiment load_experiment_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                                const std::vector<std::string>& overrides) {
  auto plan = std::make_shared<const ExperimentPlan>(load_plan_text(text, origin, base_dir, overrides));
  Experiment e{plan->name, plan->file, plan->validate, {}, plan};
  sweep::WorkloadCache cache;
  for (std::size_t i = 0; i < plan->size(); ++i) e.points.push_back(plan->build(i, &cache));
  return e;
}

Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides) {
  return load_experiment_text(read_text_file(path), path, std::filesystem::path(path).parent_path().string(), overrides);
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
  baseline: {order: row}
)";
  return yaml;
}

}  // namespace tilesim
