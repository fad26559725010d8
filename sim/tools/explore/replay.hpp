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

struct ReplayProgram;

class Replay {
 public:
  /// A cold L2 of `spec`; requests come from an SM next to `partition`.
  Replay(const L2Spec& spec, std::uint64_t seed, std::uint32_t partition);

  /// Runs one block: its requests in order.
  void run(const ReplayRequest* requests, std::size_t count);
  /// Runs block b of `p` (only the new block's requests: the L2 keeps the state of the blocks
  /// before it, which is what makes a click cost one block however long the order is).
  void run_block(const ReplayProgram& p, std::uint32_t b);
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

/// A run of requests: `period` base requests (requests[first, first + period)) issued
/// `repeat` times, the start of base request j advancing by deltas[first + j] each time. A GEMM
/// block's main loop (A_k, B_k for k = 0..K/BK-1) is one loop of period 2, so a block of a long-K
/// GEMM packs into a few dozen words instead of 8 per request (4096-tile grids fit in a page).
struct ReplayLoop {
  std::uint32_t first = 0, period = 1, repeat = 1;
};

/// What the page replays: each block's requests (as loops), and the lines to probe for each
/// cell of the residency picture (a cell is a tile of an input tensor).
struct ReplayProgram {
  std::vector<std::uint32_t> block_first{0};  ///< block b's loops are [block_first[b], block_first[b+1])
  std::vector<ReplayLoop> loops;
  std::vector<ReplayRequest> requests;        ///< the loops' base requests
  std::vector<std::uint64_t> deltas;          ///< per base request: start advance per repetition (mod 2^64)
  std::vector<std::uint32_t> cell_first{0};   ///< cell c's sample lines are [cell_first[c], cell_first[c+1])
  std::vector<Addr> samples;

  std::uint32_t blocks() const { return static_cast<std::uint32_t>(block_first.size() - 1); }
  std::uint32_t cells() const { return static_cast<std::uint32_t>(cell_first.size() - 1); }
};

/// Appends one block: `requests` in order, folded into loops (exactly: expanding the loops
/// gives `requests` back).
void append_block(ReplayProgram& p, const std::vector<ReplayRequest>& requests);
/// Block b's requests, expanded, in order.
std::vector<ReplayRequest> block_requests(const ReplayProgram& p, std::uint32_t b);
/// Calls visit(request) for each request of block b, in order, without materialising them.
template <typename Visit>
void for_each_request(const ReplayProgram& p, std::uint32_t b, Visit&& visit) {
  for (std::uint32_t l = p.block_first[b]; l < p.block_first[b + 1]; ++l) {
    const ReplayLoop& loop = p.loops[l];
    for (std::uint32_t rep = 0; rep < loop.repeat; ++rep)
      for (std::uint32_t j = 0; j < loop.period; ++j) {
        ReplayRequest r = p.requests[loop.first + j];
        r.rect.start += rep * p.deltas[loop.first + j];
        visit(r);
      }
  }
}

/// The program as 32-bit words for the page (docs/explore.md, "Manual mode"): a header
/// {0x50525354, 2, blocks, loops, requests, cells, samples}, block_first, 3 words per loop
/// (first, period, repeat), 10 words per base request (start, pitch, row_bytes as low/high
/// pairs, rows, write, delta low/high), cell_first, 2 words per sample.
std::vector<std::uint32_t> pack_program(const ReplayProgram& p);
/// The inverse; false when the words are not a well-formed program.
bool unpack_program(const std::uint32_t* words, std::size_t count, ReplayProgram& out);

/// Up to `max_rows` x `max_cols` line addresses spread evenly over a rectangle: the lines the
/// explorer probes to say how much of a tile is resident (cheap for large tiles).
std::vector<Addr> sample_lines(const ByteRect& r, std::uint32_t line_bytes, std::uint32_t max_rows = 8,
                               std::uint32_t max_cols = 4);

}  // namespace tilesim::explore
