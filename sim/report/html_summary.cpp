// Reading a sweep's summary.json for the HTML report, with one-line errors that say what is
// wrong and where: the page's script trusts the fields checked here and does not re-check them.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/files.hpp"
#include "sim/report/html.hpp"

namespace tilesim {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Walks a summary, naming each field by its path (points[3].result.total.duration_ns) so that
/// an error says exactly which one is missing or mistyped.
class Checker {
 public:
  explicit Checker(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(source_ + ": " + path + ": " + what);
  }

  const json& field(const json& obj, const std::string& path, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(join(path, key), "missing");
    return *it;
  }
  const json& object(const json& obj, const std::string& path, const char* key) const {
    return typed(obj, path, key, json::value_t::object, "an object");
  }
  const json& array(const json& obj, const std::string& path, const char* key) const {
    return typed(obj, path, key, json::value_t::array, "an array");
  }
  void string(const json& obj, const std::string& path, const char* key) const {
    typed(obj, path, key, json::value_t::string, "a string");
  }
  void number(const json& obj, const std::string& path, const char* key, bool nullable = false) const {
    const json& v = field(obj, path, key);
    if (!v.is_number() && !(nullable && v.is_null()))
      fail(join(path, key), std::string("expected a number") + (nullable ? " or null" : "") + ", got " + v.type_name());
  }
  /// An index into an array of `size`, or null when `nullable`.
  void index(const json& obj, const std::string& path, const char* key, std::size_t size, bool nullable = false) const {
    const json& v = field(obj, path, key);
    if (nullable && v.is_null()) return;
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() >= size)
      fail(join(path, key), "expected a point index below " + std::to_string(size) + (nullable ? " or null" : "") +
                                ", got " + v.dump());
  }
  void strings(const json& obj, const std::string& path, const char* key) const {
    const json& a = array(obj, path, key);
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!a[i].is_string()) fail(join(path, key) + "[" + std::to_string(i) + "]", std::string("expected a string, got ") + a[i].type_name());
  }

  static std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
  static std::string at(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

 private:
  const json& typed(const json& obj, const std::string& path, const char* key, json::value_t type, const char* name) const {
    const json& v = field(obj, path, key);
    if (v.type() != type) fail(join(path, key), std::string("expected ") + name + ", got " + v.type_name());
    return v;
  }

  std::string source_;
};

void check_result(const Checker& c, const json& result, const std::string& path) {
  const json& total = c.object(result, path, "total");
  const std::string tp = path + ".total";
  c.number(total, tp, "duration_ns");
  c.number(total, tp, "l2_hit_rate");
  c.number(total, tp, "dram_read_bytes");
  c.number(total, tp, "dram_write_bytes");
  if (total.contains("dram_over_bound")) c.number(total, tp, "dram_over_bound", true);
  if (total.contains("bounds")) {
    const json& b = c.object(total, tp, "bounds");
    c.number(b, tp + ".bounds", "compulsory_bytes");
    c.number(b, tp + ".bounds", "io_bound_bytes");
  }
  const json& kernels = c.array(result, path, "kernels");
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const std::string kp = Checker::at(path + ".kernels", k);
    if (!kernels[k].is_object()) c.fail(kp, "expected an object");
    c.string(kernels[k], kp, "name");
    for (const char* key : {"waves", "last_wave_utilization", "tail_lost_ns", "duration_ns"}) c.number(kernels[k], kp, key);
    const json& waves = c.array(kernels[k], kp, "waves_detail");
    for (std::size_t w = 0; w < waves.size(); ++w) {
      const std::string wp = Checker::at(kp + ".waves_detail", w);
      if (!waves[w].is_object()) c.fail(wp, "expected an object");
      for (const char* key : {"index", "start_ns", "end_ns", "blocks"}) c.number(waves[w], wp, key);
    }
  }
}

void check_point(const Checker& c, const json& p, std::size_t i, std::size_t n) {
  const std::string path = Checker::at("points", i);
  if (!p.is_object()) c.fail(path, "expected an object");
  const json& index = c.field(p, path, "index");
  if (!index.is_number_unsigned() || index.get<std::uint64_t>() != i)
    c.fail(path + ".index", "expected " + std::to_string(i) + " (points are in sweep index order), got " + index.dump());
  c.string(p, path, "label");
  const json& axes = c.object(p, path, "axes");
  for (const auto& [key, value] : axes.items())
    if (!value.is_string()) c.fail(path + ".axes." + key, std::string("expected a string, got ") + value.type_name());
  c.object(p, path, "config");
  check_result(c, c.object(p, path, "result"), path + ".result");
  const auto cmp = p.find("comparison");
  if (cmp == p.end() || cmp->is_null()) return;
  const std::string cp = path + ".comparison";
  if (!cmp->is_object()) c.fail(cp, std::string("expected an object or null, got ") + cmp->type_name());
  c.string(*cmp, cp, "group");
  c.string(*cmp, cp, "compared");
  c.index(*cmp, cp, "baseline", n, true);
  c.number(*cmp, cp, "speedup", true);
  c.number(*cmp, cp, "dram_ratio", true);
  c.number(*cmp, cp, "rank");
}

std::size_t count_lines(const fs::path& p) {
  const std::string text = read_text_file(p.string());
  std::size_t lines = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n' || i + 1 == text.size()) ++lines;  // a last line without '\n' counts
  return lines;
}

/// "line L, column C (byte B)" of the 1-based byte offset nlohmann reports.
std::string position(const std::string& text, std::size_t byte) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col) + " (byte " + std::to_string(byte) + ")";
}

}  // namespace

void check_sweep_summary(const json& s, const std::string& source) {
  const Checker c(source);
  if (!s.is_object()) c.fail("(top level)", std::string("expected an object, got ") + s.type_name());
  c.string(s, "", "experiment");
  c.string(s, "", "tilesim_version");
  const json& axes = c.array(s, "", "axes");
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const std::string ap = Checker::at("axes", a);
    if (!axes[a].is_object()) c.fail(ap, "expected an object");
    c.strings(axes[a], ap, "keys");
    c.strings(axes[a], ap, "labels");
  }
  const json& compare = c.field(s, "", "compare");
  if (!compare.is_null()) {
    if (!compare.is_object()) c.fail("compare", std::string("expected an object or null, got ") + compare.type_name());
    c.strings(compare, "compare", "keys");
    const json& base = c.field(compare, "compare", "baseline");
    if (!base.is_null() && !base.is_string()) c.fail("compare.baseline", std::string("expected a string or null, got ") + base.type_name());
  }
  const json& points = c.array(s, "", "points");
  for (std::size_t i = 0; i < points.size(); ++i) check_point(c, points[i], i, points.size());
  const json& groups = c.array(s, "", "groups");
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::string gp = Checker::at("groups", g);
    if (!groups[g].is_object()) c.fail(gp, "expected an object");
    c.string(groups[g], gp, "label");
    c.index(groups[g], gp, "baseline", points.size(), true);
    const json& members = c.array(groups[g], gp, "points");
    for (std::size_t m = 0; m < members.size(); ++m)
      if (!members[m].is_number_unsigned() || members[m].get<std::uint64_t>() >= points.size())
        c.fail(Checker::at(gp + ".points", m), "expected a point index below " + std::to_string(points.size()) + ", got " + members[m].dump());
  }
}

json load_sweep_summary(const std::string& path) {
  const fs::path p(path);
  if (!fs::exists(p)) throw InputError(path + ": no such folder or file (expected the OUTDIR of `tilesim run SWEEP.yaml -o OUTDIR`, or its summary.json)");
  fs::path file = p;
  if (fs::is_directory(p)) {
    file = p / "summary.json";
    if (!fs::exists(file)) {
      const fs::path results = p / "results.jsonl";
      if (!fs::exists(results))
        throw InputError(path + ": neither summary.json nor results.jsonl here; not the output folder of `tilesim run SWEEP.yaml -o OUTDIR`");
      throw InputError(file.string() + ": missing: the sweep has not finished (results.jsonl has " +
                       std::to_string(count_lines(results)) +
                       " points so far); run the same `tilesim run` command again to finish it, then report");
    }
  }
  const std::string text = read_text_file(file.string());
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw InputError(file.string() + ": empty file");
  json s;
  try {
    s = json::parse(text);
  } catch (const json::parse_error& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line 3, column 7: syntax
    // error ..."; keep the reason after the position, which we state ourselves.
    std::string why = e.what();
    const auto col = why.find("column ");
    const auto colon = col == std::string::npos ? std::string::npos : why.find(": ", col);
    if (colon != std::string::npos) why = why.substr(colon + 2);
    throw InputError(file.string() + ": malformed JSON at " + position(text, e.byte) + ": " + why);
  } catch (const json::out_of_range& e) {
    // A number too large for a double (found by fuzz_summary_json: 2e62144).
    std::string why = e.what();
    if (const auto p = why.find("] "); p != std::string::npos) why = why.substr(p + 2);
    throw InputError(file.string() + ": malformed JSON: " + why);
  }
  check_sweep_summary(s, file.string());
  return s;
}

}  // namespace tilesim
