// `tilesim policies`: every name-valued key's choices, family by family, with what each does.
// The lists come from the families themselves (registries and policy lists), so this never
// falls behind a new policy.
#include <boost/program_options.hpp>

#include <cstdio>
#include <functional>
#include <iostream>

#include "common/error.hpp"
#include "common/text.hpp"
#include "models/cache/hash/hash.hpp"
#include "models/cache/replacement/replacement.hpp"
#include "sim/app/commands.hpp"
#include "sim/app/options.hpp"
#include "sim/core/simulator.hpp"
#include "workloads/orders/order.hpp"
#include "workloads/sync/sync.hpp"
#include "workloads/workload.hpp"

namespace po = boost::program_options;

namespace tilesim::app {

namespace {

struct Family {
  const char* name;
  const char* key;  ///< where an experiment or arch names one
  std::function<std::vector<NamedPolicy>()> list;
};

const std::vector<Family>& families() {
  static const std::vector<Family> f{
      {"workload", "experiment: workload.kind", workload_kinds_described},
      {"order", "experiment: order.kind", order_kinds_described},
      {"sync", "experiment: sync.kind", sync_kinds_described},
      {"replacement", "arch: l2.replacement", replacement_policies},
      {"hash", "arch: l2.hash", hash_policies},
      {"dispatch", "experiment: sim.dispatch", dispatch_rules}};
  return f;
}

void print_family(const Family& f) {
  std::cout << f.name << "  (" << f.key << ")\n";
  for (const NamedPolicy& p : f.list()) {
    char name[32];
    std::snprintf(name, sizeof name, "%-16s", p.name.c_str());
    std::cout << "  " << name << p.description << "\n";
  }
}

}  // namespace

int cmd_policies(const std::vector<std::string>& args) {
  po::options_description opts("tilesim policies [FAMILY]");
  opts.add_options()("help,h", "show this help");
  std::string family;
  const po::variables_map vm = parse_args(args, opts, "policies", &family);
  std::vector<std::string> family_names;
  for (const Family& f : families()) family_names.push_back(f.name);
  const std::string names = join(family_names);
  if (vm.count("help")) {
    std::cout << opts << "\nLists the names each policy family accepts, with what each does. FAMILY: one of " << names
              << ".\nEach may be written bare (`replacement: srrip`) or as a node (`replacement: {kind: srrip}`).\n";
    return 0;
  }
  bool printed = false;
  for (const Family& f : families()) {
    if (!family.empty() && family != f.name) continue;
    if (printed) std::cout << "\n";
    print_family(f);
    printed = true;
  }
  if (!printed) throw InputError("policies: unknown family '" + family + "' (expected one of: " + names + ")");
  return 0;
}

}  // namespace tilesim::app
