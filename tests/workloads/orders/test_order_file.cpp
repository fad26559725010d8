// Order files: parsing, validation against the grid, and the write/read round trip.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "common/error.hpp"
#include "workloads/orders/order.hpp"
#include "order_test_util.hpp"
#include "workloads/orders/order_file.hpp"

using namespace tilesim;
using tilesim::test::cat;
using Catch::Matchers::Contains;

namespace {

/// A scratch folder per test process, so parallel ctest runs do not share files.
class ScratchDir {
 public:
  ScratchDir()
      : dir_(std::filesystem::temp_directory_path() / cat("tilesim_orders_", ::getpid())) {
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string dir() const { return dir_.string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }

 private:
  std::filesystem::path dir_;
};

std::unique_ptr<LaunchOrder> order_from(const std::string& yaml, const std::string& base_dir) {
  return make_order(ConfigNode(YAML::Load(yaml), "exp.yaml", "order"), base_dir);
}

std::vector<TileCoord> sequence_of(const std::string& text, std::uint32_t gm, std::uint32_t gn) {
  std::istringstream in(text);
  return order_file_sequence(parse_order_file(in, "order.txt"), gm, gn);
}

}  // namespace

TEST_CASE("order files round-trip through write_order_file", "[orders]") {
  const ScratchDir scratch;
  const std::vector<std::string> policies = {"kind: row", "kind: column", "{kind: swizzle, log_tile: 2}",
                                             "{kind: grouped, group_m: 4}", "kind: hilbert"};
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> shapes = {{1, 1}, {3, 5}, {7, 13}, {16, 16}, {37, 2}};
  for (const auto& policy : policies) {
    for (const auto& [gm, gn] : shapes) {
      INFO(policy << " grid " << gm << "x" << gn);
      const auto original = order_from(policy, "")->sequence(gm, gn);
      std::ostringstream text;
      write_order_file(original, gm, gn, text);
      scratch.write("exported.order", text.str());
      // Relative path: resolved against base_dir, the experiment file's folder.
      const auto reread = order_from("{kind: file, path: exported.order}", scratch.dir());
      CHECK(reread->describe() == "file(exported.order)");
      REQUIRE(reread->sequence(gm, gn) == original);
    }
  }
}

TEST_CASE("order files accept comments, blank lines and both separators", "[orders]") {
  const std::string text =
      "# a hand-written order\n"
      "\n"
      "  grid 2 2   # declared shape\n"
      "1 1\n"
      "1,0\n"
      "\t0 , 1\n"
      "exit\n"
      "0\t0  # last\n";
  const std::vector<TileCoord> want = {{1, 1}, {1, 0}, {0, 1}, kEarlyExit, {0, 0}};
  CHECK(sequence_of(text, 2, 2) == want);
  // Without a grid line any grid the tiles cover exactly is accepted.
  CHECK(sequence_of("0 0\n0 1\n0 2\n", 1, 3).size() == 3);
}

TEST_CASE("malformed order-file lines name the file and line", "[orders]") {
  for (const std::string bad : {"1 2 3", "1", "a b", "-1 2", "1;2", "1,,2", "1 2x", "99999999999 1"}) {
    INFO("line '" << bad << "'");
    REQUIRE_THROWS_AS(sequence_of("0 0\n# ok\n" + bad + "\n", 4, 4), InputError);
    REQUIRE_THROWS_WITH(sequence_of("0 0\n# ok\n" + bad + "\n", 4, 4),
                        Contains("order.txt:3:") && Contains("expected a tile 'm n' or 'm,n'"));
  }
  REQUIRE_THROWS_WITH(sequence_of("grid 0 4\n", 4, 4), Contains("order.txt:1:") && Contains("grid M N"));
  REQUIRE_THROWS_WITH(sequence_of("grid 4\n", 4, 4), Contains("order.txt:1:") && Contains("grid M N"));
  REQUIRE_THROWS_WITH(sequence_of("0 0\ngrid 1 1\n", 1, 1),
                      Contains("order.txt:2:") && Contains("only allowed as the first entry"));
}

TEST_CASE("order files must cover the grid exactly once", "[orders]") {
  SECTION("repeated tile") {
    REQUIRE_THROWS_WITH(sequence_of("0 0\n0 1\n\n0 1\n1 0\n1 1\n", 2, 2),
                        Contains("order.txt:4:") && Contains("(0, 1)") && Contains("repeats line 2"));
  }
  SECTION("missing tile") {
    REQUIRE_THROWS_WITH(sequence_of("0 0\n1 1\n1 0\n", 2, 2),
                        Contains("order.txt") && Contains("1 tile(s)") && Contains("missing") && Contains("(0, 1)"));
  }
  SECTION("tile outside the grid") {
    REQUIRE_THROWS_WITH(sequence_of("0 0\n0 2\n", 1, 2),
                        Contains("order.txt:2:") && Contains("(0, 2)") && Contains("outside the 1x2"));
  }
  SECTION("declared grid differs from the workload's") {
    REQUIRE_THROWS_WITH(sequence_of("# c\ngrid 2 3\n0 0\n", 3, 2),
                        Contains("order.txt:2:") && Contains("2x3") && Contains("3x2"));
  }
  SECTION("errors come from sequence() of a policy built from YAML") {
    const ScratchDir scratch;
    scratch.write("short.order", "grid 1 2\n0 0\n");
    const auto order = order_from("{kind: file, path: short.order}", scratch.dir());
    REQUIRE_THROWS_WITH(order->sequence(1, 2), Contains("short.order") && Contains("missing"));
    REQUIRE_THROWS_WITH(order->sequence(2, 2), Contains("short.order:1:") && Contains("1x2"));
  }
}

TEST_CASE("order-file syntax errors and missing files surface when the policy is built", "[orders]") {
  const ScratchDir scratch;
  scratch.write("bad.order", "0 0\nzero one\n");
  REQUIRE_THROWS_WITH(order_from("{kind: file, path: bad.order}", scratch.dir()),
                      Contains("bad.order:2:") && Contains("expected a tile"));
  REQUIRE_THROWS_WITH(order_from("{kind: file, path: nowhere.order}", scratch.dir()),
                      Contains("exp.yaml") && Contains("order.path") && Contains("cannot open order file") &&
                          Contains("nowhere.order"));
  REQUIRE_THROWS_WITH(order_from("{kind: file, path: x, paht: y}", scratch.dir()), Contains("order.paht"));
  // An absolute path ignores base_dir.
  scratch.write("abs.order", "0 0\n");
  const auto order = order_from(cat("{kind: file, path: ", scratch.dir(), "/abs.order}"), "/nonexistent");
  CHECK(order->sequence(1, 1) == std::vector<TileCoord>{{0, 0}});
}

TEST_CASE("write_order_file writes the documented format", "[orders]") {
  std::ostringstream out;
  write_order_file({{0, 1}, kEarlyExit, {0, 0}}, 1, 2, out);
  CHECK_THAT(out.str(), Contains("grid 1 2\n0 1\nexit\n0 0\n"));
  REQUIRE_THROWS_AS(write_order_file({{1, 0}}, 1, 2, out), std::invalid_argument);
}
