// `tilesim order`: writes a launch order's dispatch sequence for a tile grid as an order file
// (docs/orders.md), for `order: {kind: file}` or to drive real kernels in the same order.
#include <boost/program_options.hpp>

#include <fstream>
#include <iostream>

#include "common/error.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "workloads/kernel.hpp"
#include "workloads/orders/order.hpp"
#include "workloads/orders/order_file.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

int cmd_order(const std::vector<std::string>& args) {
  po::options_description opts("tilesim order ORDER --grid MxN [-o FILE]");
  std::string order_yaml, grid, out_path;
  opts.add_options()("help,h", "show this help")("grid", po::value(&grid), "tile grid, e.g. 64x64")(
      "output,o", po::value(&out_path), "order file to write (default: standard output)");
  const po::variables_map vm = parse_args(args, opts, "order", &order_yaml);
  if (vm.count("help")) {
    std::cout << opts << "\nORDER is the YAML of an order, e.g. '{kind: grouped, group_m: 8}'.\n";
    return 0;
  }
  if (order_yaml.empty()) throw InputError("order: expected an ORDER such as '{kind: grouped, group_m: 8}'");
  const auto [gm, gn] = parse_grid(grid, 1ul << 20);
  // The sequence holds 8 bytes a tile, and the order file about as many characters.
  check_workload_memory("the " + grid + " grid", std::uint64_t{gm} * gn, 0, 0, "give a smaller --grid", "--grid");
  const ConfigNode node(load_yaml_text(order_yaml, "ORDER"), "ORDER", "order");
  const auto order = make_order(node, ".");
  const auto seq = order->sequence(gm, gn);
  std::ostringstream text;
  write_order_file(seq, gm, gn, text);
  if (out_path.empty()) std::cout << text.str();
  else write_file(out_path, text.str());
  return 0;
}

}  // namespace tilesim::app
