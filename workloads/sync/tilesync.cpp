// `tilesync` (CuSync's TileSync): before each k-step, a consumer block waits for the one
// producer tile whose columns that step reads. One semaphore per producer tile.
#include "workloads/sync/cusync.hpp"

namespace tilesim {

namespace sync_detail {

// Semaphores per producer tile, posted by its epilogue; each consumer main-loop step waits on
// the tile covering its columns. Shared with `dataflow`, which waits the same way.
void tile_waits(const ConfigNode& sync, ChainPair& p, Workload& out, Kernel& prod, Kernel& cons) {
  if (p.producer_bn % p.consumer_bk)
    sync.fail("tile-level waits need gemm0's bn (" + std::to_string(p.producer_bn) + ") to be a multiple of gemm1's bk (" +
              std::to_string(p.consumer_bk) + "), so each consumer k-step reads one producer tile");
  const std::uint32_t base = out.num_semaphores;
  out.num_semaphores += p.tiles_m * p.producer_tiles_n;
  for (const Block& b : prod.blocks) epilogue(prod, b).post_sem = base + b.tile_m * p.producer_tiles_n + b.tile_n;
  for (const Block& b : cons.blocks)
    for (std::uint32_t i = 0; i + 1 < b.num_steps; ++i) {  // main-loop steps; the last is the epilogue
      Step& s = cons.steps[b.first_step + i];
      const std::uint32_t col = consumer_kstep(p, b, i) * p.consumer_bk / p.producer_bn;
      s.wait_sem = base + b.tile_m * p.producer_tiles_n + col;
      s.wait_value = 1;
    }
}

}  // namespace sync_detail

namespace {

void tilesync(const ConfigNode& sync, ChainPair& p, Workload& out) {
  sync.allow_keys({"kind"});
  sync_detail::tile_waits(sync, p, out, p.producers.back(), p.consumer);
  sync_detail::cusync_streams(p, out);
}

const bool registered = register_sync("tilesync", tilesync);

}  // namespace

}  // namespace tilesim
