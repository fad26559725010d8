// Order files (`order: {kind: file}` and `tilesim order` output).
#include <sstream>

#include "tests/fuzz/fuzz_util.hpp"
#include "workloads/orders/order_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  fuzz::expect_input_errors_only([&] {
    std::istringstream in(std::string(fuzz::as_text(data, size)));
    (void)parse_order_file(in, "fuzz.order");
  });
  return 0;
}
