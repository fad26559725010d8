// `tilesim import cutlass` (import_cutlass.hpp): an experiment per profiled GEMM row.
#include "sim/tools/validate/import_cutlass.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "sim/tools/validate/measured.hpp"

namespace tilesim {

namespace {

// "f16:column" -> {"fp16", "col"}; an unknown type is returned as given (the experiment's
// loader then names it).
std::pair<std::string, std::string> operand(const std::string& cell) {
  static const std::map<std::string, std::string> types = {
      {"f16", "fp16"}, {"bf16", "bf16"}, {"f32", "fp32"}, {"tf32", "tf32"}, {"e4m3", "fp8"}, {"e5m2", "fp8"}, {"s8", "int8"}};
  const auto colon = cell.find(':');
  const std::string t = cell.substr(0, colon);
  const std::string layout = colon == std::string::npos ? "" : cell.substr(colon + 1);
  const auto it = types.find(t);
  return {it == types.end() ? t : it->second, layout == "column" ? "col" : "row"};
}

// A name usable as a file name and a case: letters, digits and '_'.
std::string sanitized(const std::string& text) {
  std::string s;
  for (char c : text) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

// One row of the profiler's CSV by column name; a column the row lacks reads as empty.
class ProfilerRow {
 public:
  ProfilerRow(const std::map<std::string, std::string>& cells, const std::string& where) : cells_(cells), where_(where) {}

  std::string get(const char* key) const {
    const auto it = cells_.find(key);
    return it == cells_.end() ? "" : it->second;
  }
  // A count; `dflt` when the cell is empty, an error naming the row for anything but digits.
  std::uint64_t num(const char* key, std::uint64_t dflt) const {
    const std::string v = get(key);
    if (v.empty()) return dflt;
    if (v.find_first_not_of("0123456789") != std::string::npos || v.size() > 9)
      throw InputError(where_ + ": column " + key + ": expected a non-negative integer, got '" + v + "'");
    return std::stoull(v);
  }

 private:
  const std::map<std::string, std::string>& cells_;
  const std::string& where_;
};

// The problem and the block tile of a row; zero where the row does not give them.
struct ProfiledShape {
  std::uint64_t m = 0, n = 0, k = 0, bm = 0, bn = 0, bk = 0;
};

// The case: the operation and its shape, then each option the profiler sweeps over one kernel
// (raster order, swizzle, split-K slices), so that every profiled variant is a case of its own.
std::string case_name_of(const ProfilerRow& row) {
  std::string name = sanitized(row.get("Operation") + "_" + row.get("m") + "x" + row.get("n") + "x" + row.get("k"));
  if (!row.get("raster_order").empty()) name += "_" + sanitized(row.get("raster_order"));
  if (!row.get("swizzle_size").empty()) name += "_swizzle" + sanitized(row.get("swizzle_size"));
  if (!row.get("split_k_slices").empty() && row.get("split_k_slices") != "1") name += "_splitk" + sanitized(row.get("split_k_slices"));
  return name;
}

// The measured time: the Runtime column, in ms, as us.
double runtime_us(const ProfilerRow& row, const std::string& where) {
  const std::string runtime = row.get("Runtime");
  char* end = nullptr;
  const double ms = runtime.empty() ? 0 : std::strtod(runtime.c_str(), &end);
  if (runtime.empty() || *end || !(ms > 0) || !std::isfinite(ms))
    throw InputError(where + ": column Runtime: expected a positive time in ms, got '" + runtime + "'");
  return ms * 1e3;
}

// The workload's problem: shape, dtype, layouts, tile and the pipeline and K-split options.
YAML::Node gemm_workload(const ProfilerRow& row, const ProfiledShape& s) {
  const auto [a_type, a_layout] = operand(row.get("A"));
  const auto [b_type, b_layout] = operand(row.get("B"));
  const auto c_layout = operand(row.get("C")).second;
  YAML::Node w;
  w["kind"] = "gemm";
  w["m"] = s.m;
  w["n"] = s.n;
  w["k"] = s.k;
  w["dtype"] = a_type;
  YAML::Node lay;
  lay["a"] = a_layout;
  lay["b"] = b_layout;
  lay["c"] = c_layout;
  lay.SetStyle(YAML::EmitterStyle::Flow);
  w["layout"] = lay;
  YAML::Node tile;
  for (std::uint64_t v : {s.bm, s.bn, s.bk}) tile.push_back(v);
  tile.SetStyle(YAML::EmitterStyle::Flow);
  w["tile"] = tile;
  if (const std::uint64_t st = row.num("stages", 0)) w["stages"] = st;
  if (const std::uint64_t st = row.num("split_k_slices", 1); st > 1) {
    w["split_k"] = st;
    // Parallel split-K (GemmSplitKParallel): the partials summed by a second kernel.
    if (row.get("split_k_mode") == "parallel") w["split_k_mode"] = "parallel";
  }
  return w;
}

// The kernel generation's launch: its schedule or main loop in the workload `w`, and the order
// its tile scheduler dispatches in (returned).
YAML::Node kernel_launch(const ProfilerRow& row, const std::string& op, YAML::Node& w) {
  YAML::Node order;
  if (op.find("sm90") != std::string::npos) {
    // CUTLASS 3: a warp-specialised persistent kernel (pingpong when the name says so).
    w["schedule"] = op.find("pingpong") != std::string::npos ? "pingpong" : "cooperative";
    const std::uint64_t cm = row.num("cluster_m", 1), cn = row.num("cluster_n", 1);
    order["kind"] = "cutlass_sm90";
    const std::string raster = row.get("raster_order");
    order["raster"] = raster == "along_m" ? "m" : raster == "along_n" ? "n" : "heuristic";
    order["max_swizzle"] = row.num("swizzle_size", 1);
    if (cm > 1 || cn > 1) {
      YAML::Node cl;
      cl.push_back(cm);
      cl.push_back(cn);
      cl.SetStyle(YAML::EmitterStyle::Flow);
      order["cluster"] = cl;
    }
  } else {
    // CUTLASS 2 tensor-op kernels: warp-level mma.sync fed by cp.async copies that carry
    // .L2::128B (cutlass/arch/memory_sm80.h): a miss fetches the whole line.
    YAML::Node ml;
    ml["kind"] = "mma_sync";
    ml["l2_prefetch"] = 128;
    ml.SetStyle(YAML::EmitterStyle::Flow);
    w["mainloop"] = ml;
    if (const std::uint64_t warps = row.num("warps_m", 0) * row.num("warps_n", 0) * row.num("warps_k", 1)) w["threads"] = 32 * warps;
    order["kind"] = "swizzle";   // GemmIdentityThreadblockSwizzle; the profiler's instances use log_tile 0
  }
  order.SetStyle(YAML::EmitterStyle::Flow);
  return order;
}

// The experiment file: the workload and order under the case's name, with a validate section
// that names the case in the measured data.
std::string experiment_yaml(const std::string& case_name, const std::string& op, const std::string& arch,
                            const YAML::Node& w, const YAML::Node& order) {
  YAML::Node root;
  root["name"] = case_name;
  root["description"] = "imported from the CUTLASS profiler: " + op;
  root["arch"] = arch;
  root["workload"] = w;
  root["order"] = order;
  YAML::Node v;
  v["case"] = case_name;
  v["family"] = "cutlass_profiler";
  v.SetStyle(YAML::EmitterStyle::Flow);
  root["validate"] = v;
  return yaml_document(root);
}

CutlassImport import_row(const std::map<std::string, std::string>& r, const std::string& arch, const std::string& where) {
  const ProfilerRow row(r, where);
  CutlassImport out;
  const std::string op = row.get("Operation");
  out.case_name = case_name_of(row);
  if (row.get("OperationKind") != "gemm") {
    out.skipped = "operation kind '" + sanitized(row.get("OperationKind")) + "' (only gemm is imported)";
    return out;
  }
  if (row.get("Status") != "success") {
    out.skipped = "status '" + sanitized(row.get("Status")) + "'";
    return out;
  }
  // Braces evaluate left to right: the first bad column is the one reported.
  const ProfiledShape s{row.num("m", 0),     row.num("n", 0),     row.num("k", 0),
                        row.num("cta_m", 0), row.num("cta_n", 0), row.num("cta_k", 0)};
  if (!s.m || !s.n || !s.k || !s.bm || !s.bn || !s.bk) {
    out.skipped = "no m, n, k or cta_m/n/k";
    return out;
  }
  out.runtime_us = runtime_us(row, where);
  YAML::Node w = gemm_workload(row, s);
  const YAML::Node order = kernel_launch(row, op, w);
  out.yaml = experiment_yaml(out.case_name, op, arch, w, order);
  return out;
}

}  // namespace

std::vector<CutlassImport> import_cutlass_csv(const std::string& path, const std::string& arch) {
  check_input_file(path, kMaxTextInputBytes);
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open");
  std::string line;
  std::size_t line_no = 0;
  std::vector<std::string> header;
  std::vector<CutlassImport> out;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (header.empty()) {
      if (line.rfind("Problem,Provider,OperationKind,Operation", 0) == 0) header = split_csv_line(line);
      continue;  // the profiler's report may precede its CSV
    }
    if (line.empty()) continue;
    if (line.rfind("Problem,Provider", 0) == 0) {  // a second table (another operation) starts
      header = split_csv_line(line);
      continue;
    }
    const auto cells = split_csv_line(line);
    const std::string where = path + ":" + std::to_string(line_no);
    if (cells.size() != header.size())
      throw InputError(where + ": " + std::to_string(cells.size()) + " cells where the header has " +
                       std::to_string(header.size()));
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < cells.size(); ++i) row[header[i]] = cells[i];
    out.push_back(import_row(row, arch, where));
  }
  if (header.empty())
    throw InputError(path + ": no CUTLASS profiler CSV header (a line starting 'Problem,Provider,OperationKind,Operation')");
  return out;
}

void name_cases_uniquely(std::vector<CutlassImport>& rows) {
  std::map<std::string, std::size_t> seen;
  for (CutlassImport& r : rows) {
    const std::size_t n = ++seen[r.case_name];
    if (n == 1) continue;
    // The same kernel, shape and options profiled again (in this file or another): its own case.
    const std::string renamed = r.case_name + "_" + std::to_string(n);
    if (!r.yaml.empty()) {
      YAML::Node y = YAML::Load(r.yaml);
      y["name"] = renamed;
      y["validate"]["case"] = renamed;
      r.yaml = yaml_document(y);
    }
    r.case_name = renamed;
  }
}

std::vector<CutlassImport> import_cutlass_csvs(const std::vector<std::string>& paths, const std::string& arch) {
  std::vector<CutlassImport> rows;
  for (const std::string& p : paths)
    for (CutlassImport& r : import_cutlass_csv(p, arch)) rows.push_back(std::move(r));
  name_cases_uniquely(rows);
  return rows;
}

std::string cutlass_case_table(const std::vector<CutlassImport>& rows) {
  std::string s = "case,median_us\n";
  for (const CutlassImport& r : rows) {
    if (r.yaml.empty()) continue;
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, r.runtime_us);  // shortest round-trip form
    s += r.case_name + "," + std::string(buf, res.ptr) + "\n";
  }
  return s;
}

}  // namespace tilesim
