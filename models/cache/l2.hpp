#pragma once
// The L2 model: set-associative, sectored, split into partitions (the two halves of A100/H100
// joined by a fabric). A tile access is a 2-D byte rectangle resolved line by line with a
// sector mask — never per byte. State lives in flat integer arrays; the access loop is
// instantiated per (replacement, hash) pair so the hot path has no indirect calls.
//
// Partition semantics (docs/architecture.md, "The L2 model"): every line has a home partition
// chosen by the hash. A read from an SM next to the other half first looks in its near half (a
// copy may be there); on a near miss the home half serves it over the fabric (from its data or
// from DRAM), and with `far_copy` the line is also filled into the near half. Writes go to the
// home half (write-allocate, write-back) and invalidate the copy in the other half.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/types.hpp"
#include "models/arch.hpp"
#include "models/cache/geometry.hpp"

namespace tilesim {

/// `rows` runs of `row_bytes` bytes, `pitch` bytes apart, starting at `start`.
struct ByteRect {
  Addr start = 0;
  std::uint64_t pitch = 0;
  std::uint64_t row_bytes = 0;
  std::uint32_t rows = 0;
};

/// Whether every row of `r` starts and ends on a line of `line_bytes` (a one-row rectangle's
/// pitch does not matter).
inline bool whole_lines(const ByteRect& r, std::uint64_t line_bytes) {
  return r.start % line_bytes == 0 && r.row_bytes % line_bytes == 0 && (r.rows <= 1 || r.pitch % line_bytes == 0);
}

/// What one access did, in sectors. A sector is "hit" when L2 held it (near copy or home).
struct L2AccessResult {
  std::uint64_t sectors = 0;
  std::uint64_t hit_sectors = 0;
  std::uint64_t near_copy_hit_sectors = 0;
  std::uint64_t fabric_sectors = 0;      ///< sectors that crossed between the halves
  /// Sectors a far line's fill looked up in the home half beyond those requested, that hit
  /// there: lookups that hit (Nsight counts them) but not requested sectors, so not in hit_sectors.
  std::uint64_t fill_hit_sectors = 0;
  std::uint64_t dram_read_sectors = 0;   ///< sectors filled from DRAM
  std::uint64_t dram_write_sectors = 0;  ///< dirty sectors written back by evictions this access caused
  std::array<std::uint64_t, 2> partition_sectors{};  ///< sectors each half moved (bandwidth)

  L2AccessResult& operator+=(const L2AccessResult& o);
};

/// What a single line looks like in one partition (tests and the explorer use it).
struct LineProbe {
  bool present = false;
  std::uint8_t valid = 0;
  std::uint8_t dirty = 0;
};

class L2Cache {
 public:
  /// Throws InputError for an unknown hash or replacement name (naming `origin`).
  L2Cache(const L2Spec& spec, std::uint64_t seed, const std::string& origin = "arch");
  ~L2Cache();
  L2Cache(const L2Cache&) = delete;
  L2Cache& operator=(const L2Cache&) = delete;

  const CacheGeometry& geometry() const { return geo_; }

  /// Bytes of one set's record for `ways` ways: tags, valid, dirty and policy bytes, padded to a
  /// cache line with room for the SSE2 reads past the tags.
  static std::uint64_t set_record_bytes(std::uint32_t ways);
  /// Host memory the set records of an L2 of `spec` take (what the constructor allocates).
  static std::uint64_t arena_bytes(const L2Spec& spec);

  /// Reads or writes a rectangle from an SM next to `requester_partition`. A read that misses
  /// fetches the aligned chunk of l2.fill_bytes around each missed sector, or of `fill_bytes`
  /// where that is larger (a load's prefetch size, cp.async.L2::128B), at most the line: the
  /// chunk's other sectors become valid, count as DRAM reads, and are not looked up.
  L2AccessResult access(const ByteRect& rect, std::uint32_t requester_partition, bool write,
                        std::uint32_t fill_bytes = 0);
  /// The bytes a read miss fetches around each missed sector: l2.fill_bytes, or `prefetch_bytes`
  /// where larger, at least a sector and at most the line.
  std::uint32_t fill_chunk_bytes(std::uint32_t prefetch_bytes) const;
  /// One line, with an explicit sector mask (tests and the lookup benchmark).
  L2AccessResult access_line(Addr addr, std::uint8_t sector_mask, std::uint32_t requester_partition, bool write);

  /// Address regions (sorted region start addresses) to attribute dirty write-backs to.
  void set_regions(std::vector<Addr> region_starts);
  /// Sectors written back so far whose address fell in region i (cumulative).
  const std::vector<std::uint64_t>& writeback_sectors_by_region() const { return region_writebacks_; }

  /// Writes back every dirty sector (lines stay valid and become clean); returns the count.
  std::uint64_t flush_dirty();
  /// Empties the cache (cold start, as Nsight Compute measures by default).
  void invalidate_all();
  /// The state a long write stream leaves (do_bench's flush before each timed repetition):
  /// writes `bytes` from `base` through the cache, then keeps dirty only a `dirty_fraction`
  /// of the lines it left (chosen by a hash of the line, so spread evenly over sets and ages);
  /// the others are clean, as if the L2 had written them back on its own. Write-backs the
  /// stream itself caused are counted in its region like any others.
  void write_flush(Addr base, std::uint64_t bytes, double dirty_fraction);

  LineProbe probe(Addr addr, std::uint32_t partition) const;
  std::uint32_t home_partition(Addr addr) const;

 private:
  struct Impl;
  CacheGeometry geo_;
  std::unique_ptr<Impl> impl_;
  std::vector<std::uint64_t> region_writebacks_;
  std::vector<Addr> region_starts_;

  void count_writeback(std::uint32_t line, std::uint32_t sectors);
  template <class Repl, class Hash>
  friend struct L2Access;
};

}  // namespace tilesim
