// `file`: an explicit dispatch order read from a text file (format in order_file.hpp and
// docs/orders.md). The file is parsed when the policy is built so syntax errors surface at
// configuration time; whether it fits the grid can only be checked in sequence().
#include <filesystem>
#include <fstream>
#include <istream>
#include <ostream>
#include <stdexcept>

#include "common/error.hpp"
#include "common/files.hpp"
#include "common/text.hpp"
#include "workloads/orders/order_file.hpp"

namespace tilesim {

namespace {

std::string tile_text(std::uint32_t m, std::uint32_t n) {
  return "(" + std::to_string(m) + ", " + std::to_string(n) + ")";
}

std::string grid_text(std::uint32_t m, std::uint32_t n) { return std::to_string(m) + "x" + std::to_string(n); }

/// Reads an unsigned integer below 2^32 - 1 at s[pos] (kEarlyExit's value stays reserved).
bool scan_uint(const std::string& s, std::size_t& pos, std::uint32_t& value) {
  const std::size_t start = pos;
  std::uint64_t v = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
    v = v * 10 + static_cast<std::uint64_t>(s[pos] - '0');
    if (v >= 0xffffffffull) return false;
    ++pos;
  }
  value = static_cast<std::uint32_t>(v);
  return pos > start;
}

void skip_blanks(const std::string& s, std::size_t& pos) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
}

/// Parses "A B", "A,B" or "A, B" filling the rest of s from pos.
bool scan_pair(const std::string& s, std::size_t pos, std::uint32_t& a, std::uint32_t& b) {
  skip_blanks(s, pos);
  if (!scan_uint(s, pos, a)) return false;
  const std::size_t after_a = pos;
  skip_blanks(s, pos);
  if (pos < s.size() && s[pos] == ',') {
    ++pos;
    skip_blanks(s, pos);
  } else if (pos == after_a) {
    return false;  // "12x" or "1;2": no separator
  }
  if (!scan_uint(s, pos, b)) return false;
  skip_blanks(s, pos);
  return pos == s.size();
}

class FileOrder final : public LaunchOrder {
 public:
  FileOrder(std::string configured_path, OrderFile file)
      : configured_path_(std::move(configured_path)), file_(std::move(file)) {}

  std::string describe() const override { return "file(" + configured_path_ + ")"; }

  std::vector<TileCoord> sequence(std::uint32_t grid_m, std::uint32_t grid_n) const override {
    return order_file_sequence(file_, grid_m, grid_n);
  }

 private:
  std::string configured_path_;
  OrderFile file_;
};

const bool registered = register_order("file",
    "an explicit order read from a text file (docs/orders.md)",
    [](const ConfigNode& node, const std::string& base_dir) {
  node.allow_keys({"kind", "path"});
  const std::string resolved = checked_order_path(node, base_dir);
  std::ifstream in(resolved);
  if (!in) node.at("path").fail("cannot open order file '" + resolved + "'");
  return std::make_unique<FileOrder>(node.string("path"), parse_order_file(in, resolved));
});

}  // namespace

std::string checked_order_path(const ConfigNode& node, const std::string& base_dir) {
  std::filesystem::path resolved(node.string("path"));
  if (resolved.is_relative() && !base_dir.empty()) resolved = std::filesystem::path(base_dir) / resolved;
  try {
    check_input_file(resolved.string(), kMaxTextInputBytes);
  } catch (const InputError& e) {
    node.at("path").fail(std::string("order file: ") + e.what());
  }
  return resolved.string();
}

OrderFile parse_order_file(std::istream& in, const std::string& name) {
  OrderFile file;
  file.name = name;
  std::string raw;
  std::size_t line_no = 0;
  bool first_entry = true;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string line = strip_comment(raw);
    if (line.empty()) continue;
    const std::string where = name + ":" + std::to_string(line_no) + ": ";
    if (first_entry && line.rfind("chain", 0) == 0)
      throw InputError(where + "a chain order file (docs/orders.md) orders the fused kernel of an ffn workload " +
                       "under sync: dataflow, not one GEMM's grid");
    if (line.rfind("grid", 0) == 0) {
      if (!first_entry) throw InputError(where + "'grid M N' is only allowed as the first entry of the file");
      std::uint32_t m = 0, n = 0;
      if (line.size() == 4 || (line[4] != ' ' && line[4] != '\t') || !scan_pair(line, 4, m, n) || m == 0 || n == 0)
        throw InputError(where + "expected 'grid M N' with positive integers M and N; got '" + line + "'");
      file.grid_m = m;
      file.grid_n = n;
      file.grid_line = line_no;
    } else if (line == "exit") {
      file.entries.push_back({kEarlyExit, line_no});
    } else if (line == "pad") {
      file.entries.push_back({kPaddedTile, line_no});
    } else {
      std::uint32_t m = 0, n = 0;
      if (!scan_pair(line, 0, m, n))
        throw InputError(where + "expected a tile 'm n' or 'm,n' (non-negative integers), 'exit', 'pad', or a " +
                         "first-line 'grid M N'; got '" + line + "'");
      file.entries.push_back({{m, n}, line_no});
    }
    first_entry = false;
  }
  return file;
}

std::vector<TileCoord> order_file_sequence(const OrderFile& file, std::uint32_t grid_m, std::uint32_t grid_n) {
  if (file.grid_m && (*file.grid_m != grid_m || *file.grid_n != grid_n))
    throw InputError(file.name + ":" + std::to_string(file.grid_line) + ": the order is for a " +
                     grid_text(*file.grid_m, *file.grid_n) + " tile grid but the workload's tile grid is " +
                     grid_text(grid_m, grid_n));
  // seen[m * grid_n + n] = line of the tile's first occurrence, 0 while unseen.
  std::vector<std::size_t> seen(static_cast<std::size_t>(grid_m) * grid_n, 0);
  std::vector<TileCoord> out;
  out.reserve(file.entries.size());
  for (const auto& e : file.entries) {
    if (!is_tile(e.tile)) {
      out.push_back(e.tile);
      continue;
    }
    const std::string where = file.name + ":" + std::to_string(e.line) + ": ";
    if (e.tile.m >= grid_m || e.tile.n >= grid_n)
      throw InputError(where + "tile " + tile_text(e.tile.m, e.tile.n) + " is outside the " +
                       grid_text(grid_m, grid_n) + " tile grid (expected m < " + std::to_string(grid_m) +
                       " and n < " + std::to_string(grid_n) + ")");
    std::size_t& first = seen[static_cast<std::size_t>(e.tile.m) * grid_n + e.tile.n];
    if (first != 0)
      throw InputError(where + "tile " + tile_text(e.tile.m, e.tile.n) + " repeats line " + std::to_string(first) +
                       " (expected every tile exactly once)");
    first = e.line;
    out.push_back(e.tile);
  }
  std::size_t missing = 0;
  std::size_t first_missing = 0;
  for (std::size_t i = seen.size(); i-- > 0;)
    if (seen[i] == 0) {
      ++missing;
      first_missing = i;
    }
  if (missing > 0) {
    const auto m = static_cast<std::uint32_t>(first_missing / grid_n);
    const auto n = static_cast<std::uint32_t>(first_missing % grid_n);
    throw InputError(file.name + ": " + std::to_string(missing) + " tile(s) of the " + grid_text(grid_m, grid_n) +
                     " grid missing, the first " + tile_text(m, n) + " (expected every tile exactly once)");
  }
  return out;
}

void write_order_file(const std::vector<TileCoord>& order, std::uint32_t grid_m, std::uint32_t grid_n,
                      std::ostream& out) {
  out << "# tilesim launch order: one tile 'm n' per line in dispatch order; 'exit' = early-exit block, "
         "'pad' = work on a tile outside the problem\n";
  out << "grid " << grid_m << ' ' << grid_n << '\n';
  for (const auto& t : order) {
    if (t == kEarlyExit || t == kPaddedTile) {
      out << (t == kEarlyExit ? "exit\n" : "pad\n");
      continue;
    }
    if (t.m >= grid_m || t.n >= grid_n)
      throw std::invalid_argument("write_order_file: tile " + tile_text(t.m, t.n) + " is outside the " +
                                  grid_text(grid_m, grid_n) + " grid");
    out << t.m << ' ' << t.n << '\n';
  }
}

}  // namespace tilesim
