// `tilesim import ncu CSV... -o DIR`: an experiment per measured GEMM kernel of Nsight Compute
// raw pages, with a `validate:` section, so that `tilesim validate -m CSV... -e DIR` compares
// them at once (sim/tools/validate/import_ncu.hpp has what is read and guessed).
#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/tools/validate/import_cutlass.hpp"
#include "sim/tools/validate/import_ncu.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

namespace {

// Writes each imported row's experiment to OUT_DIR/CASE.yaml (`note` says what was written) and
// each skipped one's reason; returns how many were written.
template <class Row, class Note>
std::size_t write_imported(const std::string& out_dir, const std::vector<Row>& rows, Note note) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec || !std::filesystem::is_directory(out_dir))
    throw InputError(out_dir + ": cannot create the folder for the experiments" + (ec ? " (" + ec.message() + ")" : ""));
  std::vector<std::string> cases;
  for (const Row& r : rows) cases.push_back(r.case_name);
  const std::vector<std::string> files = experiment_file_names(cases);
  std::size_t written = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (r.yaml.empty()) {
      std::cout << "skipped " << r.case_name << ": " << r.skipped << "\n";
      continue;
    }
    const std::string path = (std::filesystem::path(out_dir) / files[i]).string();
    write_file(path, r.yaml);
    ++written;
    note(r, path);
  }
  return written;
}

// `tilesim import cutlass CSV... -o DIR --arch A`: the rows' experiments and DIR/measured.csv.
int import_cutlass(const std::vector<std::string>& csvs, const std::string& out_dir, const std::string& arch) {
  if (csvs.empty()) throw InputError("import cutlass: expected at least one CUTLASS profiler CSV");
  if (out_dir.empty()) throw InputError("import cutlass: -o DIR is required (the folder for the experiments)");
  if (arch.empty()) throw InputError("import cutlass: --arch is required (the profiler's CSV does not name the GPU)");
  const std::vector<CutlassImport> rows = import_cutlass_csvs(csvs, arch);
  const std::size_t written = write_imported(out_dir, rows, [](const CutlassImport&, const std::string&) {});
  if (rows.empty()) throw InputError("import cutlass: the files hold no profiled row");
  if (written == 0) throw InputError("import cutlass: no row could be imported (the reasons are above)");
  const std::string table = (std::filesystem::path(out_dir) / "measured.csv").string();
  write_file(table, cutlass_case_table(rows));
  std::cout << written << " experiment(s) and their runtimes (" << table << ") in " << out_dir
            << "; compare: tilesim validate -m " << table << " -e " << out_dir << "\n";
  return 0;
}

}  // namespace

int cmd_import(const std::vector<std::string>& args) {
  po::options_description opts("tilesim import ncu|cutlass CSV... -o DIR [options]");
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
                 "per case), and validate: {case: CASE}. Then: tilesim validate -m CSV... -e DIR.\n"
                 "A cuBLAS nvjet_* kernel (torch.matmul on Hopper) is read whole from its name: tile, stages,\n"
                 "cluster, raster, schedule, the operands' layouts and the kernel's frame; its persistent grid\n"
                 "from the launch; the swizzle inferred. Its --shape is the matmul's MxNxK (C = A B, A of M x K).\n"
                 "\n`import cutlass CSV... -o DIR --arch A` reads CUTLASS profiler CSVs (--operation=gemm --output=F):\n"
                 "an experiment per GEMM row (shape, operand types and layouts, tile, stages, split-K serial or parallel; an SM90\n"
                 "kernel's schedule, cluster, raster and swizzle) and DIR/measured.csv with the rows' runtimes.\n";
    return 0;
  }
  if (csvs.empty() || (csvs[0] != "ncu" && csvs[0] != "cutlass"))
    throw InputError("import: expected 'ncu' (Nsight Compute raw pages) or 'cutlass' (CUTLASS profiler CSVs), then the "
                     "files: tilesim import ncu|cutlass CSV... -o DIR");
  const std::string source = csvs[0];
  csvs.erase(csvs.begin());
  if (source == "cutlass") return import_cutlass(csvs, out_dir, o.arch);
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
  const std::size_t written = write_imported(out_dir, imported, [](const ImportedCase& c, const std::string& path) {
    std::cout << "wrote " << path;
    for (std::size_t i = 0; i < c.guessed.size(); ++i) std::cout << (i ? "; " : " (") << c.guessed[i];
    std::cout << (c.guessed.empty() ? "" : ")") << "\n";
  });
  if (imported.empty()) throw InputError("import ncu: the files hold no profiled case");
  if (written == 0) throw InputError("import ncu: no case could be imported (the reasons are above)");
  std::cout << written << " experiment(s) in " << out_dir << "; compare: tilesim validate -m " << csvs[0]
            << (csvs.size() > 1 ? " ..." : "") << " -e " << out_dir << "\n";
  return 0;
}

}  // namespace tilesim::app
