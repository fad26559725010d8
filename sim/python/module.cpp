// The `tilesim` Python module's native part (`tilesim._tilesim`): the sweep runner of
// `tilesim run`, called with an experiment's text. The package around it (sim/python/tilesim/)
// turns dicts, YAML strings and paths into that text and the summary back into Python objects.
// The GIL is released while points are simulated, so Python threads can run experiments side
// by side; errors arrive as tilesim.InputError (bad input, ValueError) or
// tilesim.DeadlockError (a schedule that cannot make progress, RuntimeError), carrying tilesim's message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/run/runner.hpp"
#include "sim/tools/explore/explore_data.hpp"
#include "sim/tools/explore/page.hpp"
#include "sim/tools/explore/wasm_module.hpp"
#include "sim/tools/tune/tune.hpp"
#include "sim/tools/validate/import_cutlass.hpp"
#include "sim/tools/validate/import_ncu.hpp"
#include "sim/tools/validate/measured.hpp"
#include "sim/tools/validate/report.hpp"
#include "sim/tools/validate/validation.hpp"

namespace py = pybind11;

namespace {

// A C++ string as a Python str: names read from files may hold any bytes, and a str that is not
// UTF-8 would fail the conversion; such bytes become U+FFFD.
py::str text(const std::string& s) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

py::list texts(const std::vector<std::string>& v) {
  py::list out;
  for (const std::string& s : v) out.append(text(s));
  return out;
}

// Loads, validates and simulates every point; the summary as `tilesim run --out` writes it
// (summary.json: experiment, axes, points with config and result, comparison groups).
std::string run_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                     const std::vector<std::string>& overrides, int jobs, const std::string& out_dir) {
  if (jobs < 0) throw tilesim::InputError("jobs: expected a non-negative integer");
  py::gil_scoped_release release;
  const tilesim::ExperimentPlan plan = tilesim::load_plan_text(text, origin, base_dir, overrides);
  tilesim::sweep::ProcessGroup group;
  tilesim::sweep::RunSettings settings;
  settings.jobs = jobs;
  settings.out_dir = out_dir;  // as `tilesim run --out`: written as it runs, resumed when run again
  const tilesim::sweep::SweepOutcome outcome = tilesim::sweep::run_sweep(plan, settings, group);
  return tilesim::sweep::summary_json(plan, outcome).dump();
}

// `tilesim explore`: the page of point `point` (and of `compare_text`'s point `compare_point`
// when given) written to `path`.
void explore_page(const std::string& text, const std::string& origin, const std::string& base_dir,
                  const std::vector<std::string>& overrides, std::size_t point, const std::string& compare_text,
                  const std::string& compare_origin, const std::string& compare_dir, std::size_t compare_point,
                  const std::string& path) {
  if (!tilesim::explore_assets::replay_wasm_missing().empty())
    throw tilesim::InputError("explore: " + tilesim::explore_assets::replay_wasm_missing());
  py::gil_scoped_release release;
  const auto view = [](const tilesim::ExperimentPlan& plan, std::size_t i, const char* what) {
    if (i >= plan.size())
      throw tilesim::InputError(std::string(what) + ": point " + std::to_string(i) + " is out of range; the experiment has " +
                                std::to_string(plan.size()));
    // As the CLI labels a point: its sweep label, else the file's stem (the name for a dict or string).
    const std::string stem = plan.file.rfind('<', 0) == 0 ? plan.name : std::filesystem::path(plan.file).stem().string();
    return tilesim::explore::explore_view(plan, i, plan.label(i).empty() ? stem : plan.label(i));
  };
  std::vector<nlohmann::json> views;
  const tilesim::ExperimentPlan plan = tilesim::load_plan_text(text, origin, base_dir, overrides);
  views.push_back(view(plan, point, "point"));
  if (!compare_text.empty()) {
    const tilesim::ExperimentPlan other = tilesim::load_plan_text(compare_text, compare_origin, compare_dir, {});
    views.push_back(view(other, compare_point, "compare_point"));
  }
  const std::string page = tilesim::explore::explore_page(tilesim::explore::explore_data(std::move(views)));
  std::ofstream out(path, std::ios::binary);
  out << page;
  out.close();
  if (!out) throw tilesim::InputError(path + ": cannot write the page");
}

py::dict measured_dict(const tilesim::tune::Measured& m) {
  py::dict d;
  d["duration_ns"] = m.duration_ns;
  d["dram_bytes"] = m.dram_bytes;
  d["waves"] = m.waves;
  d["last_wave_utilization"] = m.last_wave_utilization;
  return d;
}

// `tilesim tune` on an experiment's text: every candidate, the best, and the best as YAML.
py::dict tune_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                   const std::vector<std::string>& overrides, const std::string& strategy, const std::string& objective,
                   double top_fraction, const std::string& cache_dir, int jobs) {
  namespace tn = tilesim::tune;
  tn::Settings s;
  s.strategy = tn::parse_strategy(strategy);
  s.objective = tn::parse_objective(objective);
  if (!(top_fraction > 0 && top_fraction <= 1)) throw tilesim::InputError("top_fraction: expected a fraction in (0, 1]");
  s.top_fraction = top_fraction;
  s.cache_dir = cache_dir;
  if (jobs < 0) throw tilesim::InputError("jobs: expected a non-negative integer");
  s.jobs = jobs;
  std::optional<tn::TunePlans> plans;
  tn::Outcome o;
  std::string best;
  {
    py::gil_scoped_release release;
    plans.emplace(tn::load_tune_plans_text(text, origin, base_dir, overrides));
    o = tn::run_tune(*plans, s);
    if (o.best) best = tn::best_yaml(*plans, o);
  }
  py::list cands;
  for (const auto& c : o.candidates) {
    py::dict d;
    d["index"] = c.index;
    d["label"] = c.label;
    d["legal"] = c.legal;
    d["error"] = c.error;
    d["measured"] = c.measured ? py::object(measured_dict(*c.measured)) : py::object(py::none());
    cands.append(d);
  }
  py::dict out;
  out["candidates"] = cands;
  out["best"] = o.best ? py::object(py::int_(*o.best)) : py::object(py::none());
  out["best_yaml"] = best;
  out["base"] = measured_dict(o.base);
  out["base_label"] = o.base_label;
  out["legal"] = o.legal;
  out["illegal"] = o.illegal;
  out["simulated"] = o.simulated;
  out["from_cache"] = o.from_cache;
  out["settings"] = tn::settings_text(s);
  return out;
}

// `tilesim validate`: the experiments against the measurements; validation_json as a string.
std::string validate_text(const std::vector<std::string>& measured, const std::vector<std::string>& experiments,
                          const std::vector<std::string>& overrides, int jobs, double tie_percent,
                          const std::string& clock, int seeds) {
  if (jobs < 0) throw tilesim::InputError("jobs: expected a non-negative integer");
  if (tie_percent < 0 || tie_percent > 100) throw tilesim::InputError("tie_tolerance: expected 0 to 100 percent");
  if (clock != "auto" && clock != "model") throw tilesim::InputError("clock: expected 'auto' or 'model', got '" + clock + "'");
  if (seeds < 1 || seeds > 1000) throw tilesim::InputError("seeds: expected 1 to 1000, got " + std::to_string(seeds));
  py::gil_scoped_release release;
  const auto cases = tilesim::load_measured(measured);
  const auto exps = tilesim::load_validation_experiments(tilesim::experiment_files(experiments), overrides);
  return tilesim::validation_json(tilesim::validate(exps, cases, jobs, tie_percent / 100.0, tilesim::sweep::ProgressStyle::off,
                                                    clock == "model" ? tilesim::ClockChoice::model
                                                                     : tilesim::ClockChoice::automatic,
                                                    seeds))
      .dump();
}

// Imported rows (ImportedCase or CutlassImport) as Python dicts: case, file (the name the CLI
// writes it under), yaml and skipped, plus what `extra` adds.
template <class Row, class Extra>
py::list imported_list(const std::vector<Row>& rows, Extra extra) {
  std::vector<std::string> names;
  for (const Row& r : rows) names.push_back(r.case_name);
  const auto files = tilesim::experiment_file_names(names);
  py::list out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    py::dict d;
    d["case"] = text(rows[i].case_name);
    d["file"] = text(files[i]);
    d["yaml"] = text(rows[i].yaml);
    d["skipped"] = text(rows[i].skipped);
    extra(d, rows[i]);
    out.append(d);
  }
  return out;
}

// `tilesim import ncu` on `paths`: per case (name order) a dict of case, yaml ("" when
// skipped), skipped (the reason) and guessed (what came from names).
py::list import_ncu(const std::vector<std::string>& paths, const std::string& arch, const std::string& shape,
                    const std::string& tile, int stages, const std::string& order, const std::string& dtype,
                    const std::string& family, const std::vector<std::string>& overrides) {
  tilesim::ImportOptions o;
  o.arch = arch;
  if (paths.empty()) throw tilesim::InputError("import_ncu: expected at least one Nsight Compute CSV (or a folder)");
  if (!shape.empty()) o.shape = tilesim::parse_dims(shape, "shape");
  if (!tile.empty()) o.tile = tilesim::parse_dims(tile, "tile");
  if (stages < 0 || stages > 64) throw tilesim::InputError("stages: expected 1..64, got " + std::to_string(stages));
  if (stages > 0) o.stages = static_cast<std::uint32_t>(stages);
  o.order = order;
  o.dtype = dtype;
  o.family = family;
  o.overrides = overrides;
  std::vector<tilesim::ImportedCase> cases;
  {
    py::gil_scoped_release release;
    cases = tilesim::import_ncu(tilesim::load_measured(paths), o);
  }
  return imported_list(cases, [](py::dict& d, const tilesim::ImportedCase& c) { d["guessed"] = texts(c.guessed); });
}

// `tilesim import cutlass` on `paths`: per GEMM row a dict of case, yaml, skipped, runtime_us.
py::list import_cutlass(const std::vector<std::string>& paths, const std::string& arch) {
  if (arch.empty()) throw tilesim::InputError("arch: required (the profiler's CSV does not name the GPU)");
  if (paths.empty()) throw tilesim::InputError("import_cutlass: expected at least one CUTLASS profiler CSV");
  std::vector<tilesim::CutlassImport> rows;
  {
    py::gil_scoped_release release;
    rows = tilesim::import_cutlass_csvs(paths, arch);
  }
  return imported_list(rows, [](py::dict& d, const tilesim::CutlassImport& r) { d["runtime_us"] = r.runtime_us; });
}

// The case table `tilesim import cutlass` writes (case,median_us) for rows as import_cutlass
// returns them (only `case`, `yaml` and `runtime_us` are read).
std::string cutlass_table(const py::list& rows) {
  std::vector<tilesim::CutlassImport> v;
  for (const py::handle h : rows) {
    const py::dict d = h.cast<py::dict>();
    tilesim::CutlassImport r;
    r.case_name = d["case"].cast<std::string>();
    r.yaml = d["yaml"].cast<std::string>();
    r.runtime_us = d["runtime_us"].cast<double>();
    v.push_back(std::move(r));
  }
  return tilesim::cutlass_case_table(v);
}

}  // namespace

PYBIND11_MODULE(_tilesim, m) {
  spdlog::set_level(spdlog::level::warn);  // as the CLI without -v: no per-run info lines
  m.doc() = "tilesim's native core: run_text(text, origin, base_dir, overrides, jobs) -> summary JSON";
  static py::exception<tilesim::InputError> input_error(m, "InputError", PyExc_ValueError);
  static py::exception<tilesim::DeadlockError> deadlock_error(m, "DeadlockError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tilesim::InputError& e) {
      input_error(e.what());
    } catch (const tilesim::DeadlockError& e) {
      deadlock_error(e.what());
    }
  });
  m.def("run_text", &run_text, py::arg("text"), py::arg("origin"), py::arg("base_dir"), py::arg("overrides"),
        py::arg("jobs") = 0, py::arg("out_dir") = "",
        "Simulates every point of the experiment in `text` (YAML) with `overrides` ('key=value' as --set);\n"
        "returns the summary JSON of `tilesim run --out` as a string.");
  m.def("validate_text", &validate_text, py::arg("measured"), py::arg("experiments"), py::arg("overrides"),
        py::arg("jobs") = 0, py::arg("tie_percent") = 2.0, py::arg("clock") = "auto", py::arg("seeds") = 1,
        "tilesim validate: the validation JSON (--json) of the experiments against the measurements.");
  m.def("tune_text", &tune_text, py::arg("text"), py::arg("origin"), py::arg("base_dir"), py::arg("overrides"),
        py::arg("strategy"), py::arg("objective"), py::arg("top_fraction"), py::arg("cache_dir"), py::arg("jobs"),
        "tilesim tune on an experiment with a tune: section: candidates, best, best_yaml.");
  m.def("explore_page", &explore_page, py::arg("text"), py::arg("origin"), py::arg("base_dir"), py::arg("overrides"),
        py::arg("point"), py::arg("compare_text"), py::arg("compare_origin"), py::arg("compare_dir"),
        py::arg("compare_point"), py::arg("path"), "tilesim explore: writes the explorer page to `path`.");
  m.def("import_cutlass", &import_cutlass, py::arg("paths"), py::arg("arch"),
        "Experiments from CUTLASS profiler CSVs (tilesim import cutlass): a list of per-row dicts.");
  m.def("cutlass_table", &cutlass_table, py::arg("rows"), "The case table import cutlass writes.");
  m.def("import_ncu", &import_ncu, py::arg("paths"), py::arg("arch"), py::arg("shape"), py::arg("tile"),
        py::arg("stages"), py::arg("order"), py::arg("dtype"), py::arg("family"), py::arg("overrides"),
        "Experiments from Nsight Compute raw pages (tilesim import ncu): a list of per-case dicts.");
  m.attr("version") = TILESIM_VERSION;
}
