// The shared-memory ceiling of warp-level MMA main loops (models/compute/mainloop.hpp).
#include <catch2/catch.hpp>

#include "models/compute/mainloop.hpp"

using namespace tilesim;

TEST_CASE("mainloop: shared-memory bytes per FLOP follow the warp tile, split the cheapest way", "[mainloop]") {
  // 128x128 with 4 warps: 64x64 warp tiles. Per k: 4 x (64 + 64) read + 256 written, 2 B each,
  // over 2 x 128 x 128 FLOPs.
  CHECK(smem_bytes_per_flop(128, 128, 4, 2) == Approx(2.0 * (512 + 256) / (2.0 * 128 * 128)));
  // 8 warps: 64x32 (or 32x64) warp tiles, 8 x 96 read; not 128x16 (8 x 144).
  CHECK(smem_bytes_per_flop(128, 128, 8, 2) == Approx(2.0 * (768 + 256) / (2.0 * 128 * 128)));
  // 64x128 with 8 warps: 32x32 warp tiles (2 x 4), not 64x16 (1 x 8) nor 16x64 (4 x 2).
  CHECK(smem_bytes_per_flop(64, 128, 8, 2) == Approx(2.0 * (512 + 192) / (2.0 * 64 * 128)));
  // 6 warps over 128x128: 3 x 2 or 2 x 3 warp grids read 2 x 128 + 3 x 128 = 640.
  CHECK(smem_bytes_per_flop(128, 128, 6, 2) == Approx(2.0 * (640 + 256) / (2.0 * 128 * 128)));
  CHECK(smem_bytes_per_flop(0, 128, 4, 2) == 0);
  CHECK(smem_bytes_per_flop(128, 128, 0, 2) == 0);
}

TEST_CASE("mainloop: the shared-memory ceiling binds small warp tiles, not large ones", "[mainloop]") {
  // 4096 FLOP per clock (H100 fp16) and 128 B per clock: 64x64 warp tiles reach 2/3 of the peak,
  // 64x32 half, 32x32 (64x128 with 8 warps) 0.36.
  CHECK(smem_ceiling(128, 4096, 128, 128, 4, 2) == Approx(2.0 / 3.0));
  CHECK(smem_ceiling(128, 4096, 128, 128, 8, 2) == Approx(0.5));
  CHECK(smem_ceiling(128, 4096, 64, 128, 8, 2) == Approx(128.0 / (4096 * 1408.0 / 16384)));
  // A slower pipe (A100: 2048 per clock) is not bound by 64x64 warp tiles.
  CHECK(smem_ceiling(128, 2048, 128, 128, 4, 2) == 1.0);
  // Not modelled (0 bytes per clock) or no tile: no ceiling.
  CHECK(smem_ceiling(0, 4096, 128, 128, 8, 2) == 1.0);
  CHECK(smem_ceiling(128, 4096, 0, 0, 8, 2) == 1.0);
  // Ordered: a larger warp tile never needs more shared memory per FLOP.
  CHECK(smem_ceiling(128, 4096, 128, 256, 8, 2) > smem_ceiling(128, 4096, 128, 128, 8, 2));
}

TEST_CASE("mainloop: a block's share counts accumulator elements when the kind says so, else warps", "[mainloop]") {
  MainLoopSpec m;
  m.saturating_warps = 8;
  CHECK(m.block_share(128, 128, 4) == Approx(0.5));
  CHECK(m.block_share(128, 128, 16) == 1.0);
  m.saturating_elements = 32768;
  CHECK(m.block_share(128, 128, 4) == Approx(0.5));
  CHECK(m.block_share(128, 128, 8) == Approx(0.5));  // however the warps split it
  CHECK(m.block_share(128, 256, 8) == 1.0);
  CHECK(m.block_share(0, 0, 4) == Approx(0.5));  // no tile: the warps again
}
