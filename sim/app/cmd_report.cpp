// `tilesim report OUTDIR -o report.html`: the HTML report of a finished sweep (docs/report.md),
// one self-contained file that opens offline.
#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/report/html.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

int cmd_report(const std::vector<std::string>& args) {
  po::options_description opts("tilesim report OUTDIR [-o FILE]");
  std::string input, out_path;
  bool quiet = false;
  opts.add_options()("help,h", "show this help")(
      "output,o", po::value(&out_path), "HTML file to write (default: OUTDIR/report.html)")(
      "quiet,q", po::bool_switch(&quiet), "print nothing on success");
  const po::variables_map vm = parse_args(args, opts, "report", &input);
  if (vm.count("help")) {
    std::cout << opts
              << "\nOUTDIR is the output folder of `tilesim run SWEEP.yaml -o OUTDIR` (or its summary.json).\n"
                 "The page embeds its data, scripts and styles: it opens offline, from a file.\n";
    return 0;
  }
  if (input.empty()) throw InputError("report: expected OUTDIR, the output folder of `tilesim run SWEEP.yaml -o OUTDIR`");
  const nlohmann::json summary = load_sweep_summary(input);
  if (out_path.empty()) {
    const std::filesystem::path in(input);
    out_path = ((std::filesystem::is_directory(in) ? in : in.parent_path()) / "report.html").string();
  }
  write_file(out_path, html_report(summary));
  if (!quiet)
    std::cout << out_path << ": " << summary.at("points").size() << " points, " << summary.at("groups").size()
              << " groups\n";
  return 0;
}

}  // namespace tilesim::app
