// `tilesim order-search`: the dispatch order of a tile grid with the fewest DRAM panel loads
// under the sequential LRU panel model (docs/orders.md, "Order search"), beside the known
// policies. Exact on small grids, simulated annealing on larger ones.
#include <boost/program_options.hpp>

#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/search/order_search.hpp"
#include "workloads/orders/order.hpp"
#include "workloads/orders/order_file.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

namespace {

const char* kModelHelp = R"(
Cost model: output tile (m, n) reads A row panel m, then B column panel n. Tiles run one at
a time in dispatch order. The cache (L2) holds --cache panels with LRU replacement; reading a
panel that is not cached is one DRAM load. An order's cost is its number of loads (times
--panel-bytes for bytes). The lower bound is compulsory: every panel loaded once (M + N).

--method exact: depth-first branch and bound over the next tile, state = (tiles done, LRU
cache contents), bound = loads so far + panels that undone tiles still need and the cache
lacks, memoised per state, started from the best policy's cost; proves the optimum (grids up
to 25 tiles and M + N <= 15; 4x4 takes well under a minute). --method anneal: simulated
annealing from the best policy (exchange, reverse-run and move-one-tile steps), deterministic
for a --seed. auto: exact up to 16 tiles, else anneal.
)";

/// Each dispatch position printed at its tile, rows = m (as in docs/orders.md).
std::string position_grid(const std::vector<TileCoord>& order, std::uint32_t gm, std::uint32_t gn) {
  std::vector<std::size_t> pos(static_cast<std::size_t>(gm) * gn, 0);
  for (std::size_t i = 0; i < order.size(); ++i) pos[order[i].m * gn + order[i].n] = i;
  const int width = static_cast<int>(std::to_string(order.size()).size()) + 1;
  std::ostringstream out;
  for (std::uint32_t m = 0; m < gm; ++m) {
    out << " ";
    for (std::uint32_t n = 0; n < gn; ++n) out << std::setw(width) << pos[m * gn + n];
    out << "\n";
  }
  return out.str();
}

}  // namespace

int cmd_order_search(const std::vector<std::string>& args) {
  po::options_description opts("tilesim order-search --grid MxN --cache C [options]");
  std::string grid, method = "auto", out_path, unused;
  long long cache = 0, panel_bytes = 0, iterations = 200000, seed = 1;
  opts.add_options()("help,h", "show this help")("grid", po::value(&grid), "tile grid, e.g. 4x4")(
      "cache", po::value(&cache), "panels the cache holds (>= 2)")(
      "panel-bytes", po::value(&panel_bytes), "bytes of one panel, to report bytes as well as loads")(
      "method", po::value(&method), "exact, anneal or auto (default)")(
      "iterations", po::value(&iterations), "annealing steps (default 200000)")(
      "seed", po::value(&seed), "annealing random seed (default 1)")(
      "output,o", po::value(&out_path), "write the best order as an order file (docs/orders.md)");
  const po::variables_map vm = parse_args(args, opts, "order-search", &unused);
  if (vm.count("help")) {
    std::cout << opts << kModelHelp;
    return 0;
  }
  if (!unused.empty()) throw InputError("order-search: unexpected argument '" + unused + "' (expected options only)");
  if (grid.empty()) throw InputError("--grid: missing (expected MxN, e.g. 4x4)");
  const auto [gm, gn] = parse_grid(grid, 4096);
  if (cache < 2 || cache > 1000000)
    throw InputError("--cache: expected a panel count of at least 2 (a tile reads two panels), got " +
                     std::to_string(cache));
  if (panel_bytes < 0) throw InputError("--panel-bytes: expected a non-negative byte count");
  if (iterations < 0) throw InputError("--iterations: expected a non-negative count");
  if (method != "auto" && method != "exact" && method != "anneal")
    throw InputError("--method: expected exact, anneal or auto, got '" + method + "'");
  const PanelModel model{gm, gn, static_cast<std::uint32_t>(cache)};
  const bool exact = method == "exact" || (method == "auto" && gm * gn <= 16);

  struct Row {
    std::string name;
    std::uint64_t loads;
  };
  std::vector<Row> rows;
  std::vector<TileCoord> best_policy;
  std::uint64_t best_policy_loads = ~0ull;
  for (const char* yaml : {"{kind: row}", "{kind: column}", "{kind: grouped, group_m: 2}", "{kind: hilbert}"}) {
    const ConfigNode node(load_yaml_text(yaml, "ORDER"), "ORDER", "order");
    const auto order = make_order(node, ".");
    const auto seq = order->sequence(gm, gn);
    const std::uint64_t loads = order_loads(model, seq);
    rows.push_back({order->describe(), loads});
    if (loads < best_policy_loads) {
      best_policy_loads = loads;
      best_policy = seq;
    }
  }

  const auto start = std::chrono::steady_clock::now();
  const SearchResult found =
      exact ? exact_order_search(model, best_policy)
            : anneal_order_search(model, best_policy,
                                  AnnealOptions{static_cast<std::uint64_t>(iterations), static_cast<std::uint64_t>(seed)});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rows.push_back({exact ? "search (exact, optimal)" : "search (anneal)", found.loads});
  rows.push_back({"lower bound (compulsory)", compulsory_loads(model)});

  std::cout << "order-search: " << gm << "x" << gn << " tile grid, cache of " << cache
            << " panels (LRU), cost = DRAM panel loads\n\n";
  std::cout << std::left << std::setw(26) << "order" << std::right << std::setw(8) << "loads";
  if (panel_bytes > 0) std::cout << std::setw(16) << "bytes";
  std::cout << "\n";
  for (const Row& r : rows) {
    std::cout << std::left << std::setw(26) << r.name << std::right << std::setw(8) << r.loads;
    if (panel_bytes > 0) std::cout << std::setw(16) << r.loads * static_cast<std::uint64_t>(panel_bytes);
    std::cout << "\n";
  }
  char timing[64];
  std::snprintf(timing, sizeof timing, "%.3f", seconds);
  std::cout << "\n"
            << (exact ? "examined: " + std::to_string(found.examined) + " partial orders expanded (" +
                            std::to_string(found.memo_states) + " states memoised)"
                      : "examined: " + std::to_string(found.examined) + " complete orders")
            << ", " << timing << " s\n";
  if (!exact && found.optimal) std::cout << "the annealed order meets the lower bound: it is optimal\n";
  std::cout << "\nbest order (dispatch position of each tile, rows = m):\n" << position_grid(found.order, gm, gn);
  if (!out_path.empty()) {
    std::ostringstream text;
    write_order_file(found.order, gm, gn, text);
    write_file(out_path, text.str());
  }
  return 0;
}

}  // namespace tilesim::app
