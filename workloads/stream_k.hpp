#pragma once
// CUTLASS 3's stream-K tile scheduler (PersistentTileSchedulerSm90StreamK, CUTLASS 7107b05):
// which k-tiles of which output tiles each persistent program computes. The decomposition is a
// transcription of the host-side heuristic (tile_scheduler_params.h) and the device-side unit
// mapping (sm90_tile_scheduler_stream_k.hpp); docs/stream_k.md cites the lines. Clusters of one
// block and one batch only.
#include <cstdint>
#include <string>
#include <vector>

namespace tilesim {

enum class StreamKMode : std::uint8_t { heuristic, stream_k, split_k, data_parallel };
const char* stream_k_mode_name(StreamKMode m);

struct StreamKRequest {
  std::uint32_t tiles_m = 0, tiles_n = 0;  ///< the scheduler's tile grid (rounded up to its swizzle)
  std::uint32_t k_tiles = 0;               ///< k-tiles per output tile
  std::uint32_t programs = 0;              ///< persistent programs (CUTLASS's sm_count)
  bool along_m = false;                    ///< the resolved raster order
  StreamKMode mode = StreamKMode::heuristic;
  std::uint32_t splits = 1;                ///< split-K factor asked for (heuristic or split_k)
};

/// A piece of work: k-tiles [k_begin, k_end) of the scheduler's linear output tile `tile`
/// (tiles [0, sk_tiles) are stream-K tiles, the rest data-parallel).
struct StreamKUnit {
  std::uint32_t tile = 0, k_begin = 0, k_end = 0;
  bool operator==(const StreamKUnit&) const = default;
};

struct StreamKPlan {
  StreamKMode mode = StreamKMode::data_parallel;  ///< the decomposition chosen
  std::uint32_t sk_tiles = 0, sk_units = 0, splits = 1, groups = 1;
  std::uint32_t k_tiles_per_sk_unit = 0, big_units = 0, big_groups = 0;
  /// Per program, its pieces in the order it runs them.
  std::vector<std::vector<StreamKUnit>> programs;
};

StreamKPlan plan_stream_k(const StreamKRequest& r);

}  // namespace tilesim
