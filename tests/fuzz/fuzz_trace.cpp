// Trace files, binary and text (the reader tells them apart by their first bytes, as
// `tilesim replay` does), then the checks a replay runs before simulating.
#include <sstream>

#include "traces/trace.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "workloads/kernel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  fuzz::expect_input_errors_only([&] {
    std::istringstream in(std::string(fuzz::as_text(data, size)));
    const Workload w = read_trace(in, "fuzz.trace");
    validate_workload(w, "fuzz.trace");
  });
  return 0;
}
