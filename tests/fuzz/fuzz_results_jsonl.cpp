// A sweep folder's results.jsonl as a resumed sweep reads it: lines set aside or refused, every
// kept result readable by the printers.
#include "sim/run/runner.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  const fuzz::ScratchFile f(fuzz::as_text(data, size), ".jsonl");
  fuzz::expect_input_errors_only([&] {
    (void)sweep::read_hashed_jsonl(f.path(), "result", "a point of a tilesim sweep", "choose another folder",
                                   sweep::resumed_result_problem);
  });
  return 0;
}
