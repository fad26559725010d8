// `tilesim import ncu CSV... -o DIR`: an experiment per measured GEMM kernel of Nsight Compute
// raw pages, with a `validate:` section, so that `tilesim validate -m CSV... -e DIR` compares
// them at once (sim/tools/validate/import_ncu.hpp has what is read and guessed).
#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/tools/validate/import_ncu.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

int cmd_import(const std::vector<std::string>& args) {
  po::options_description opts("tilesim import ncu CSV... -o DIR [options]");
  std::vector<std::string> csvs, sets;
  std::string out_dir, shape, tile, order;
  ImportOptions o;
  int stages = 0;
  opts.add_options()("help,h", "show this help")("output,o", po::value(&out_dir), "folder for the experiments")(
      "arch", po::value(&o.arch), "arch preset (default: from the page's device name)")(
      "shape", po::value(&shape), "the GEMM's MxNxK (default: a MxNxK in the case name)")(
      "tile", po::value(&tile), "BMxBNxBK (default: from a CUTLASS or cuBLAS kernel name)")(
      "stages", po::value(&stages), "pipeline depth (default: from the kernel name, else the preset's)")(
      "order", po::value(&order), "the launch order's YAML (default: row/column/groupedG in the case name, else row)")(
      "dtype", po::value(&o.dtype)->default_value("fp16"), "operand type")(
      "family", po::value(&o.family)->default_value("imported"), "validate.family of the experiments")(
      "set", po::value(&sets)->composing(), "set a key in every experiment: --set workload.layout={a: row, b: col}");
  const po::variables_map vm = parse_args(args, opts, "csv", &csvs);
  if (vm.count("help")) {
    std::cout << opts
              << "\nEach profiled case (a raw page `ncu --csv --page raw`, case = file name without ncu_) with one\n"
                 "kernel becomes DIR/CASE.yaml: threads, registers and shared memory from its launch, the GPU\n"
                 "from its device, shape, tile and order from the options or guessed from the names (said\n"
                 "per case), and validate: {case: CASE}. Then: tilesim validate -m CSV... -e DIR.\n";
    return 0;
  }
  if (csvs.empty() || csvs[0] != "ncu")
    throw InputError("import: expected 'ncu' and Nsight Compute CSV files: tilesim import ncu CSV... -o DIR");
  csvs.erase(csvs.begin());
  if (csvs.empty()) throw InputError("import ncu: expected at least one Nsight Compute CSV (or a folder of them)");
  if (out_dir.empty()) throw InputError("import ncu: -o DIR is required (the folder for the experiments)");
  if (!shape.empty()) o.shape = parse_dims(shape, "--shape");
  if (!tile.empty()) o.tile = parse_dims(tile, "--tile");
  if (vm.count("stages")) {
    if (stages < 1 || stages > 64) throw InputError("--stages: expected 1..64, got " + std::to_string(stages));
    o.stages = static_cast<std::uint32_t>(stages);
  }
  o.order = order;
  o.overrides = sets;
  const auto imported = import_ncu(load_measured(csvs), o);
  std::filesystem::create_directories(out_dir);
  std::size_t written = 0;
  for (const ImportedCase& c : imported) {
    if (c.yaml.empty()) {
      std::cout << "skipped " << c.case_name << ": " << c.skipped << "\n";
      continue;
    }
    const std::string path = (std::filesystem::path(out_dir) / (c.case_name + ".yaml")).string();
    write_file(path, c.yaml);
    ++written;
    std::cout << "wrote " << path;
    for (std::size_t i = 0; i < c.guessed.size(); ++i) std::cout << (i ? "; " : " (") << c.guessed[i];
    std::cout << (c.guessed.empty() ? "" : ")") << "\n";
  }
  if (written == 0) throw InputError("import ncu: no case could be imported (the reasons are above)");
  std::cout << written << " experiment(s) in " << out_dir << "; compare: tilesim validate -m " << csvs[0]
            << (csvs.size() > 1 ? " ..." : "") << " -e " << out_dir << "\n";
  return 0;
}

}  // namespace tilesim::app
