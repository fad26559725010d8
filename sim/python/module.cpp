// The `tilesim` Python module's native part (`tilesim._tilesim`): the sweep runner of
// `tilesim run`, called with an experiment's text. The package around it (sim/python/tilesim/)
// turns dicts, YAML strings and paths into that text and the summary back into Python objects.
// The GIL is released while points are simulated, so Python threads can run experiments side
// by side; errors arrive as tilesim.InputError (bad input, ValueError) or
// tilesim.DeadlockError (a schedule that cannot make progress, RuntimeError), carrying tilesim's message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/run/runner.hpp"
#include "sim/tools/validate/import_ncu.hpp"
#include "sim/tools/validate/measured.hpp"

namespace py = pybind11;

namespace {

// Loads, validates and simulates every point; the summary as `tilesim run --out` writes it
// (summary.json: experiment, axes, points with config and result, comparison groups).
std::string run_text(const std::string& text, const std::string& origin, const std::string& base_dir,
                     const std::vector<std::string>& overrides, int jobs) {
  if (jobs < 0) throw tilesim::InputError("jobs: expected a non-negative integer");
  py::gil_scoped_release release;
  const tilesim::ExperimentPlan plan = tilesim::load_plan_text(text, origin, base_dir, overrides);
  tilesim::sweep::ProcessGroup group;
  tilesim::sweep::RunSettings settings;
  settings.jobs = jobs;
  const tilesim::sweep::SweepOutcome outcome = tilesim::sweep::run_sweep(plan, settings, group);
  return tilesim::sweep::summary_json(plan, outcome).dump();
}

// `tilesim import ncu` on `paths`: per case (name order) a dict of case, yaml ("" when
// skipped), skipped (the reason) and guessed (what came from names).
py::list import_ncu(const std::vector<std::string>& paths, const std::string& arch, const std::string& shape,
                    const std::string& tile, int stages, const std::string& order, const std::string& dtype,
                    const std::string& family, const std::vector<std::string>& overrides) {
  tilesim::ImportOptions o;
  o.arch = arch;
  if (!shape.empty()) o.shape = tilesim::parse_dims(shape, "shape");
  if (!tile.empty()) o.tile = tilesim::parse_dims(tile, "tile");
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
  py::list out;
  for (const auto& c : cases) {
    py::dict d;
    d["case"] = c.case_name;
    d["yaml"] = c.yaml;
    d["skipped"] = c.skipped;
    d["guessed"] = c.guessed;
    out.append(d);
  }
  return out;
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
        py::arg("jobs") = 0,
        "Simulates every point of the experiment in `text` (YAML) with `overrides` ('key=value' as --set);\n"
        "returns the summary JSON of `tilesim run --out` as a string.");
  m.def("import_ncu", &import_ncu, py::arg("paths"), py::arg("arch"), py::arg("shape"), py::arg("tile"),
        py::arg("stages"), py::arg("order"), py::arg("dtype"), py::arg("family"), py::arg("overrides"),
        "Experiments from Nsight Compute raw pages (tilesim import ncu): a list of per-case dicts.");
  m.attr("version") = TILESIM_VERSION;
}
