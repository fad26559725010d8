// The simulator-backed order search (sim/tools/search/sim_order_search.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/tools/search/sim_order_search.hpp"
#include "tests/sim/cli_util.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

// A 16x16 grid on an L2 small enough that the order matters.
const std::string kGemm = "name: os\narch: h100\narch_overrides: {l2: {bytes: 4194304}}\n"
                          "workload: {kind: gemm, m: 2048, n: 2048, k: 2048, tile: [128, 128, 64]}\norder: {kind: row}\n";

ExperimentPlan plan_of(const std::string& text) { return load_plan_text(text, "os.yaml", ".", {}); }

}  // namespace

TEST_CASE("sim order search: never worse than the best policy, deterministic, every tile once", "[order-search][sim]") {
  const SimSearchResult a = sim_order_search(plan_of(kGemm), {SimSearchObjective::dram, 60, 7});
  REQUIRE(a.policies.size() == 7);  // the experiment's order, row, column, grouped 4/8/16, hilbert
  const auto best = std::min_element(a.policies.begin(), a.policies.end(),
                                     [](const SimSearchPolicy& x, const SimSearchPolicy& y) { return x.cost < y.cost; });
  CHECK(a.policies[a.best_policy].cost == best->cost);
  CHECK(a.cost <= best->cost);
  CHECK(a.simulated <= 7 + 60);
  std::vector<TileCoord> sorted = a.order;
  std::sort(sorted.begin(), sorted.end(), [](const TileCoord& x, const TileCoord& y) { return x.m != y.m ? x.m < y.m : x.n < y.n; });
  REQUIRE(sorted.size() == 256);
  for (std::uint32_t i = 0; i < 256; ++i) CHECK((sorted[i] == TileCoord{i / 16, i % 16}));
  const SimSearchResult b = sim_order_search(plan_of(kGemm), {SimSearchObjective::dram, 60, 7});
  CHECK(b.order == a.order);
  CHECK(b.cost == a.cost);
  const SimSearchResult t = sim_order_search(plan_of(kGemm), {SimSearchObjective::time, 10, 7});
  CHECK(t.cost > 1000);  // nanoseconds, not bytes
}

TEST_CASE("sim order search: what it cannot search is an error naming why", "[order-search][sim]") {
  CHECK_THROWS_WITH(sim_order_search(plan_of(kGemm + "sweep: {workload.m: [1024, 2048]}\n"), {}), Contains("one point"));
  CHECK_THROWS_WITH(sim_order_search(plan_of("arch: h100\nworkload: {kind: ffn, d: 256, f: 512, m: 256, gated: false}\n"), {}),
                    Contains("one GEMM kernel"));
  CHECK_THROWS_WITH(
      sim_order_search(plan_of("arch: h100\nworkload: {kind: gemm, m: 1024, n: 1024, k: 1024, tile: [128, 128, 64], "
                               "split_k: 2}\n"),
                       {}),
      Contains("one block per tile"));
}

TEST_CASE("sim order search: the order file it writes runs to the cost it printed", "[order-search][sim][cli]") {
  namespace fs = std::filesystem;
  using tilesim::test::run_tilesim;
  const fs::path dir = tilesim::test::scratch_dir() / "sim_search";
  fs::create_directories(dir);
  std::ofstream(dir / "os.yaml") << kGemm;
  const auto r = run_tilesim("order-search --experiment " + (dir / "os.yaml").string() + " --iterations 40 -o " +
                             (dir / "best.order").string());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("search (anneal, simulated)") && Contains("best policy"));
  const std::string line = r.out.substr(r.out.find("search (anneal, simulated)"));
  const double printed_gb = std::stod(line.substr(line.find_first_of("0123456789")));
  const auto run = run_tilesim("run " + (dir / "os.yaml").string() + " -q --set 'order={kind: file, path: " +
                               (dir / "best.order").string() + "}' --json " + (dir / "r.json").string());
  REQUIRE(run.code == 0);
  const auto json = nlohmann::json::parse(tilesim::test::slurp(dir / "r.json"));
  CHECK(json["kernels"][0]["dram"]["read_bytes"].get<double>() / 1e9 == Approx(printed_gb).margin(0.00005));
  const auto bad = run_tilesim("order-search --experiment " + (dir / "os.yaml").string() + " --grid 4x4");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("drop --grid"));
  CHECK_THAT(run_tilesim("order-search --cost sim --grid 4x4 --cache 3").out, Contains("give --experiment"));
  CHECK_THAT(run_tilesim("order-search --cost panel --experiment " + (dir / "os.yaml").string()).out, Contains("--cost panel"));
  CHECK(run_tilesim("order-search --cost sim --experiment " + (dir / "os.yaml").string() + " --iterations 1").code == 0);
}
