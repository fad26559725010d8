// Chain order files: what the reader accepts and the errors it gives (format in
// workloads/orders/chain_order_file.hpp and docs/orders.md).
#include <catch2/catch.hpp>

#include <sstream>

#include "common/error.hpp"
#include "workloads/orders/chain_order_file.hpp"
#include "workloads/orders/order_file.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

ChainOrder parse(const std::string& text) {
  std::istringstream in(text);
  return parse_chain_order(in, "c.order");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("chain order file: header, producer and consumer tiles in file order", "[orders][chain]") {
  const ChainOrder c = parse("# comment\nchain 2 1 1\n\np 1 0\np 0 0   # trailing comment\nc 1 0\nc 0 0\n");
  CHECK(c.grid_m == 2);
  CHECK(c.grid_n == 1);
  CHECK(c.consumer_n == 1);
  CHECK(c.header_line == 2);
  REQUIRE(c.entries.size() == 4);
  CHECK((!c.entries[0].consumer && c.entries[0].m == 1 && c.entries[0].n == 0 && c.entries[0].line == 4));
  CHECK((c.entries[2].consumer && c.entries[2].m == 1));
  std::istringstream a("\n# x\nchain 1 1 1\n"), b("p 0 0\n"), e("");
  CHECK(is_chain_order(a));
  CHECK_FALSE(is_chain_order(b));
  CHECK_FALSE(is_chain_order(e));
}

TEST_CASE("chain order file: each malformed file gets one error naming its line", "[orders][chain]") {
  CHECK_THAT(error_of("chain 2 x 1\n"), Contains("c.order:1: expected the header 'chain M N N1'"));
  CHECK_THAT(error_of("chain 0 1 1\n"), Contains("c.order:1:"));
  CHECK_THAT(error_of("p 0 0\n"), Contains("c.order:1: expected the header"));
  CHECK_THAT(error_of("chain 1 1 1\nq 0 0\n"), Contains("c.order:2: expected a producer tile 'p m n'"));
  CHECK_THAT(error_of("chain 1 1 1\np 0 0 0\n"), Contains("c.order:2:"));
  CHECK_THAT(error_of("chain 1 1 1\np -1 0\n"), Contains("c.order:2:"));
  CHECK_THAT(error_of("chain 1 1 1\np 0 1\n"), Contains("c.order:2: producer tile (0, 1) is outside the 1x1 grid"));
  CHECK_THAT(error_of("chain 1 1 1\np 0 0\np 0 0\n"), Contains("c.order:3: producer tile (0, 0) repeats line 2"));
  CHECK_THAT(error_of("chain 1 1 2\np 0 0\nc 0 1\n"), Contains("c.order: consumer tile (0, 0) is missing"));
  CHECK_THAT(error_of("chain 1 1 1\nc 0 0\n"), Contains("c.order: producer tile (0, 0) is missing"));
  CHECK_THAT(error_of("# only a comment\n"), Contains("empty chain order file"));
  CHECK_THAT(error_of("chain 1 1 1\np 99999999999 0\n"), Contains("c.order:2:"));
}

TEST_CASE("chain order file: as a single GEMM's order file it is refused with what it is for", "[orders][chain]") {
  std::istringstream in("chain 1 1 1\np 0 0\nc 0 0\n");
  REQUIRE_THROWS_WITH(parse_order_file(in, "g.order"),
                      Contains("g.order:1: a chain order file") && Contains("sync: dataflow"));
}

TEST_CASE("chain order file: a header declaring more tiles than a file can hold is refused at once", "[orders][chain]") {
  CHECK_THAT(error_of("chain 999999999 999999999 999999999\n"), Contains("c.order:1: the header declares"));
  CHECK_THAT(error_of("chain 20000 20000 20000\n"), Contains("at most 4194304"));
}
