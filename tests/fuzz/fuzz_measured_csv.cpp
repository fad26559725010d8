// Measurement CSVs for `tilesim validate`: Nsight Compute raw pages and case tables (told apart
// by their header), with units rows and columns; and what `tilesim import ncu` makes of them
// (its guesses read case and kernel names with patterns; every experiment it writes must load),
// and `tilesim import cutlass` reading them as CUTLASS profiler CSVs.
#include "sim/config/experiment.hpp"
#include "sim/tools/validate/import_cutlass.hpp"
#include "sim/tools/validate/import_ncu.hpp"
#include "sim/tools/validate/measured.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  const fuzz::ScratchFile f(fuzz::as_text(data, size), ".csv");
  fuzz::expect_input_errors_only([&] {
    const auto cases = load_measured({f.path()});
    ImportOptions o;
    o.arch = "h100";
    o.shape = std::array<std::uint32_t, 3>{256, 256, 256};
    for (const ImportedCase& c : import_ncu(cases, o))
      if (!c.yaml.empty()) (void)load_plan_text(c.yaml, "imported.yaml", ".", {});
  });
  // The same bytes as a CUTLASS profiler CSV (`tilesim import cutlass`).
  fuzz::expect_input_errors_only([&] {
    for (const CutlassImport& c : import_cutlass_csv(f.path(), "h100"))
      if (!c.yaml.empty()) (void)load_plan_text(c.yaml, "imported.yaml", ".", {});
  });
  return 0;
}
