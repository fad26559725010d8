#pragma once
// Chain order files: the dispatch order of a producer -> consumer pair of GEMMs fused into one
// kernel (an FFN under `sync: dataflow`), as `tilesim order-search --chain` writes it.
// Format (docs/orders.md, "Chain order files"), one entry per line, in dispatch order:
//   chain M N N1  first entry: the producer's M x N tile grid and the consumer's N1 columns
//   p m n         a producer tile
//   c m j         a consumer tile (row m, column j)
// Blank lines and everything after '#' are ignored. Every tile of both grids appears once.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "common/config_node.hpp"

namespace tilesim {

struct ChainOrderEntry {
  bool consumer = false;
  std::uint32_t m = 0, n = 0;
  std::size_t line = 0;  // 1-based, for error messages
};

struct ChainOrder {
  std::string name;  // the file's path as used in error messages
  std::uint32_t grid_m = 0, grid_n = 0, consumer_n = 0;
  std::size_t header_line = 0;
  std::vector<ChainOrderEntry> entries;
};

/// True when the first entry of order-file text is a `chain` header.
bool is_chain_order(std::istream& in);

/// Parses chain-order text; a malformed line, a tile outside the declared grids, a repeated
/// or a missing tile is an InputError "NAME:LINE: what was expected".
ChainOrder parse_chain_order(std::istream& in, const std::string& name);

/// The chain order named by an `order: {kind: file, path: P}` node when P is a chain order
/// file (resolved against `base_dir`); nothing for any other order.
std::optional<ChainOrder> chain_order_of(const ConfigNode& order, const std::string& base_dir);

}  // namespace tilesim
