// Experiment YAML: the plan (YAML, sweep grammar, only_if/exclude expressions, --set style
// assignments of each point), each point's resolved YAML, hash and arch. Workloads are not
// generated: their generators are tested in tests/workloads, and a valid large size is slow by
// design, which a fuzzer would report as a hang.
#include "sim/config/experiment.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  fuzz::expect_input_errors_only([&] {
    const ExperimentPlan plan = load_plan_text(std::string(fuzz::as_text(data, size)), "fuzz.yaml", "/nonexistent", {});
    for (std::size_t i = 0; i < plan.size() && i < 8; ++i) {
      (void)plan.point_yaml(i);
      (void)plan.point_hash(i);
    }
  });
  return 0;
}
