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
  m.attr("version") = TILESIM_VERSION;
}
