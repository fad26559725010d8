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
  // With a concatenated [gate | up] intermediate, tiles n and n + stride share a semaphore.
  const std::uint32_t stride = p.producer_stride_tiles;
  const std::uint32_t cols = stride ? stride : p.producer_tiles_n;
  const std::uint32_t base = out.num_semaphores;
  out.num_semaphores += p.tiles_m * cols;
  for (const Block& b : prod.blocks)
    epilogue(prod, b).post_sem = base + b.tile_m * cols + (stride ? b.tile_n % stride : b.tile_n);
  for (const Block& b : cons.blocks)
    for (std::uint32_t i = 0; i + 1 < b.num_steps; ++i) {  // main-loop steps; the last is the epilogue
      Step& s = cons.steps[b.first_step + i];
      const std::uint32_t col = consumer_kstep(p, b, i) * p.consumer_bk / p.producer_bn;
      s.wait_sem = base + b.tile_m * cols + col;
      s.wait_value = stride ? 2 : 1;
    }
}

}  // namespace sync_detail

namespace {

void tilesync(const ConfigNode& sync, ChainPair& p, Workload& out) {
  sync.allow_keys({"kind"});
  if (p.producer_stride_tiles)
    sync.fail_key("kind", "a concatenated [gate | up] producer needs `stridedsync`: each consumer k-step reads two "
                          "producer tiles f/bn apart");
  sync_detail::tile_waits(sync, p, out, p.producers.back(), p.consumer);
  sync_detail::cusync_streams(p, out);
}

// `stridedsync` (CuSync's StridedSync, for gated MLPs whose producer writes [gate | up] as one
// [M x 2f] GEMM): a consumer k-step waits for the two producer tiles, n and n + f/bn, whose
// halves it combines.
void stridedsync(const ConfigNode& sync, ChainPair& p, Workload& out) {
  sync.allow_keys({"kind"});
  if (!p.producer_stride_tiles)
    sync.fail_key("kind", "stridedsync is for a gated FFN with `gate_fusion: concat`; use tilesync otherwise");
  sync_detail::tile_waits(sync, p, out, p.producers.back(), p.consumer);
  sync_detail::cusync_streams(p, out);
}

const bool registered = register_sync("tilesync",
    "CuSync's TileSync: each consumer k-step waits for the producer tile it reads", tilesync);
const bool registered_strided = register_sync("stridedsync",
    "CuSync's StridedSync: TileSync for a concatenated [gate | up] producer", stridedsync);

}  // namespace

}  // namespace tilesim
