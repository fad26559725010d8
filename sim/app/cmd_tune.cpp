// `tilesim tune`: search an experiment's `tune:` axes (tile, stages, split-K, launch order,
// any dotted key) for the best configuration, print the top 10 and the search's cost, and
// with -o write the best point as an experiment `tilesim run` takes. With --model instead of
// an experiment, tune every kernel of one transformer layer, alone and in the whole layer. See docs/tune.md.
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <fstream>
#include <iostream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/tools/tune/layer.hpp"
#include "sim/tools/tune/tune.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

int cmd_tune(const std::vector<std::string>& args) {
  po::options_description opts(
      "tilesim tune EXPERIMENT.yaml [options]\n"
      "tilesim tune --model NAME --batch B --seq S [--arch A] [--phase prefill|decode|both] [options]");
  std::vector<std::string> sets;
  std::string experiment, strategy, objective, best_path, phase, json_path;
  int layer_top = 3;
  tune::Settings settings;
  tune::LayerRequest layer;
  opts.add_options()("help,h", "show this help")(
      "set", po::value(&sets)->composing(), "override a key: --set workload.m=4096 (repeatable; value is YAML)")(
      "strategy", po::value(&strategy)->default_value("heuristic"),
      "exhaustive: simulate every legal point; heuristic: simulate the best --top-fraction by the analytic "
      "estimate; greedy: coordinate descent from the estimate's best")(
      "top-fraction", po::value(&settings.top_fraction)->default_value(0.2, "0.2"), "heuristic: fraction of legal points simulated")(
      "objective", po::value(&objective)->default_value("duration"), "duration | dram (bytes read and written)")(
      "cache-dir", po::value(&settings.cache_dir)->default_value(".tilesim-cache/tune"),
      "persistent result cache shared by all searches (empty: none)")(
      "jobs,j", po::value(&settings.jobs)->default_value(0), "simulate up to N points in parallel (0 = all cores)")(
      "out,o", po::value(&best_path),
      "write the best configuration as an experiment YAML to FILE (with --model: into folder DIR, one per GEMM "
      "alone, PHASE_ROLE.yaml, and the layer-tuned layer, PHASE_layer.yaml)")(
      "model", po::value(&layer.model),
      ("tune one transformer layer of this model: each kernel alone (QKV, attention, attention output, FFN "
       "gate/up/down), then the whole layer with the L2 carried between kernels: " +
       model_preset_names())
          .c_str())(
      "batch", po::value(&layer.batch)->default_value(1), "--model: sequences in the batch")(
      "seq", po::value(&layer.seq)->default_value(0),
      "--model: prompt length (prefill tokens = batch x seq), and the KV-cache length at decode")(
      "arch", po::value(&layer.arch)->default_value("h100"), "--model: arch preset or file")(
      "dtype", po::value(&layer.dtype)->default_value("fp16"), "--model: GEMM dtype")(
      "phase", po::value(&phase)->default_value("both"), "--model: prefill, decode or both")(
      "layer-top", po::value(&layer_top)->default_value(3),
      "--model: the layer stage tries each kernel's K best isolated configurations inside the whole layer "
      "(coordinate descent, at most 3 passes); 0 skips the layer stage")(
      "json", po::value(&json_path), "--model: write the per-kernel and layer results as JSON to FILE")(
      "verbose,v", "log progress to stderr")(
      "quiet,q", "print no progress (a bar on a terminal, else a line every 10 s once it takes that long)");
  const po::variables_map vm = parse_args(args, opts, "experiment", &experiment);
  if (vm.count("help")) {
    std::cout << opts
              << "\nThe experiment's `tune:` section lists the axes to search, in the grammar of `sweep:`\n"
                 "(e.g. workload.tile: [[128,128,64],[128,256,64]], workload.stages: [3,4], order: [...]).\n"
                 "Points that fail a legality check (shared memory, MMA multiples, occupancy) are skipped.\n"
                 "With --model, each kernel of the layer is tuned alone (the attention's few points exhaustively),\n"
                 "then the whole layer is simulated as kind: layer, starting from the isolated bests and trying\n"
                 "each kernel group's --layer-top best isolated configurations in turn (docs/tune.md).\n";
    return 0;
  }
  if (vm.count("verbose")) spdlog::set_level(spdlog::level::info);
  settings.progress = sweep::progress_style(vm.count("quiet") > 0);
  const bool layer_mode = vm.count("model") > 0;
  if (layer_mode && !experiment.empty())
    throw InputError("tilesim tune: give either an EXPERIMENT.yaml or --model, not both");
  if (!layer_mode)
    for (const char* key : {"batch", "seq", "arch", "dtype", "phase", "layer-top"})
      if (!vm[key].defaulted()) throw InputError(std::string("--") + key + ": only meaningful with --model");
  if (!layer_mode && !json_path.empty()) throw InputError("--json: only meaningful with --model");
  if (!layer_mode && experiment.empty())
    throw InputError("tilesim tune: expected an EXPERIMENT.yaml with a `tune:` section, or --model NAME");
  if (settings.jobs < 0) throw InputError("--jobs: expected a non-negative integer");
  if (!(settings.top_fraction > 0 && settings.top_fraction <= 1))
    throw InputError("--top-fraction: expected a number in (0, 1], got " + std::to_string(settings.top_fraction));
  settings.strategy = tune::parse_strategy(strategy);
  settings.objective = tune::parse_objective(objective);

  if (layer_mode) {
    if (!sets.empty()) throw InputError("--set: not meaningful with --model (the GEMMs come from the model)");
    if (phase != "prefill" && phase != "decode" && phase != "both")
      throw InputError("--phase: expected prefill, decode or both, got '" + phase + "'");
    layer.prefill = phase != "decode";
    layer.decode = phase != "prefill";
    if (layer_top < 0 || layer_top > 16)
      throw InputError("--layer-top: expected 0 ... 16 options per kernel, got " + std::to_string(layer_top));
    layer.layer_top = static_cast<std::size_t>(layer_top);
    const tune::LayerResult result = tune::tune_layer(layer, settings);
    tune::print_layer(std::cout, layer, result, settings);
    if (!json_path.empty()) {
      std::ofstream out(json_path, std::ios::binary);
      out << tune::layer_json(layer, result, settings).dump(2) << "\n";
      if (!out) throw InputError(json_path + ": cannot write (--json)");
      std::cout << "wrote " << json_path << "\n";
    }
    if (!best_path.empty())
      for (const std::string& p : tune::write_layer_best(result, best_path)) std::cout << "wrote " << p << "\n";
    return 0;
  }
  const tune::TunePlans plans = tune::load_tune_plans(experiment, sets);
  const tune::Outcome outcome = tune::run_tune(plans, settings);
  tune::print_outcome(std::cout, plans, outcome, settings);
  if (!best_path.empty()) {
    std::ofstream out(best_path, std::ios::binary);
    if (!out) throw InputError(best_path + ": cannot open for writing (-o)");
    out << tune::best_yaml(plans, outcome);
    if (!out) throw InputError(best_path + ": write failed (-o)");
    std::cout << "wrote " << best_path << "\n";
  }
  return 0;
}

}  // namespace tilesim::app
