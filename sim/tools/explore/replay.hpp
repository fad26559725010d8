#pragma once
// The explorer's manual mode: whole blocks run one after another through one L2 from cold,
// the requests of each block in the order the simulator issues them when the block runs
// alone (its steps in order, each step's loads then its stores). This file is built twice:
// into tilesim, and into the WebAssembly module the page runs (cmake/explore_wasm.cmake), so
// the page's running cost comes from the very L2 code `tilesim run` uses. Dependencies: the
// L2 model only (no YAML, no exceptions on the hot path).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/arch.hpp"
#include "models/cache/l2.hpp"

namespace tilesim::explore {

/// One L2 request of a block: a byte rectangle, read or written.
struct ReplayRequest {
  ByteRect rect;
  bool write = false;
};

struct ReplayTotals {
  std::uint64_t sectors = 0;             ///< sectors requested (reads and writes)
  std::uint64_t hit_sectors = 0;
  std::uint64_t dram_read_sectors = 0;
  std::uint64_t dram_write_sectors = 0;  ///< write-backs by evictions, and by flush()
};

class Replay {
 public:
  /// A cold L2 of `spec`; requests come from an SM next to `partition`.
  Replay(const L2Spec& spec, std::uint64_t seed, std::uint32_t partition);

  /// Runs one block: its requests in order.
  void run(const ReplayRequest* requests, std::size_t count);
  /// Writes back every dirty sector (the simulator does this when the GPU goes idle).
  void flush();
  const ReplayTotals& totals() const { return totals_; }

  /// Fraction of `lines` (line addresses) that the L2 holds, in any partition.
  double resident_fraction(const Addr* lines, std::size_t count) const;
  const L2Cache& l2() const { return l2_; }

 private:
  L2Cache l2_;
  std::uint32_t partition_;
  ReplayTotals totals_;
};

/// Fraction of `lines` (line addresses) that `l2` holds, in any partition.
double resident_fraction(const L2Cache& l2, const Addr* lines, std::size_t count);

/// What the page replays: each block's requests, and the lines to probe for each cell of the
/// residency picture (a cell is a tile of an input tensor).
struct ReplayProgram {
  std::vector<std::uint32_t> block_first;  ///< block b's requests are [block_first[b], block_first[b+1])
  std::vector<ReplayRequest> requests;
  std::vector<std::uint32_t> cell_first;   ///< cell c's sample lines are [cell_first[c], cell_first[c+1])
  std::vector<Addr> samples;
};

/// The program as 32-bit words for the page (docs/explore.md, "Manual mode"): a header
/// {0x50525354, 1, blocks, requests, cells, samples}, block_first, 8 words per request
/// (start, pitch, row_bytes as low/high pairs, rows, write), cell_first, 2 words per sample.
std::vector<std::uint32_t> pack_program(const ReplayProgram& p);
/// The inverse; false when the words are not a well-formed program.
bool unpack_program(const std::uint32_t* words, std::size_t count, ReplayProgram& out);

/// Up to `max_rows` x `max_cols` line addresses spread evenly over a rectangle: the lines the
/// explorer probes to say how much of a tile is resident (cheap for large tiles).
std::vector<Addr> sample_lines(const ByteRect& r, std::uint32_t line_bytes, std::uint32_t max_rows = 8,
                               std::uint32_t max_cols = 4);

}  // namespace tilesim::explore
