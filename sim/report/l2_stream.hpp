#pragma once
// The L2 request stream of a run, exported for other cache simulators (`tilesim trace
// --l2-stream FILE`; format in docs/trace-format.md, "L2 request streams"). A file is a header
// and records, little-endian, written as the run goes (memory stays bounded):
//   header   "TSL2STRM" (8 bytes), u32 version (1), u32 line_bytes, u32 sector_bytes,
//            u32 partitions
//   request  u8 tag 1, u8 flags (bit 0: write), u16 partition (the requester's L2 half),
//            u32 sm, u32 kernel, u64 time_ps, u64 start, u64 pitch, u64 row_bytes, u32 rows:
//            `rows` rows of `row_bytes` bytes, `pitch` apart from `start` (one tile rectangle,
//            looked up row by row, each row's lines in address order)
//   reset    u8 tag 2, u8 invalidate (0: write every dirty sector back; 1: also empty the
//            L2), u64 time_ps
// Replaying the requests in order through the same L2 (models/cache/l2.hpp) gives the run's hit
// counts exactly (tests/sim/report/test_l2_stream.cpp).
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>

#include "models/cache/l2.hpp"
#include "sim/core/simulator.hpp"

namespace tilesim {

class L2StreamWriter final : public SimObserver {
 public:
  /// Opens `path` and writes the header; InputError when it cannot.
  L2StreamWriter(const std::string& path, const L2Spec& l2);
  /// Flushes and checks the file; InputError when a write failed.
  void close();
  std::uint64_t requests() const { return requests_; }

  void on_dispatch(std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, Time, const L2Cache&) override {}
  void on_access(std::uint32_t, std::uint32_t, const TileAccess&, const L2AccessResult&) override {}
  void on_end(Time, const L2Cache&) override {}
  void on_l2_request(std::uint32_t kernel, std::uint32_t sm, Time t, const ByteRect& rect, std::uint32_t partition,
                     bool write) override;
  void on_l2_reset(Time t, bool invalidate) override;

 private:
  std::string path_;
  std::ofstream out_;
  std::uint64_t requests_ = 0;
};

struct L2StreamHeader {
  std::uint32_t version = 0, line_bytes = 0, sector_bytes = 0, partitions = 0;
};

struct L2StreamRequest {
  bool write = false;
  std::uint16_t partition = 0;
  std::uint32_t sm = 0, kernel = 0;
  Time t = 0;
  ByteRect rect;
};

/// Reads a stream, calling `request` or `reset` for each record in order; returns the header.
/// A file that is not a stream, or is cut short, is an InputError naming the byte offset.
L2StreamHeader read_l2_stream(const std::string& path, const std::function<void(const L2StreamRequest&)>& request,
                              const std::function<void(Time, bool)>& reset);

}  // namespace tilesim
