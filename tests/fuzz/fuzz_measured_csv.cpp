// Measurement CSVs for `tilesim validate`: Nsight Compute raw pages and case tables (told apart
// by their header), with units rows and columns.
#include "sim/tools/validate/measured.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  const fuzz::ScratchFile f(fuzz::as_text(data, size), ".csv");
  fuzz::expect_input_errors_only([&] { (void)load_measured({f.path()}); });
  return 0;
}
