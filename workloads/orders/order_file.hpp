#pragma once
// Explicit launch-order files (the `file` policy; also how tools export an order).
// Format, one entry per line, in dispatch order:
//   grid M N      optional, first entry only: the tile grid the order was written for
//   m n           a tile (non-negative integers; "m,n" also accepted)
//   exit          a launched block that computes nothing (kEarlyExit, e.g. CUTLASS padding)
//   pad           work on a tile outside the problem (kPaddedTile, CUTLASS 3's swizzle padding)
// Blank lines and everything after '#' are ignored. See docs/orders.md.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "common/config_node.hpp"
#include "workloads/orders/order.hpp"

namespace tilesim {

struct OrderFileEntry {
  TileCoord tile;         // kEarlyExit for an `exit` line, kPaddedTile for `pad`
  std::size_t line = 0;   // 1-based, for error messages
};

struct OrderFile {
  std::string name;  // the file's path as used in error messages
  std::optional<std::uint32_t> grid_m, grid_n;
  std::size_t grid_line = 0;
  std::vector<OrderFileEntry> entries;
};

/// The file an order node's `path` names, resolved against `base_dir` and checked as an input
/// file (a ConfigNode error on `path` otherwise). Shared with chain order files.
std::string checked_order_path(const ConfigNode& node, const std::string& base_dir);

/// Parses order-file text; a malformed line is an InputError "NAME:LINE: what was expected".
OrderFile parse_order_file(std::istream& in, const std::string& name);

/// The dispatch sequence for a grid_m x grid_n grid. InputError (naming the file, and the line
/// where there is one) when the declared grid differs, or a tile is out of range, repeated or missing.
std::vector<TileCoord> order_file_sequence(const OrderFile& file, std::uint32_t grid_m, std::uint32_t grid_n);

/// Writes `order` in the format above with a `grid M N` header. Throws std::invalid_argument
/// for a tile outside the grid (a caller bug: the reader would reject the file).
void write_order_file(const std::vector<TileCoord>& order, std::uint32_t grid_m, std::uint32_t grid_n,
                      std::ostream& out);

}  // namespace tilesim
