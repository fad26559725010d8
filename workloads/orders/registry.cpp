#include "common/registry.hpp"
#include "workloads/orders/order.hpp"

namespace tilesim {

using OrderRegistry = Registry<OrderFactory>;

bool register_order(const std::string& kind, std::string description, OrderFactory factory) {
  return OrderRegistry::instance().add(kind, std::move(description), std::move(factory));
}

std::vector<std::string> order_kinds() { return OrderRegistry::instance().names(); }
std::vector<NamedPolicy> order_kinds_described() { return OrderRegistry::instance().described(); }

std::unique_ptr<LaunchOrder> make_order(const ConfigNode& node, const std::string& base_dir) {
  node.expect_map();
  const std::string kind = node.choice("kind", order_kinds());
  return OrderRegistry::instance().at(kind)(node, base_dir);
}

}  // namespace tilesim
