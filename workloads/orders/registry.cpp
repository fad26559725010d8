#include <map>

#include "common/error.hpp"
#include "workloads/orders/order.hpp"

namespace tilesim {

namespace {
// Function-local static: registration from other translation units' static initialisers
// must not depend on initialisation order.
std::map<std::string, OrderFactory>& registry() {
  static std::map<std::string, OrderFactory> r;
  return r;
}
}  // namespace

bool register_order(const std::string& kind, OrderFactory factory) {
  registry()[kind] = std::move(factory);
  return true;
}

std::vector<std::string> order_kinds() {
  std::vector<std::string> out;
  for (const auto& kv : registry()) out.push_back(kv.first);
  return out;
}

std::unique_ptr<LaunchOrder> make_order(const ConfigNode& node, const std::string& base_dir) {
  node.expect_map();
  const std::string kind = node.choice("kind", order_kinds());
  return registry().at(kind)(node, base_dir);
}

}  // namespace tilesim
