// `tilesim order-search`: the dispatch order of a tile grid with the fewest DRAM panel loads
// under the sequential LRU panel model (docs/orders.md, "Order search"), beside the known
// policies. Exact on small grids, simulated annealing on larger ones; with --chain, the
// interleaving of a producer -> consumer GEMM pair (exact only).
#include <boost/program_options.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/tools/search/chain_search.hpp"
#include "sim/tools/search/order_search.hpp"
#include "sim/tools/search/sim_chain_search.hpp"
#include "sim/tools/search/sim_order_search.hpp"
#include "sim/config/experiment.hpp"
#include "workloads/orders/order.hpp"
#include "workloads/orders/order_file.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

namespace {

constexpr std::uint32_t kAutoExactTiles = 25;

const char* kModelHelp = R"(
Cost model: output tile (m, n) reads A row panel m, then B column panel n. Tiles run one at
a time in dispatch order. The cache (L2) holds --cache panels with LRU replacement; reading a
panel that is not cached is one DRAM load. An order's cost is its number of loads (times
--panel-bytes for bytes). Lower bounds: compulsory, every panel loaded once (M + N); and
the tile count, M * N + 1 when C <= 3 (every tile after the first loads a panel), else
ceil(M * N / (C - 1)) (each load pairs its panel with at most C - 1 cached ones).

--method exact: depth-first branch and bound over the next tile, state = (tiles done, LRU
cache contents), memoised per state, started from the best policy's cost; the bound is the
larger of the panels undone tiles still need and the cache lacks, and a count of undone
tiles per load (with C <= 3, at least one load per tile after the first); proves the
optimum (grids up to 32 tiles and M + N <= 15). --method anneal: simulated annealing from
the best policy (exchange, reverse-run and move-one-tile steps), deterministic for a --seed.
auto: exact up to 25 tiles (and M + N <= 15), else anneal.

--cost sim --experiment EXP.yaml (--experiment alone implies it): the cost is the simulator's own, on that experiment's GEMM (its L2 with
hash, sectors and halves, DRAM, timing): --objective dram (DRAM read bytes) or time. The
experiment's order and the known policies (row, column, grouped 4/8/16, hilbert) are
simulated; annealing (--iterations, default 200, each one simulation; --seed) starts from the
best of them, with relative temperatures (2% to 0.05%). -o writes an order file that
`order: {kind: file, path: FILE}` runs to the cost printed.

Chained pair, --chain N1: the --grid MxN GEMM (the producer) writes H, which a second GEMM
(the consumer, an M x N1 tile grid) reads. Producer tile (m, n) reads A row panel m, then W0
column panel n, then writes H row panel m (the write puts H_m in the cache without a load);
consumer tile (m, j) reads H row panel m, then W1 column panel j, and may run only after
every producer tile of row m (row sync). One dispatch sequence interleaves both grids; the
cache holds --cache panels of all four kinds, LRU; cost = loads (H write-backs are not
counted). Lower bounds: compulsory (M + N + N1) and the search's bound from an empty cache
(with C = 2, two loads per producer tile and one per consumer tile; with C = 3, one per tile
plus one). The search is exact (at most 24 tiles, M*N + M*N1, and 15 panels, 2M + N + N1)
and is compared with stream (all producer tiles, then all consumer tiles; row, column or
hilbert order in each grid) and row-sync (producer row m, then consumer row m; row by row
or serpentine). -o writes a chain order file (docs/orders.md), which `tilesim run` replays as
`order: {kind: file, path: FILE}` of an ffn under `sync: {kind: dataflow}`.

--chain --cost sim --experiment EXP.yaml (no N1): the experiment's ffn under `sync: {kind:
dataflow}` is simulated with its fused kernel's tickets in each candidate interleaving
(--objective dram or time). Seeds: the experiment's own interleaving, dataflow's after: row,
after: half_row and rows: 2/4/8 (producers in row or grouped order), the panel model's
baselines and, up to its limits, its optimum (cache = L2 over the mean panel). Annealing (--iterations, default 200; --seed) starts from the
best seed and keeps each consumer tile behind its producer row (as much of it as the start
had). -o writes a chain order file that `tilesim run` runs to the cost printed (in bytes or ns).
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

struct Row {
  std::string name;
  std::uint64_t loads;
};

void print_rows(const std::vector<Row>& rows, std::uint64_t panel_bytes) {
  std::cout << std::left << std::setw(26) << "order" << std::right << std::setw(8) << "loads";
  if (panel_bytes > 0) std::cout << std::setw(16) << "bytes";
  std::cout << "\n";
  for (const Row& r : rows) {
    std::cout << std::left << std::setw(26) << r.name << std::right << std::setw(8) << r.loads;
    if (panel_bytes > 0) std::cout << std::setw(16) << r.loads * panel_bytes;
    std::cout << "\n";
  }
}

std::string format_seconds(double seconds) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", seconds);
  return text;
}

/// `--chain N1`: a positive consumer column count.
std::uint32_t parse_chain(const std::string& text) {
  const bool digits = !text.empty() && text.size() <= 4 && text.find_first_not_of("0123456789") == std::string::npos;
  const unsigned long n1 = digits ? std::stoul(text) : 0;
  if (n1 == 0 || n1 > 4096)
    throw InputError("--chain: expected N1, the consumer GEMM's tile columns (an integer in 1..4096; its grid is "
                     "M x N1), got '" + text + "' (--chain alone goes with --cost sim --experiment EXP.yaml)");
  return static_cast<std::uint32_t>(n1);
}

/// A chain order: each tile's dispatch position per grid, then the sequence itself; with a path,
/// the chain order file too.
void print_chain_order(const std::vector<ChainTile>& order, const ChainModel& model, const std::string& out_path) {
  std::ostringstream seq;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const ChainTile& t = order[i];
    seq << (i ? " " : "") << (t.stage == ChainStage::producer ? "p" : "c") << t.m << "," << t.n;
  }
  const int width = static_cast<int>(std::to_string(order.size()).size()) + 1;
  std::vector<std::size_t> pos_p(static_cast<std::size_t>(model.grid_m) * model.grid_n),
      pos_c(static_cast<std::size_t>(model.grid_m) * model.consumer_n);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const ChainTile& t = order[i];
    if (t.stage == ChainStage::producer) pos_p[t.m * model.grid_n + t.n] = i;
    else pos_c[t.m * model.consumer_n + t.n] = i;
  }
  std::cout << "\nbest order (dispatch position of each tile, rows = m; producer grid | consumer grid):\n";
  for (std::uint32_t m = 0; m < model.grid_m; ++m) {
    std::cout << " ";
    for (std::uint32_t n = 0; n < model.grid_n; ++n) std::cout << std::setw(width) << pos_p[m * model.grid_n + n];
    std::cout << "  |";
    for (std::uint32_t j = 0; j < model.consumer_n; ++j) std::cout << std::setw(width) << pos_c[m * model.consumer_n + j];
    std::cout << "\n";
  }
  std::cout << "sequence (p = producer tile m,n; c = consumer tile m,j): " << seq.str() << "\n";
  if (!out_path.empty()) {
    std::ostringstream text;
    write_chain_order(order, model, text);
    write_file(out_path, text.str());
  }
}

/// The chained pair: baselines, the exact optimum and the dispatch sequence.
int chained_search(const ChainModel& model, std::uint64_t panel_bytes, const std::string& out_path) {
  check_chain_limits(model);  // before building the baselines of a possibly huge grid
  std::vector<Row> rows;
  std::vector<ChainTile> best_baseline;
  std::uint64_t best_baseline_loads = ~0ull;
  for (const ChainBaseline& b : chain_baselines(model)) {
    const std::uint64_t loads = chain_order_loads(model, b.order);
    rows.push_back({b.name, loads});
    if (loads < best_baseline_loads) {
      best_baseline_loads = loads;
      best_baseline = b.order;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const ChainSearchResult found = exact_chain_search(model, best_baseline);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rows.push_back({"search (exact, optimal)", found.loads});
  rows.push_back({"lower bound (compulsory)", chain_compulsory_loads(model)});
  rows.push_back({"lower bound (tile count)", exact_chain_bound(model, {})});

  std::cout << "order-search: chained GEMMs, producer " << model.grid_m << "x" << model.grid_n
            << " tiles -> consumer " << model.grid_m << "x" << model.consumer_n
            << " tiles (row sync), cache of " << model.capacity
            << " panels (LRU), cost = DRAM panel loads (H write-backs not counted)\n\n";
  print_rows(rows, panel_bytes);
  std::cout << "\nexamined: " << found.examined << " partial orders expanded (" << found.memo_states
            << " states memoised), " << format_seconds(seconds) << " s\n";
  print_chain_order(found.order, model, out_path);
  return 0;
}

/// A simulated cost: DRAM read bytes in GB or a duration in us; `exact` adds the figure itself
/// (bytes, or ns to the picosecond) so that a run can be checked against it.
std::string sim_figure(double v, bool dram, bool exact) {
  if (std::isinf(v)) return "deadlock";
  std::ostringstream o;
  o << std::fixed << std::setprecision(dram ? 4 : 2) << (dram ? v / 1e9 : v / 1e3) << (dram ? " GB" : " us");
  if (exact) o << std::setprecision(dram ? 0 : 3) << " (" << v << (dram ? " B)" : " ns)");
  return o.str();
}

// --experiment: orders scored by simulating the experiment (sim/tools/search/sim_order_search.hpp).
int simulated_search(const ExperimentPlan& plan, const SimSearchOptions& options, const std::string& out_path) {
  const auto start = std::chrono::steady_clock::now();
  const SimSearchResult r = sim_order_search(plan, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool dram = options.objective == SimSearchObjective::dram;
  const auto figure = [&](double v) { return sim_figure(v, dram, false); };
  std::cout << "order-search: " << r.grid_m << "x" << r.grid_n << " tile grid of " << plan.file
            << ", cost = the simulator's " << (dram ? "DRAM reads" : "duration") << "\n\n";
  for (std::size_t i = 0; i < r.policies.size(); ++i)
    std::cout << "  " << std::left << std::setw(34) << r.policies[i].name << figure(r.policies[i].cost)
              << (i == r.best_policy ? "   (best policy: the annealing's start)" : "") << "\n";
  const double base = r.policies[r.best_policy].cost;
  std::cout << "  " << std::left << std::setw(34) << "search (anneal, simulated)" << figure(r.cost);
  if (base > 0) std::cout << "   (" << std::fixed << std::setprecision(1) << 100.0 * (base - r.cost) / base << "% below)";
  std::cout << "\n\nexamined: " << r.simulated << " simulations, " << format_seconds(seconds) << " s\n";
  std::cout << "\nbest order (dispatch position of each tile, rows = m):\n" << position_grid(r.order, r.grid_m, r.grid_n);
  if (!out_path.empty()) {
    std::ostringstream text;
    write_order_file(r.order, r.grid_m, r.grid_n, text);
    write_file(out_path, text.str());
  }
  return 0;
}

// --chain --experiment: chain orders scored by simulating the experiment's fused dataflow FFN
// (sim/tools/search/sim_chain_search.hpp).
int simulated_chain_search(const ExperimentPlan& plan, const SimSearchOptions& options, const std::string& out_path) {
  const auto start = std::chrono::steady_clock::now();
  const SimChainSearchResult r = sim_chain_search(plan, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool dram = options.objective == SimSearchObjective::dram;
  const ChainModel& c = r.model;
  std::cout << "order-search: chained GEMMs of " << plan.file << " (one fused dataflow kernel), producer " << c.grid_m
            << "x" << c.grid_n << " tiles -> consumer " << c.grid_m << "x" << c.consumer_n
            << " tiles, cost = the simulator's " << (dram ? "DRAM reads" : "duration") << "\n\n";
  for (std::size_t i = 0; i < r.seeds.size(); ++i)
    std::cout << "  " << std::left << std::setw(34) << r.seeds[i].name << sim_figure(r.seeds[i].cost, dram, true)
              << (i == r.best_seed ? "   (best seed: the annealing's start)" : "") << "\n";
  if (!r.panel_seed)
    std::cout << "  (no panel-model optimum: the chain is over its exact search's " << kChainMaxTiles << " tiles or "
              << kChainMaxPanels << " panels)\n";
  const double base = r.seeds[r.best_seed].cost;
  std::cout << "  " << std::left << std::setw(34) << "search (anneal, simulated)" << sim_figure(r.cost, dram, true);
  if (base > 0) std::cout << "   (" << std::fixed << std::setprecision(1) << 100.0 * (base - r.cost) / base << "% below)";
  std::cout << "\n\nexamined: " << r.simulated << " simulations, " << format_seconds(seconds) << " s\n" << std::right;
  print_chain_order(r.order, c, out_path);
  return 0;
}

// --experiment (with --cost sim or none): the grid, cache and method are the experiment's, so
// those options are refused here, before the experiment is loaded.
int experiment_search(const po::variables_map& vm, const std::string& experiment, const std::vector<std::string>& sets,
                      const std::string& objective, long long iterations, long long seed, const std::string& out_path) {
  if (vm.count("grid") || vm.count("cache") || vm.count("method") || vm.count("panel-bytes"))
    throw InputError("order-search --experiment: the grid and the cache are the experiment's; drop --grid, --cache, "
                     "--method and --panel-bytes");
  const bool chain = vm.count("chain") > 0;
  if (chain && !vm["chain"].as<std::string>().empty())
    throw InputError("--chain: with --experiment the chain's grids are the experiment's; give --chain without N1, got '" +
                     vm["chain"].as<std::string>() + "'");
  if (objective != "dram" && objective != "time")
    throw InputError("--objective: expected dram or time, got '" + objective + "'");
  if (iterations < 0) throw InputError("--iterations: expected a non-negative count");
  const SimSearchOptions options{objective == "dram" ? SimSearchObjective::dram : SimSearchObjective::time,
                                 vm.count("iterations") ? static_cast<std::uint64_t>(iterations) : 200,
                                 static_cast<std::uint64_t>(seed)};
  const ExperimentPlan plan = load_plan(experiment, sets);
  return chain ? simulated_chain_search(plan, options, out_path) : simulated_search(plan, options, out_path);
}

/// A single grid under the panel model: the known policies, then the search (exact or annealed)
/// started from the best of them, and the bounds.
int panel_search(const PanelModel& model, bool exact, const AnnealOptions& anneal, std::uint64_t panel_bytes,
                 const std::string& out_path) {
  const std::uint32_t gm = model.grid_m, gn = model.grid_n;
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
  const SearchResult found = exact ? exact_order_search(model, best_policy) : anneal_order_search(model, best_policy, anneal);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rows.push_back({exact ? "search (exact, optimal)" : "search (anneal)", found.loads});
  rows.push_back({"lower bound (compulsory)", compulsory_loads(model)});
  rows.push_back({"lower bound (tile count)", tile_lower_bound(model)});

  std::cout << "order-search: " << gm << "x" << gn << " tile grid, cache of " << model.capacity
            << " panels (LRU), cost = DRAM panel loads\n\n";
  print_rows(rows, panel_bytes);
  std::cout << "\n"
            << (exact ? "examined: " + std::to_string(found.examined) + " partial orders expanded (" +
                            std::to_string(found.memo_states) + " states memoised)"
                      : "examined: " + std::to_string(found.examined) + " complete orders")
            << ", " << format_seconds(seconds) << " s\n";
  if (!exact && found.optimal) std::cout << "the annealed order meets the lower bound: it is optimal\n";
  std::cout << "\nbest order (dispatch position of each tile, rows = m):\n" << position_grid(found.order, gm, gn);
  if (!out_path.empty()) {
    std::ostringstream text;
    write_order_file(found.order, gm, gn, text);
    write_file(out_path, text.str());
  }
  return 0;
}

}  // namespace

int cmd_order_search(const std::vector<std::string>& args) {
  po::options_description opts(
      "tilesim order-search --grid MxN --cache C [options]\n"
      "tilesim order-search --grid MxN --chain N1 --cache C [options]   (chained pair of GEMMs)");
  std::string grid, chain, method = "auto", out_path, unused, experiment, objective = "dram", cost;
  std::vector<std::string> sets;
  long long cache = 0, panel_bytes = 0, iterations = 200000, seed = 1;
  opts.add_options()("help,h", "show this help")(
      "grid", po::value(&grid)->value_name("MxN"), "tile grid, e.g. 4x4 (with --chain: the producer GEMM's)")(
      "chain", po::value(&chain)->value_name("N1")->implicit_value(""),
      "search a chained pair: the --grid GEMM writes H, read by a second GEMM of M x N1 tiles under row sync "
      "(with --cost sim --experiment: --chain alone, the experiment's fused dataflow FFN)")(
      "cache", po::value(&cache)->value_name("C"), "panels the cache holds (>= 2)")(
      "panel-bytes", po::value(&panel_bytes), "bytes of one panel, to report bytes as well as loads")(
      "method", po::value(&method), "exact, anneal or auto (default)")(
      "iterations", po::value(&iterations), "annealing steps (default 200000)")(
      "seed", po::value(&seed), "annealing random seed (default 1)")(
      "output,o", po::value(&out_path),
      "write the best order as an order file (docs/orders.md; with --chain, a chain order file)")(
      "cost", po::value(&cost), "panel (the LRU panel model, default) or sim (the simulator, on --experiment)")(
      "experiment", po::value(&experiment),
      "score orders by simulating this experiment's GEMM (its own L2, DRAM and timing) instead of the panel model")(
      "objective", po::value(&objective), "with --experiment: dram (DRAM read bytes, default) or time")(
      "set", po::value(&sets)->composing(), "with --experiment: override a key of it (repeatable)");
  const po::variables_map vm = parse_args(args, opts, "order-search", &unused);
  if (vm.count("help")) {
    std::cout << opts << kModelHelp;
    return 0;
  }
  if (!unused.empty()) throw InputError("order-search: unexpected argument '" + unused + "' (expected options only)");
  if (!cost.empty() && cost != "panel" && cost != "sim")
    throw InputError("--cost: expected panel or sim, got '" + cost + "'");
  if (cost == "sim" && experiment.empty())
    throw InputError("--cost sim: scores orders by simulating an experiment; give --experiment EXP.yaml");
  if (cost == "panel" && !experiment.empty())
    throw InputError("--cost panel: the panel model takes --grid and --cache, not --experiment (or use --cost sim)");
  for (const char* only_sim : {"objective", "set"})
    if (vm.count(only_sim) && experiment.empty())
      throw InputError(std::string("--") + only_sim + ": applies to orders scored by simulation; give --cost sim " +
                       "--experiment EXP.yaml");
  if (!experiment.empty()) return experiment_search(vm, experiment, sets, objective, iterations, seed, out_path);
  if (grid.empty()) throw InputError("--grid: missing (expected MxN, e.g. 4x4)");
  const auto [gm, gn] = parse_grid(grid, 4096);
  if (cache < 2 || cache > 1000000)
    throw InputError("--cache: expected a panel count of at least 2 (a tile reads two panels), got " +
                     std::to_string(cache));
  if (panel_bytes < 0) throw InputError("--panel-bytes: expected a non-negative byte count");
  if (iterations < 0) throw InputError("--iterations: expected a non-negative count");
  if (method != "auto" && method != "exact" && method != "anneal")
    throw InputError("--method: expected exact, anneal or auto, got '" + method + "'");
  if (vm.count("chain")) {
    if (method == "anneal") throw InputError("--method: the chained search (--chain) is exact only; got 'anneal'");
    return chained_search(ChainModel{gm, gn, parse_chain(chain), static_cast<std::uint32_t>(cache)},
                          static_cast<std::uint64_t>(panel_bytes), out_path);
  }
  const PanelModel model{gm, gn, static_cast<std::uint32_t>(cache)};
  // auto: exact where every cache size was measured to take well under a second (docs/orders.md).
  const bool exact = method == "exact" || (method == "auto" && gm * gn <= kAutoExactTiles && gm + gn <= kExactMaxPanels);
  return panel_search(model, exact, AnnealOptions{static_cast<std::uint64_t>(iterations), static_cast<std::uint64_t>(seed)},
                      static_cast<std::uint64_t>(panel_bytes), out_path);
}

}  // namespace tilesim::app
