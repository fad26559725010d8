// Order search (issue 6): the panel LRU cost model on hand-checked cases, the exact search
// against brute force, never worse than the known policies, and its order file through
// `tilesim run`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "../cli_util.hpp"
#include "common/error.hpp"
#include "sim/search/order_search.hpp"
#include "workloads/orders/order.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

std::vector<TileCoord> policy(const std::string& yaml, std::uint32_t gm, std::uint32_t gn) {
  return make_order(ConfigNode(YAML::Load(yaml), "test", "order"), "")->sequence(gm, gn);
}

std::vector<TileCoord> row_order(std::uint32_t gm, std::uint32_t gn) { return policy("{kind: row}", gm, gn); }

bool is_permutation_of_grid(const std::vector<TileCoord>& order, std::uint32_t gm, std::uint32_t gn) {
  std::vector<int> seen(static_cast<std::size_t>(gm) * gn, 0);
  for (const auto& t : order)
    if (t.m >= gm || t.n >= gn || ++seen[t.m * gn + t.n] != 1) return false;
  return std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; });
}

}  // namespace

TEST_CASE("order search: the LRU panel model on hand-checked orders", "[order-search]") {
  // 1x1: A0 and B0 are both loaded once.
  CHECK(order_loads({1, 1, 2}, {{0, 0}}) == 2);

  // 2x2 row order, cache of 2 (cache listed most recent first):
  //   (0,0): A0 miss, B0 miss            -> [B0 A0]  2 loads
  //   (0,1): A0 hit, B1 miss (evicts B0) -> [B1 A0]  3
  //   (1,0): A1 miss (evicts A0), B0 miss (evicts B1) -> [B0 A1]  5
  //   (1,1): A1 hit, B1 miss (evicts B0) -> [B1 A1]  6
  const std::vector<TileCoord> row{{0, 0}, {0, 1}, {1, 0}, {1, 1}};
  CHECK(order_loads({2, 2, 2}, row) == 6);
  // Snake (0,0) (0,1) (1,1) (1,0), cache of 2:
  //   2 loads, then B1 (3) -> [B1 A0]; (1,1): A1 evicts A0, B1 hits (4) -> [B1 A1];
  //   (1,0): A1 hits, B0 evicts B1 (5).
  const std::vector<TileCoord> snake{{0, 0}, {0, 1}, {1, 1}, {1, 0}};
  CHECK(order_loads({2, 2, 2}, snake) == 5);
  // Row order, cache of 3: (0,0) 2 -> [B0 A0]; (0,1) B1 (3) -> [B1 A0 B0];
  //   (1,0): A1 evicts B0 (4) -> [A1 B1 A0], B0 evicts A0 (5) -> [B0 A1 B1]; (1,1) hits both.
  CHECK(order_loads({2, 2, 3}, row) == 5);
  // A cache of all four panels: every order loads each panel once.
  CHECK(order_loads({2, 2, 4}, row) == 4);
  CHECK(order_loads({2, 2, 4}, snake) == 4);
  // kEarlyExit entries are skipped (they compute nothing).
  CHECK(order_loads({2, 2, 2}, {{0, 0}, kEarlyExit, {0, 1}, {1, 1}, {1, 0}}) == 5);
  CHECK(compulsory_loads({3, 5, 2}) == 8);

  CHECK_THROWS_AS(order_loads({2, 2, 2}, {{0, 0}, {0, 0}, {1, 0}, {1, 1}}), std::invalid_argument);
  CHECK_THROWS_AS(order_loads({2, 2, 2}, {{0, 0}, {0, 1}, {1, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(order_loads({2, 2, 2}, {{0, 0}, {0, 1}, {1, 0}, {2, 1}}), std::invalid_argument);
}

TEST_CASE("order search: exact search on 2x2 finds the hand-checked optimum", "[order-search]") {
  // Cache of 2: 4 (compulsory) is impossible — the third tile brings a third panel, which
  // evicts one the fourth tile needs — so the snake's 5 is optimal. Cache of 3: every order
  // also evicts a panel still needed (see the row order above), so 5; cache of 4: 4.
  CHECK(exact_order_search({2, 2, 2}, row_order(2, 2)).loads == 5);
  CHECK(exact_order_search({2, 2, 3}, row_order(2, 2)).loads == 5);
  CHECK(exact_order_search({2, 2, 4}, row_order(2, 2)).loads == 4);
  CHECK(brute_force_min_loads({2, 2, 2}) == 5);
  CHECK(brute_force_min_loads({2, 2, 3}) == 5);
}

TEST_CASE("order search: exact search agrees with brute force (every order) on small grids",
          "[order-search]") {
  for (const auto& [gm, gn] : {std::pair{3u, 3u}, std::pair{2u, 4u}, std::pair{3u, 2u}, std::pair{1u, 5u}}) {
    for (std::uint32_t c = 2; c <= 7; ++c) {
      const PanelModel model{gm, gn, c};
      const SearchResult r = exact_order_search(model, row_order(gm, gn));
      INFO(gm << "x" << gn << ", cache " << c);
      CHECK(r.optimal);
      CHECK(r.loads == brute_force_min_loads(model));
      CHECK(is_permutation_of_grid(r.order, gm, gn));
      CHECK(order_loads(model, r.order) == r.loads);
    }
  }
}

TEST_CASE("order search: the 4x4 optimum is never above row, column, grouped or hilbert",
          "[order-search]") {
  for (std::uint32_t c = 2; c <= 8; ++c) {
    const PanelModel model{4, 4, c};
    std::vector<std::vector<TileCoord>> policies;
    for (const char* yaml : {"{kind: row}", "{kind: column}", "{kind: grouped, group_m: 2}", "{kind: hilbert}"})
      policies.push_back(policy(yaml, 4, 4));
    // Started from the worst policy, so the bound comes from the search, not the seed order.
    const SearchResult r = exact_order_search(model, policies[0]);
    INFO("cache " << c);
    CHECK(r.optimal);
    CHECK(is_permutation_of_grid(r.order, 4, 4));
    CHECK(order_loads(model, r.order) == r.loads);
    CHECK(r.loads >= compulsory_loads(model));
    for (const auto& p : policies) CHECK(r.loads <= order_loads(model, p));
  }
  // A cache of every panel (4 + 4) needs only the compulsory loads.
  CHECK(exact_order_search({4, 4, 8}, row_order(4, 4)).loads == 8);
  CHECK_THROWS_AS(exact_order_search({6, 6, 4}, row_order(6, 6)), InputError);
}

TEST_CASE("order search: annealing is deterministic and never worse than its seed", "[order-search]") {
  const PanelModel model{8, 8, 4};
  const auto seed_order = policy("{kind: hilbert}", 8, 8);
  const AnnealOptions options{20000, 7};
  const SearchResult a = anneal_order_search(model, seed_order, options);
  const SearchResult b = anneal_order_search(model, seed_order, options);
  CHECK(a.order == b.order);
  CHECK(a.loads == b.loads);
  CHECK(a.loads <= order_loads(model, seed_order));
  CHECK(a.loads >= compulsory_loads(model));
  CHECK(order_loads(model, a.order) == a.loads);
  CHECK(is_permutation_of_grid(a.order, 8, 8));
  // On 3x3 it reaches the exact optimum.
  const PanelModel small{3, 3, 3};
  CHECK(anneal_order_search(small, row_order(3, 3), {20000, 1}).loads == brute_force_min_loads(small));
}

TEST_CASE("order search: the CLI writes an order file that `tilesim run` accepts", "[order-search][cli]") {
  using tilesim::test::run_tilesim;
  const auto dir = tilesim::test::scratch_dir();
  const auto exact_file = dir / "search4.order";
  const auto r = run_tilesim("order-search --grid 4x4 --cache 3 --panel-bytes 65536 -o " + exact_file.string());
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("search (exact, optimal)") && Contains("hilbert") && Contains("examined:"));
  const auto exp = dir / "search_gemm.yaml";
  std::ofstream(exp) << "workload: {kind: gemm, m: 512, n: 512, k: 256, tile: [128, 128, 64]}\n"
                        "order: {kind: row}\n";
  CHECK(run_tilesim("run " + exp.string() + " -q --set 'order={kind: file, path: " + exact_file.string() + "}'")
            .code == 0);

  const auto anneal_file = dir / "search8.order";
  const auto a = run_tilesim("order-search --grid 8x8 --cache 4 --iterations 5000 -o " + anneal_file.string());
  REQUIRE(a.code == 0);
  CHECK_THAT(a.out, Contains("search (anneal)") && Contains("lower bound"));
  const auto exp8 = dir / "search_gemm8.yaml";
  std::ofstream(exp8) << "workload: {kind: gemm, m: 1024, n: 1024, k: 256, tile: [128, 128, 64]}\n"
                         "order: {kind: row}\n";
  CHECK(run_tilesim("run " + exp8.string() + " -q --set 'order={kind: file, path: " + anneal_file.string() + "}'")
            .code == 0);
  // The 8x8 file does not fit the 4x4 GEMM: the run names the file.
  CHECK(run_tilesim("run " + exp.string() + " -q --set 'order={kind: file, path: " + anneal_file.string() + "}'")
            .code == 2);

  const auto bad = run_tilesim("order-search --grid 4x4 --cache 1");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.out, Contains("--cache"));
  CHECK_THAT(run_tilesim("order-search --grid 4by4 --cache 3").out, Contains("--grid"));
  CHECK_THAT(run_tilesim("order-search --grid 4x4 --cache 3 --method best").out, Contains("--method"));
}
