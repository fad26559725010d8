#include "workloads/workload.hpp"

#include <map>

namespace tilesim {

namespace {
std::map<std::string, WorkloadBuilder>& registry() {
  static std::map<std::string, WorkloadBuilder> r;
  return r;
}
}  // namespace

bool register_workload(const std::string& kind, WorkloadBuilder builder) {
  registry()[kind] = std::move(builder);
  return true;
}

std::vector<std::string> workload_kinds() {
  std::vector<std::string> out;
  for (const auto& kv : registry()) out.push_back(kv.first);
  return out;
}

Workload build_workload(const WorkloadContext& ctx) {
  ctx.workload.expect_map();
  const std::string kind = ctx.workload.choice("kind", workload_kinds());
  return registry().at(kind)(ctx);
}

Addr DeviceAllocator::allocate(std::uint64_t bytes) {
  constexpr Addr kAlign = Addr{2} << 20;
  const Addr a = next_;
  next_ = round_up<Addr>(next_ + std::max<std::uint64_t>(bytes, 1), kAlign);
  return a;
}

}  // namespace tilesim
