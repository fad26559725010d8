// `tilesim explore EXPERIMENT.yaml -o page.html`: the launch-order explorer (docs/explore.md),
// one self-contained page from a real simulation of the experiment (and of a second one for
// the comparison view), with the manual mode's L2 replay compiled in.
#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/config/experiment.hpp"
#include "sim/tools/explore/explore_data.hpp"
#include "sim/tools/explore/page.hpp"
#include "sim/tools/explore/wasm_module.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

namespace {

nlohmann::json view_of(const ExperimentPlan& plan, std::size_t point, const std::string& option) {
  if (point >= plan.size())
    throw InputError(option + ": point " + std::to_string(point) + " is out of range; " + plan.file + " has " +
                     std::to_string(plan.size()) + (plan.size() == 1 ? " point" : " points") +
                     " (`tilesim run " + plan.file + " --dry-run` lists them)");
  const std::string label =
      plan.label(point).empty() ? std::filesystem::path(plan.file).stem().string() : plan.label(point);
  return explore::explore_view(plan, point, label);
}

}  // namespace

int cmd_explore(const std::vector<std::string>& args) {
  po::options_description opts("tilesim explore EXPERIMENT.yaml -o PAGE.html [options]");
  std::string experiment, out_path, json_path, compare;
  std::vector<std::string> sets;
  std::size_t point = 0, compare_point = 0;
  bool quiet = false;
  opts.add_options()("help,h", "show this help")(
      "output,o", po::value(&out_path), "the HTML page to write")(
      "compare", po::value(&compare), "a second experiment shown side by side (the comparison view)")(
      "point", po::value(&point)->default_value(0), "which point of a sweep to show (0-based, as --dry-run lists them)")(
      "compare-point", po::value(&compare_point),
      "which point of the --compare experiment, or without --compare a second point of this one")(
      "set", po::value(&sets)->composing(), "override a key of EXPERIMENT: --set order.kind=hilbert (repeatable)")(
      "json", po::value(&json_path), "also write the page's data as JSON to FILE")(
      "quiet,q", po::bool_switch(&quiet), "print nothing on success");
  const po::variables_map vm = parse_args(args, opts, "experiment", &experiment);
  if (vm.count("help")) {
    std::cout << opts
              << "\nThe page shows each kernel's tile grid with the launch order, a step control over the\n"
                 "dispatches (L2 residency of the read tensors, cumulative DRAM bytes and hit rate), a per-SM\n"
                 "timeline, and a manual mode for single GEMMs and for FFNs under sync: dataflow (up to 4096\n"
                 "tiles a grid): click tiles to build an order (a chain: across the producer and consumer\n"
                 "grids), see its DRAM cost under the experiment's L2 one block at a time, export it for\n"
                 "`tilesim run`.\n";
    return 0;
  }
  // A build without the WebAssembly module (cmake/explore_wasm.cmake) writes no page at all.
  if (!explore_assets::replay_wasm_missing().empty()) throw InputError("explore: " + explore_assets::replay_wasm_missing());
  if (experiment.empty()) throw InputError("explore: expected an EXPERIMENT.yaml");
  if (out_path.empty() && json_path.empty()) throw InputError("explore: expected -o PAGE.html (or --json FILE)");

  const ExperimentPlan plan = load_plan(experiment, sets);
  std::vector<nlohmann::json> views;
  views.push_back(view_of(plan, point, "--point"));
  if (!compare.empty()) {
    const ExperimentPlan other = load_plan(compare, {});
    views.push_back(view_of(other, vm.count("compare-point") ? compare_point : 0, "--compare-point"));
  } else if (vm.count("compare-point")) {
    views.push_back(view_of(plan, compare_point, "--compare-point"));
  }
  const nlohmann::json data = explore::explore_data(std::move(views));
  if (!json_path.empty()) write_file(json_path, data.dump() + "\n");
  if (!out_path.empty()) write_file(out_path, explore::explore_page(data));
  if (!quiet) {
    for (const nlohmann::json& v : data["views"])
      std::cout << v["label"].get<std::string>() << ": " << v["steps"]["t_ns"].size() << " dispatches, "
                << v["residency"]["snapshot_steps"].size() << " residency snapshots"
                << (v["manual"].is_null() ? ", no manual mode (" + v["manual_note"].get<std::string>() + ")" : "")
                << "\n";
    if (!out_path.empty()) std::cout << "wrote " << out_path << "\n";
  }
  return 0;
}

}  // namespace tilesim::app
