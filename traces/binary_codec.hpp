#pragma once
// What the binary trace's writer (binary_trace_write.cpp) and reader (binary_trace.cpp) share:
// the layout's constants and flag bits and the predictions fields are stored against, one copy
// so the two sides can never disagree. Internal to traces/; the format is docs/trace-format.md.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "workloads/kernel.hpp"

namespace tilesim::binary_trace_codec {

constexpr std::size_t kHeaderBytes = 8 + 4 + 8;  // magic, version, total length
constexpr std::size_t kChecksumBytes = 8;

// The fewest bytes each record can take; used to reject counts before allocating.
constexpr std::uint64_t kMinTensorBytes = 9;
constexpr std::uint64_t kMinKernelBytes = 18;
constexpr std::uint64_t kMinBlockBytes = 5;
constexpr std::uint64_t kMinStepBytes = 1;
constexpr std::uint64_t kMinAccessBytes = 3;
constexpr std::uint64_t kMinDispatchBytes = 1;

// Step flag bits; the high nibble holds num_accesses (15 = "a varint follows"). kStepWork: the
// step's work differs from the previous step's: flops and the three element counts follow.
constexpr std::uint8_t kStepWait = 1, kStepPost = 2, kStepFirstAccess = 4, kStepWork = 8;
// A kernel's main-loop kind when it has none (the arch's default applies).
constexpr std::uint8_t kNoMainLoop = 0xff;
// Kernel flags: the pipeline drains between tiles (Kernel::drain_between_tiles).
constexpr std::uint8_t kKernelDrainTiles = 1;
constexpr std::uint8_t kKernelMmaTile = 2;  // two varints follow the flags: the block's output tile
constexpr std::uint8_t kKernelSerialized = 4;  // a varint follows (after the tile's): serialized_mma_cols
constexpr std::uint8_t kKernelSingleFragments = 8;  // mma_sync warps that load no fragments ahead
constexpr std::uint8_t kKernelPrefetch = 16;  // a varint follows (after serialized's): l2_prefetch_bytes
constexpr std::uint8_t kKernelCachedLoads = 32;  // its loads go through L1: none merged (Kernel::cached_loads)

inline bool same_work(const Step& a, const Step& b) {
  return a.flops == b.flops && a.dequant_elems == b.dequant_elems && a.softmax_elems == b.softmax_elems &&
         a.epilogue_elems == b.epilogue_elems;
}
// Access header bits; the high 4 bits hold the tensor index (15 = "a varint follows").
constexpr std::uint8_t kAccStore = 1, kAccShape = 2, kAccBatch = 4, kAccMulticast = 8;
constexpr std::uint32_t kInlineAccesses = 15, kInlineTensor = 15;

// A residual larger than this cannot come from two u32 values and their prediction; refusing
// it keeps the reader's int64 arithmetic far from overflow.
constexpr std::int64_t kMaxResidual = std::int64_t{1} << 34;

inline std::uint64_t zigzag(std::int64_t v) { return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63); }
inline std::int64_t unzigzag(std::uint64_t u) { return static_cast<std::int64_t>(u >> 1) ^ -static_cast<std::int64_t>(u & 1); }

// The tile a block computes if the grid is in the documented block-index order; blocks are
// stored as differences from it (zero whenever blocks are in block-index order).
struct TilePrediction {
  std::int64_t m, n, z;
};
inline TilePrediction predict_tile(std::uint64_t b, std::uint32_t grid_m, std::uint32_t grid_n) {
  const std::uint64_t plane = static_cast<std::uint64_t>(grid_m) * grid_n;
  if (plane == 0 || grid_n == 0) return {0, 0, 0};  // only in a corrupt header; validation rejects it
  return {static_cast<std::int64_t>(b % plane / grid_n), static_cast<std::int64_t>(b % grid_n),
          static_cast<std::int64_t>(b / plane)};
}

// Per-tensor state of the access prediction: the next row0/col0 is predicted to repeat the
// last stride (a K loop walks a tensor with a constant step), shape and batch to repeat.
// The states live across kernels and are reset lazily (by `kernel` stamp) on first use in a
// kernel: resetting all of them per kernel would let a crafted file with many tiny kernels and
// many tensors cost kernels x tensors time.
struct AccessState {
  std::int64_t row0 = 0, col0 = 0, drow = 0, dcol = 0;
  std::uint32_t rows = 0, cols = 0, batch = 0;
  std::size_t kernel = 0;  // 1 + the index of the kernel this state belongs to; 0 = unused

  // The prediction after access A; writer and reader share it so they can never disagree.
  void advance(const TileAccess& A) {
    drow = A.row0 - row0;
    dcol = A.col0 - col0;
    row0 = A.row0;
    col0 = A.col0;
    rows = A.rows;
    cols = A.cols;
    batch = A.batch;
  }
};

inline AccessState& access_state(std::vector<AccessState>& states, std::uint32_t tensor, std::size_t kernel) {
  AccessState& st = states[tensor];
  if (st.kernel != kernel + 1) st = AccessState{.kernel = kernel + 1};
  return st;
}

}  // namespace tilesim::binary_trace_codec
