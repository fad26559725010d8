#include "common/registry.hpp"
#include "workloads/sync/sync.hpp"

namespace tilesim {

using SyncRegistry = Registry<SyncPolicy>;

bool register_sync(const std::string& kind, std::string description, SyncPolicy policy) {
  return SyncRegistry::instance().add(kind, std::move(description), std::move(policy));
}

std::vector<std::string> sync_kinds() { return SyncRegistry::instance().names(); }
std::vector<NamedPolicy> sync_kinds_described() { return SyncRegistry::instance().described(); }

void apply_sync(const ConfigNode* sync, ChainPair& pair, Workload& out) {
  if (!sync) {
    const ConfigNode stream(YAML::Load("{kind: stream}"), "<default>", "sync");
    SyncRegistry::instance().at("stream")(stream, pair, out);
    return;
  }
  sync->expect_map();
  const std::string kind = sync->choice("kind", sync_kinds());
  SyncRegistry::instance().at(kind)(*sync, pair, out);
}

namespace sync_detail {

std::uint32_t consumer_kstep(const ChainPair& p, const Block& b, std::uint32_t i) {
  const std::uint32_t per_slice = (p.consumer_tiles_k + p.consumer_split_k - 1) / p.consumer_split_k;
  const std::uint32_t slice = b.tile_z % p.consumer_split_k;
  return slice * per_slice + i;
}

Step& epilogue(Kernel& k, const Block& b) { return k.steps[b.first_step + b.num_steps - 1]; }

void append_producers(ChainPair& p, Workload& out, std::uint32_t stream) {
  for (Kernel& k : p.producers) {
    k.stream = stream;
    out.kernels.push_back(std::move(k));
  }
  p.producers.clear();
}

}  // namespace sync_detail

}  // namespace tilesim
