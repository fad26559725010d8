// Reading chain order files (format in chain_order_file.hpp and docs/orders.md); the writer is
// sim/tools/search's write_chain_order, and a test reads what it writes.
#include "workloads/orders/chain_order_file.hpp"

#include <fstream>
#include <istream>
#include <sstream>

#include "common/error.hpp"
#include "common/text.hpp"
#include "workloads/orders/order_file.hpp"

namespace tilesim {

namespace {

/// Splits `line` into a word and `count` integers below 2^31; false when it is not exactly that.
bool scan(const std::string& line, std::string& word, std::uint32_t* values, int count) {
  std::istringstream in(line);
  if (!(in >> word)) return false;
  for (int i = 0; i < count; ++i) {
    std::string tok;
    if (!(in >> tok) || tok.empty() || tok.size() > 9 || tok.find_first_not_of("0123456789") != std::string::npos)
      return false;
    values[i] = static_cast<std::uint32_t>(std::stoul(tok));
  }
  std::string rest;
  return !(in >> rest);
}

std::string tile_text(char kind, std::uint32_t m, std::uint32_t n) {
  return std::string(kind == 'c' ? "consumer" : "producer") + " tile (" + std::to_string(m) + ", " + std::to_string(n) +
         ")";
}

}  // namespace

bool is_chain_order(std::istream& in) {
  std::string raw;
  while (std::getline(in, raw)) {
    const std::string line = strip_comment(raw);
    if (line.empty()) continue;
    std::istringstream words(line);  // the same split as the header's reader
    std::string word;
    return words >> word && word == "chain";
  }
  return false;
}

ChainOrder parse_chain_order(std::istream& in, const std::string& name) {
  ChainOrder c;
  c.name = name;
  std::string raw, word;
  std::size_t line_no = 0;
  std::vector<std::size_t> seen_p, seen_c;  // line of each tile's first entry, 0 while unseen
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string line = strip_comment(raw);
    if (line.empty()) continue;
    const std::string where = name + ":" + std::to_string(line_no) + ": ";
    std::uint32_t v[3] = {0, 0, 0};
    if (c.header_line == 0) {
      if (!scan(line, word, v, 3) || word != "chain" || v[0] == 0 || v[1] == 0 || v[2] == 0)
        throw InputError(where + "expected the header 'chain M N N1' (positive integers: the producer's M x N tile " +
                         "grid and the consumer's N1 columns); got '" + line + "'");
      // The header sizes the check of every tile: bounded before anything is allocated.
      constexpr std::uint64_t kMaxTiles = std::uint64_t{1} << 22;
      const std::uint64_t tiles = std::uint64_t{v[0]} * v[1] + std::uint64_t{v[0]} * v[2];
      if (tiles > kMaxTiles)
        throw InputError(where + "the header declares " + std::to_string(tiles) + " tiles; a chain order file holds at most " +
                         std::to_string(kMaxTiles));
      c.grid_m = v[0], c.grid_n = v[1], c.consumer_n = v[2];
      c.header_line = line_no;
      seen_p.assign(static_cast<std::size_t>(c.grid_m) * c.grid_n, 0);
      seen_c.assign(static_cast<std::size_t>(c.grid_m) * c.consumer_n, 0);
      continue;
    }
    if (!scan(line, word, v, 2) || (word != "p" && word != "c"))
      throw InputError(where + "expected a producer tile 'p m n' or a consumer tile 'c m j' (non-negative " +
                       "integers); got '" + line + "'");
    const bool consumer = word == "c";
    const std::uint32_t cols = consumer ? c.consumer_n : c.grid_n;
    if (v[0] >= c.grid_m || v[1] >= cols)
      throw InputError(where + tile_text(word[0], v[0], v[1]) + " is outside the " + std::to_string(c.grid_m) + "x" +
                       std::to_string(cols) + " grid the header declares");
    std::size_t& seen = (consumer ? seen_c : seen_p)[static_cast<std::size_t>(v[0]) * cols + v[1]];
    if (seen)
      throw InputError(where + tile_text(word[0], v[0], v[1]) + " repeats line " + std::to_string(seen));
    seen = line_no;
    c.entries.push_back({consumer, v[0], v[1], line_no});
  }
  if (c.header_line == 0) throw InputError(name + ": empty chain order file (expected 'chain M N N1' first)");
  for (std::size_t i = 0; i < seen_p.size(); ++i)
    if (!seen_p[i])
      throw InputError(name + ": " + tile_text('p', static_cast<std::uint32_t>(i / c.grid_n),
                                               static_cast<std::uint32_t>(i % c.grid_n)) + " is missing");
  for (std::size_t i = 0; i < seen_c.size(); ++i)
    if (!seen_c[i])
      throw InputError(name + ": " + tile_text('c', static_cast<std::uint32_t>(i / c.consumer_n),
                                               static_cast<std::uint32_t>(i % c.consumer_n)) + " is missing");
  return c;
}

std::optional<ChainOrder> chain_order_of(const ConfigNode& order, const std::string& base_dir) {
  if (!order.has("kind") || order.string("kind") != "file" || !order.has("path")) return std::nullopt;
  const std::string resolved = checked_order_path(order, base_dir);
  std::ifstream probe(resolved);
  if (!probe) order.at("path").fail("cannot open order file '" + resolved + "'");
  if (!is_chain_order(probe)) return std::nullopt;
  std::ifstream in(resolved);
  return parse_chain_order(in, resolved);
}

}  // namespace tilesim
