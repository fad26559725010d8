// Trace files, binary and text (the reader tells them apart by their first bytes, as
// `tilesim replay` does), then the checks a replay runs before simulating; and the same bytes as
// an L2 request stream (`tilesim trace --l2-stream`, sim/report/l2_stream.hpp).
#include <sstream>

#include "sim/report/l2_stream.hpp"
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
  const fuzz::ScratchFile f(fuzz::as_text(data, size), ".l2s");
  fuzz::expect_input_errors_only([&] {
    (void)read_l2_stream(f.path(), [](const L2StreamRequest&) {}, [](Time, bool) {});
  });
  return 0;
}
