// The simulator-backed chain order search (sim/tools/search/sim_chain_search.hpp) and
// `order-search --chain --cost sim`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/tools/search/sim_chain_search.hpp"
#include "tests/sim/cli_util.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

// A 4x4 producer grid and a 4x2 consumer grid (24 tiles: the panel model's exact search takes
// it) on 8 SMs and a 256 KiB L2, so that tiles queue and the interleaving decides what is reread.
const std::string kFfn = "name: cs\narch: h100\narch_overrides: {l2: {bytes: 262144}, sm: {count: 8, l2_port_fast_sms: [], gpcs: [], partition_map: interleaved}}\n"
                         "workload: {kind: ffn, d: 256, f: 512, m: 512, gated: false,"
                         " gemm0: {tile: [128, 128, 64]}, gemm1: {tile: [128, 128, 64]}}\n"
                         "sync: {kind: dataflow}\n";

ExperimentPlan plan_of(const std::string& text) { return load_plan_text(text, "cs.yaml", ".", {}); }

// Every consumer tile after all producer tiles of its row.
bool row_complete(const SimChainSearchResult& r) {
  std::vector<std::uint32_t> done(r.model.grid_m, 0);
  for (const ChainTile& t : r.order) {
    if (t.stage == ChainStage::producer) ++done[t.m];
    else if (done[t.m] != r.model.grid_n) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("sim chain search: never worse than the best seed, deterministic, every tile once", "[order-search][sim][chain]") {
  const SimChainSearchResult a = sim_chain_search(plan_of(kFfn), {SimSearchObjective::dram, 30, 3});
  CHECK((a.model.grid_m == 4 && a.model.grid_n == 4 && a.model.consumer_n == 2));
  CHECK(a.panel_seed);
  std::vector<std::string> names;
  for (const SimSearchPolicy& s : a.seeds) names.push_back(s.name);
  CHECK(names.front() == "the experiment's order");
  for (const char* want : {"dataflow (after: row)", "dataflow (after: half_row)", "dataflow (rows: 2)", "stream (hilbert)"})
    CHECK(std::count(names.begin(), names.end(), want) == 1);
  CHECK(std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.rfind("panel model's optimum", 0) == 0; }));
  const auto best = std::min_element(a.seeds.begin(), a.seeds.end(),
                                     [](const SimSearchPolicy& x, const SimSearchPolicy& y) { return x.cost < y.cost; });
  CHECK(a.seeds[a.best_seed].cost == best->cost);
  CHECK(a.cost <= best->cost);
  // after: row is the experiment's own (the default) and row-sync (row): simulated once.
  CHECK(a.seeds[0].cost == a.seeds[1].cost);
  CHECK(a.simulated <= a.seeds.size() - 2 + 30);
  // The seeds differ: the order matters on this L2.
  const auto worst = std::max_element(a.seeds.begin(), a.seeds.end(),
                                      [](const SimSearchPolicy& x, const SimSearchPolicy& y) { return x.cost < y.cost; });
  CHECK(worst->cost > best->cost);
  std::vector<ChainTile> sorted = a.order;
  std::sort(sorted.begin(), sorted.end(), [](const ChainTile& x, const ChainTile& y) {
    return std::tie(x.stage, x.m, x.n) < std::tie(y.stage, y.m, y.n);
  });
  REQUIRE(sorted.size() == 24);
  for (std::uint32_t i = 0; i < 16; ++i) CHECK((sorted[i] == ChainTile{ChainStage::producer, i / 4, i % 4}));
  for (std::uint32_t i = 0; i < 8; ++i) CHECK((sorted[16 + i] == ChainTile{ChainStage::consumer, i / 2, i % 2}));
  if (a.seeds[a.best_seed].name != "dataflow (after: half_row)") CHECK(row_complete(a));
  const SimChainSearchResult b = sim_chain_search(plan_of(kFfn), {SimSearchObjective::dram, 30, 3});
  CHECK(b.order == a.order);
  CHECK(b.cost == a.cost);
  const SimChainSearchResult t = sim_chain_search(plan_of(kFfn), {SimSearchObjective::time, 5, 3});
  CHECK(t.cost > 1000);  // nanoseconds, not bytes
  CHECK(t.cost < 1e6);
}

TEST_CASE("sim chain search: gated forms and a split-K consumer keep their tiles", "[order-search][sim][chain]") {
  // A split-K consumer's slices are one tile of the order; a concatenated [gate | up] producer
  // is one 4x8 grid (both halves).
  for (const auto& [from, to, n] : {std::tuple{"gemm1: {tile: [128, 128, 64]}", "gemm1: {tile: [128, 128, 64], split_k: 2}", 4u},
                                    std::tuple{"gated: false", "gated: true, gate_fusion: concat", 8u},
                                    std::tuple{"gated: false", "gated: true, gate_fusion: separate", 4u}}) {
    std::string text = kFfn;
    text.replace(text.find(from), std::string(from).size(), to);
    INFO(to);
    const SimChainSearchResult r = sim_chain_search(plan_of(text), {SimSearchObjective::dram, 5, 1});
    CHECK((r.model.grid_m == 4 && r.model.grid_n == n && r.model.consumer_n == 2));
    CHECK(r.order.size() == 4 * n + 8);
    CHECK(r.cost <= r.seeds[r.best_seed].cost);
  }
}

TEST_CASE("sim chain search: what it cannot search is an error naming why", "[order-search][sim][chain]") {
  CHECK_THROWS_WITH(sim_chain_search(plan_of(kFfn + "sweep: {workload.m: [256, 512]}\n"), {}), Contains("one point"));
  CHECK_THROWS_WITH(sim_chain_search(plan_of("arch: h100\nworkload: {kind: gemm, m: 512, n: 512, k: 512, tile: [128, 128, 64]}\n"), {}),
                    Contains("sync: {kind: dataflow}"));
  std::string stream = kFfn;
  stream.replace(stream.find("dataflow"), 8, "stream");
  CHECK_THROWS_WITH(sim_chain_search(plan_of(stream), {}), Contains("sync: {kind: dataflow}"));
}

TEST_CASE("sim chain search: the chain order file it writes runs to the cost it printed", "[order-search][sim][chain][cli]") {
  namespace fs = std::filesystem;
  using tilesim::test::run_tilesim;
  const fs::path dir = tilesim::test::scratch_dir() / "sim_chain_search";
  fs::create_directories(dir);
  std::ofstream(dir / "cs.yaml") << kFfn;
  const std::string exp = (dir / "cs.yaml").string();
  for (const std::string objective : {"dram", "time"}) {
    const fs::path file = dir / (objective + ".chain");
    const auto r = run_tilesim("order-search --chain --cost sim --experiment " + exp + " --objective " + objective +
                               " --iterations 12 -o " + file.string());
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("search (anneal, simulated)") && Contains("best seed") && Contains("sequence"));
    // The exact figure in parentheses: bytes, or ns to the picosecond.
    const std::string label = "search (anneal, simulated)";
    const std::string line = r.out.substr(r.out.find(label) + label.size());
    const double printed = std::stod(line.substr(line.find('(') + 1));
    const auto run = run_tilesim("run " + exp + " -q --set 'order={kind: file, path: " + file.string() + "}' --json " +
                                 (dir / "r.json").string());
    REQUIRE(run.code == 0);
    const auto total = tilesim::test::run_json_total(dir / "r.json");
    if (objective == "dram") CHECK(total["dram_read_bytes"].get<double>() == printed);
    else CHECK(std::abs(total["duration_ns"].get<double>() - printed) < 0.0005);
  }
  // Bad combinations: one error naming the option, exit 2.
  const auto with_n1 = run_tilesim("order-search --chain 2 --cost sim --experiment " + exp);
  CHECK(with_n1.code == 2);
  CHECK_THAT(with_n1.out, Contains("--chain") && Contains("without N1"));
  const auto no_n1 = run_tilesim("order-search --grid 2x2 --chain --cache 3");
  CHECK(no_n1.code == 2);
  CHECK_THAT(no_n1.out, Contains("--chain") && Contains("--cost sim"));
  CHECK_THAT(run_tilesim("order-search --chain --cost sim").out, Contains("give --experiment"));
  const auto objective = run_tilesim("order-search --grid 2x2 --chain 2 --cache 3 --objective time");
  CHECK(objective.code == 2);
  CHECK_THAT(objective.out, Contains("--objective"));
  CHECK_THAT(run_tilesim("order-search --chain --experiment " + exp + " --cache 4").out, Contains("drop --grid"));
  std::ofstream(dir / "gemm.yaml") << "arch: h100\nworkload: {kind: gemm, m: 512, n: 512, k: 512, tile: [128, 128, 64]}\n";
  const auto gemm = run_tilesim("order-search --chain --cost sim --experiment " + (dir / "gemm.yaml").string());
  CHECK(gemm.code == 2);
  CHECK_THAT(gemm.out, Contains("sync: {kind: dataflow}"));
}
