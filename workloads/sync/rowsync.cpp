// `rowsync` (CuSync's RowSync): each consumer block waits once, before its first step, until
// every producer tile of its row has been stored. One semaphore per row, posted by each of the
// row's producer tiles.
#include "workloads/sync/cusync.hpp"

namespace tilesim {

namespace {

void rowsync(const ConfigNode& sync, ChainPair& p, Workload& out) {
  sync.allow_keys({"kind"});
  const std::uint32_t base = out.num_semaphores;
  out.num_semaphores += p.tiles_m;
  Kernel& prod = p.producers.back();
  for (const Block& b : prod.blocks) sync_detail::epilogue(prod, b).post_sem = base + b.tile_m;
  for (const Block& b : p.consumer.blocks) {
    Step& first = p.consumer.steps[b.first_step];
    first.wait_sem = base + b.tile_m;
    first.wait_value = p.producer_tiles_n;  // all tiles of the row ([gate | up] halves included)
  }
  sync_detail::cusync_streams(p, out);
}

const bool registered = register_sync("rowsync",
    "CuSync's RowSync: a consumer block waits once for its whole row of producer tiles", rowsync);

}  // namespace

}  // namespace tilesim
