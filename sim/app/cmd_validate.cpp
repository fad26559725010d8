// `tilesim validate`: simulates experiments that mirror measured kernels and compares them
// with the measurements (docs/validation.md). Exits 4 when a target is missed.
#include <boost/program_options.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <stdexcept>
#include <vector>

#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/tools/validate/report.hpp"
#include "sim/tools/validate/validation.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

namespace {

// The cases of a --cases-jsonl file, by name, and its whole lines (none when it does not exist
// yet). A line cut short by a killed run (the last one) is dropped: that case is simulated again.
struct CasesFile {
  std::map<std::string, CaseComparison> cases;
  std::vector<std::string> lines;
};

CasesFile read_cases_jsonl(const std::string& path) {
  CasesFile out;
  std::ifstream in(path);
  if (!in) return out;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() && in.peek() == std::char_traits<char>::eof()) break;  // the last line, unfinished
    try {
      if (j.is_discarded()) throw std::invalid_argument("not JSON");
      CaseComparison c = case_from_json(j);
      out.cases[c.name] = std::move(c);
      out.lines.push_back(line);
    } catch (const std::exception& e) {
      throw InputError(path + ":" + std::to_string(number) + ": --resume: expected a case line of --cases-jsonl (" +
                       e.what() + ")");
    }
  }
  return out;
}

}  // namespace

int cmd_validate(const std::vector<std::string>& args) {
  po::options_description opts("tilesim validate --measured CSV... --experiments DIR|YAML... [options]");
  std::vector<std::string> measured_files, experiment_paths, overrides;
  std::string json_path, cases_path, targets_path, subset = "validation", extra, clock = "auto";
  int jobs = 0, seeds = 1;
  double tie = 2, hit = -1, dram = -1, time = -1, rank = -1, knee = -1;
  opts.add_options()("help,h", "show this help")(
      "measured,m", po::value(&measured_files)->multitoken(),
      "measurement CSVs: Nsight Compute raw pages (ncu --csv --page raw; the case is the file name without "
      "ncu_) or case tables with a `case` column (metrics and/or median_us)")(
      "experiments,e", po::value(&experiment_paths)->multitoken(),
      "experiment YAMLs or folders of them; each is matched to the measured case named by its validate.case "
      "(default: its name)")("set", po::value(&overrides), "override a key in every experiment (repeatable)")(
      "json", po::value(&json_path), "write every figure and aggregate as JSON to FILE")(
      "cases-jsonl", po::value(&cases_path),
      "append each case's figures to FILE as one JSON line the moment it is simulated (the \"cases\" entries of "
      "--json), so that a run cut short keeps what it did")(
      "resume", "with --cases-jsonl: take the cases already in FILE (same case, same experiment file) instead of "
                "simulating them again, and append the others; the report covers both. The earlier run's options "
                "(--set, --clock, --seeds) are not checked: give the same")(
      "jobs,j", po::value(&jobs)->default_value(0), "simulate up to N cases in parallel (0 = all cores)")(
      "tie-tolerance", po::value(&tie)->default_value(2.0),
      "policy pairs whose measured values differ by at most this many percent are not ranked")(
      "targets", po::value(&targets_path), "YAML of targets (subset, hit_mae_pp, dram_read_mape_pct, "
                                           "duration_mape_pct, rank_agreement, knee_error_mib, l2_lookups_mape_pct)")(
      "subset", po::value(&subset), "subset the command-line targets apply to: calibration, validation (default), all")(
      "max-hit-mae", po::value(&hit), "target: L2 hit-rate mean absolute error, points")(
      "max-dram-mape", po::value(&dram), "target: DRAM read bytes mean absolute percentage error")(
      "max-time-mape", po::value(&time), "target: duration mean absolute percentage error")(
      "min-rank-agreement", po::value(&rank), "target: fraction of policy pairs ranked as measured, 0..1")(
      "max-knee-error", po::value(&knee), "target: capacity-curve knee error, MiB")(
      "clock", po::value(&clock)->default_value("auto"),
      "the SM clock each case is simulated at: auto (the clock Nsight Compute recorded, where the compared "
      "duration is its gpu__time_duration: ncu locks clocks to base by default; else the arch's, and an "
      "event-timed case's Nsight Compute counters are simulated apart at the clock it recorded) or model "
      "(always the arch's, one simulation per case: its power cap, or sm.clock_mhz)")(
      "seeds", po::value(&seeds)->default_value(1),
      "simulate each case with N seeds of the per-step noise (sim.seed, sim.seed + 1, ...) and compare their "
      "mean; the JSON adds each figure's least and greatest")(
      "quiet,q", "print no progress (a bar on a terminal, else a line every 10 s once it takes that long)");
  const po::variables_map vm = parse_args(args, opts, "unexpected-argument", &extra);
  if (vm.count("help")) {
    std::cout << opts << "\nExit codes: 0 all targets met (or none given), 4 a target missed, 2 bad input.\n";
    return 0;
  }
  if (!extra.empty()) throw InputError("validate: unexpected argument '" + extra + "' (use --measured and --experiments)");
  if (measured_files.empty()) throw InputError("validate: --measured: expected at least one CSV file");
  if (experiment_paths.empty()) throw InputError("validate: --experiments: expected experiment files or folders");
  if (tie < 0 || tie > 100) throw InputError("validate: --tie-tolerance: expected 0 to 100 percent");
  if (clock != "auto" && clock != "model") throw InputError("validate: --clock: expected auto or model, got '" + clock + "'");
  if (seeds < 1 || seeds > 1000) throw InputError("validate: --seeds: expected 1 to 1000, got " + std::to_string(seeds));

  std::vector<Targets> target_sets;
  if (!targets_path.empty()) target_sets = load_targets(targets_path);
  // Command-line targets form one more set (on --subset, every family together).
  Targets cli;
  if (vm.count("subset")) {
    if (subset != "calibration" && subset != "validation" && subset != "all")
      throw InputError("validate: --subset: expected calibration, validation or all, got '" + subset + "'");
    cli.subset = subset;
  }
  if (hit >= 0) cli.hit_mae_pp = hit;
  if (dram >= 0) cli.dram_read_mape_pct = dram;
  if (time >= 0) cli.duration_mape_pct = time;
  if (rank >= 0) cli.rank_agreement = rank;
  if (knee >= 0) cli.knee_error_mib = knee;
  const auto has_any = [](const Targets& t) {
    return t.hit_mae_pp || t.dram_read_mape_pct || t.duration_mape_pct || t.rank_agreement || t.knee_error_mib ||
           t.l2_lookups_mape_pct;
  };
  if (has_any(cli)) target_sets.push_back(cli);

  const auto measured = load_measured(measured_files);
  const auto experiments = load_validation_experiments(experiment_files(experiment_paths), overrides);
  const bool resume = vm.count("resume") > 0;
  if (resume && cases_path.empty()) throw InputError("validate: --resume: needs --cases-jsonl FILE (the cases to resume from)");
  const CasesFile before = resume ? read_cases_jsonl(cases_path) : CasesFile{};
  std::ofstream cases_out;
  if (!cases_path.empty()) {
    // Rewritten from its whole lines, so that what follows does not join a torn last line.
    cases_out.open(cases_path, std::ios::trunc);
    if (!cases_out) throw InputError("validate: --cases-jsonl: cannot write " + cases_path);
    for (const std::string& line : before.lines) cases_out << line << "\n";
    cases_out << std::flush;
  }
  const auto write_case = [&](const CaseComparison& c) {
    cases_out << case_json(c).dump() << "\n" << std::flush;
  };
  const ValidationReport rep =
      validate(experiments, measured, jobs, tie / 100.0, sweep::progress_style(vm.count("quiet") > 0),
               clock == "model" ? ClockChoice::model : ClockChoice::automatic, seeds,
               cases_path.empty() ? std::function<void(const CaseComparison&)>{} : write_case, resume ? &before.cases : nullptr);
  write_validation_table(std::cout, rep);
  if (!json_path.empty()) write_file(json_path, validation_json(rep).dump(2) + "\n");
  bool missed_any = false;
  for (const Targets& t : target_sets) {
    const std::string where = t.subset + (t.family.empty() ? "" : ", family " + t.family);
    const auto missed = missed_targets(rep, t);
    for (const auto& m : missed) std::cerr << "tilesim: target missed (" << where << "): " << m << "\n";
    if (missed.empty() && has_any(t)) std::cout << "all targets met on the " << where << " subset\n";
    missed_any = missed_any || !missed.empty();
  }
  return missed_any ? 4 : 0;
}

}  // namespace tilesim::app
