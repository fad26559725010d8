#pragma once
// A tile access as the L2 sees it: the byte rectangle of a TileAccess in its tensor. Shared by
// the simulator and the explorer's replay program, so both hand the L2 the same requests.
#include "common/types.hpp"
#include "models/cache/l2.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

inline ByteRect to_rect(const Tensor& t, const TileAccess& a) {
  const std::uint64_t bits = t.elem_bits;
  // Along the contiguous dimension (c) and the strided one (r).
  const std::uint64_t r0 = t.col_major ? a.col0 : a.row0, nr = t.col_major ? a.cols : a.rows;
  const std::uint64_t c0 = t.col_major ? a.row0 : a.col0, nc = t.col_major ? a.rows : a.cols;
  const std::uint64_t pitch = t.ld * bits / 8;
  const std::uint64_t first = c0 * bits / 8, end = ceil_div((c0 + nc) * bits, std::uint64_t{8});
  ByteRect b;
  b.start = t.base + a.batch * t.batch_stride + r0 * pitch + first;
  b.pitch = pitch;
  b.row_bytes = end - first;
  b.rows = static_cast<std::uint32_t>(nr);
  return b;
}

/// The sectors of `sector_bytes` a byte rectangle spans (what its rows ask of the L2).
inline std::uint64_t rect_sectors(const ByteRect& r, std::uint64_t sector_bytes) {
  const auto row = [&](std::uint64_t start) {
    return (start + r.row_bytes + sector_bytes - 1) / sector_bytes - start / sector_bytes;
  };
  if (r.pitch % sector_bytes == 0) return row(r.start) * r.rows;  // every row aligns alike
  std::uint64_t n = 0;
  for (std::uint32_t i = 0; i < r.rows; ++i) n += row(r.start + i * r.pitch);
  return n;
}

}  // namespace tilesim
