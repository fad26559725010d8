// Order files (`order: {kind: file}` and `tilesim order` output) and chain order files
// (`order-search --chain` output): both readers on every input.
#include <sstream>
#include <stdexcept>

#include "tests/fuzz/fuzz_util.hpp"
#include "workloads/orders/chain_order_file.hpp"
#include "workloads/orders/order_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  fuzz::expect_input_errors_only([&] {
    std::istringstream in(std::string(fuzz::as_text(data, size)));
    (void)parse_order_file(in, "fuzz.order");
  });
  fuzz::expect_input_errors_only([&] {
    std::istringstream in(std::string(fuzz::as_text(data, size)));
    const bool chain = is_chain_order(in);
    std::istringstream again(std::string(fuzz::as_text(data, size)));
    const ChainOrder c = parse_chain_order(again, "fuzz.chain");
    if (!chain) throw std::logic_error("parsed a chain order without a chain header");
    // Every tile of both grids exactly once, as the reader promises.
    if (c.entries.size() != std::size_t{c.grid_m} * (c.grid_n + c.consumer_n))
      throw std::logic_error("a chain order with a wrong number of entries was accepted");
  });
  return 0;
}
