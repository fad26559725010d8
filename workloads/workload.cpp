#include "workloads/workload.hpp"

#include "common/registry.hpp"

namespace tilesim {

using WorkloadRegistry = Registry<WorkloadBuilder>;

bool register_workload(const std::string& kind, WorkloadBuilder builder) {
  return WorkloadRegistry::instance().add(kind, std::move(builder));
}

std::vector<std::string> workload_kinds() { return WorkloadRegistry::instance().names(); }

Workload build_workload(const WorkloadContext& ctx) {
  ctx.workload.expect_map();
  const std::string kind = ctx.workload.choice("kind", workload_kinds());
  return WorkloadRegistry::instance().at(kind)(ctx);
}

Addr DeviceAllocator::allocate(std::uint64_t bytes) {
  constexpr Addr kAlign = Addr{2} << 20;
  const Addr a = next_;
  next_ = round_up<Addr>(next_ + std::max<std::uint64_t>(bytes, 1), kAlign);
  return a;
}

ConfigNode order_node_or_row(const WorkloadContext& ctx) {
  return ctx.root.has("order") ? ctx.root.at("order") : ConfigNode(YAML::Load("{kind: row}"), ctx.root.file(), "order");
}

void require_stream_sync(const WorkloadContext& ctx) {
  if (auto sync = ctx.root.find("sync")) {
    sync->allow_keys({"kind"});
    sync->choice("kind", {"stream"});
  }
}

}  // namespace tilesim
