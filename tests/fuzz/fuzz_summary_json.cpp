// A sweep's summary.json as `tilesim report` reads it, then the page built from it.
#include "sim/report/html.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  const fuzz::ScratchFile f(fuzz::as_text(data, size), "_summary.json");
  fuzz::expect_input_errors_only([&] {
    const nlohmann::json s = load_sweep_summary(f.path());
    (void)html_report(s);
  });
  return 0;
}
