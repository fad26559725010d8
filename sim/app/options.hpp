#pragma once
// Shared command-line plumbing: parsing with readable errors, writing output files.
#include <boost/program_options.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/report/report.hpp"

namespace tilesim::app {

/// Parses a verb's arguments: the `visible` options plus positional arguments, named
/// `positional` in errors and stored in `*target` (one; a vector takes them all). Errors
/// become InputError.
template <class Target>
boost::program_options::variables_map parse_args(const std::vector<std::string>& args,
                                                 const boost::program_options::options_description& visible,
                                                 const char* positional, Target* target) {
  namespace po = boost::program_options;
  po::options_description all;
  all.add(visible);
  all.add_options()(positional, po::value(target));
  po::positional_options_description pos;
  pos.add(positional, std::is_same_v<Target, std::string> ? 1 : -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string("command line: ") + e.what());
  }
  return vm;
}

/// `--grid MxN`: M and N in 1..max_side; anything else (a missing 'x', trailing text) is an
/// error naming the option.
inline std::pair<std::uint32_t, std::uint32_t> parse_grid(const std::string& grid, unsigned long max_side) {
  unsigned long gm = 0, gn = 0;
  char x = 0;
  std::istringstream gs(grid);
  if (!(gs >> gm >> x >> gn) || x != 'x' || !gs.eof() || gm == 0 || gn == 0 || gm > max_side || gn > max_side)
    throw InputError("--grid: expected MxN with M and N in 1.." + std::to_string(max_side) + ", got '" + grid + "'");
  return {static_cast<std::uint32_t>(gm), static_cast<std::uint32_t>(gn)};
}

/// The one point of an experiment a verb works on (`what`: "trace writes", ...); a sweep is an
/// error naming the file and how to pick a point.
inline const ExperimentPoint& single_point(const Experiment& e, const std::string& path, const std::string& what) {
  if (e.points.size() != 1)
    throw InputError(path + ": " + what + " one workload, but the sweep has " + std::to_string(e.points.size()) +
                     " points; pick one with --set (e.g. --set order.kind=row) or remove the sweep");
  return e.points[0];
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError(path + ": cannot open for writing");
  out << text;
  // A short text sits in the stream's buffer until it is closed: close before checking, or a
  // full disk is noticed only by the destructor, which says nothing.
  out.close();
  if (!out) throw InputError(path + ": write failed");
}

/// Writes `--json` and `--csv` outputs when their paths are set, from result_json objects.
inline void write_outputs(const std::string& experiment, const std::vector<nlohmann::json>& results, bool sweep,
                          const std::string& json_path, const std::string& csv_path) {
  if (!json_path.empty()) write_file(json_path, run_json(experiment, results, sweep).dump(2) + "\n");
  if (!csv_path.empty()) {
    std::ostringstream csv;
    write_csv(csv, results);
    write_file(csv_path, csv.str());
  }
}

/// The same from simulation results. `bounds`: see report.hpp.
inline void write_outputs(const std::string& experiment, const std::vector<SimResult>& results, bool sweep,
                          const std::string& json_path, const std::string& csv_path,
                          const std::vector<RunBounds>* bounds = nullptr) {
  write_outputs(experiment, results_json(results, bounds), sweep, json_path, csv_path);
}

/// Writes `--timeline FILE` of one result: CSV when FILE ends in .csv, else trace-event JSON.
inline void write_timeline(const std::string& path, const SimResult& r) {
  std::ostringstream text;
  const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  if (csv)
    write_timeline_csv(text, r);
  else
    write_timeline_trace_json(text, r);
  write_file(path, text.str());
}

}  // namespace tilesim::app
