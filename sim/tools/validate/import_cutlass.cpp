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

CutlassImport import_row(const std::map<std::string, std::string>& r, const std::string& arch, const std::string& where) {
  CutlassImport out;
  const auto get = [&](const char* key) -> std::string {
    const auto it = r.find(key);
    return it == r.end() ? "" : it->second;
  };
  const auto num = [&](const char* key, std::uint64_t dflt) -> std::uint64_t {
    const std::string v = get(key);
    if (v.empty()) return dflt;
    if (v.find_first_not_of("0123456789") != std::string::npos || v.size() > 9)
      throw InputError(where + ": column " + key + ": expected a non-negative integer, got '" + v + "'");
    return std::stoull(v);
  };
  const std::string op = get("Operation");
  out.case_name = sanitized(op + "_" + get("m") + "x" + get("n") + "x" + get("k"));
  // The profiler sweeps raster orders, swizzles and split-K slices over one kernel: each a case.
  if (!get("raster_order").empty()) out.case_name += "_" + sanitized(get("raster_order"));
  if (!get("swizzle_size").empty()) out.case_name += "_swizzle" + sanitized(get("swizzle_size"));
  if (!get("split_k_slices").empty() && get("split_k_slices") != "1") out.case_name += "_splitk" + sanitized(get("split_k_slices"));
  if (get("OperationKind") != "gemm") {
    out.skipped = "operation kind '" + sanitized(get("OperationKind")) + "' (only gemm is imported)";
    return out;
  }
  if (get("Status") != "success") {
    out.skipped = "status '" + sanitized(get("Status")) + "'";
    return out;
  }
  const std::uint64_t m = num("m", 0), n = num("n", 0), k = num("k", 0);
  const std::uint64_t bm = num("cta_m", 0), bn = num("cta_n", 0), bk = num("cta_k", 0);
  if (!m || !n || !k || !bm || !bn || !bk) {
    out.skipped = "no m, n, k or cta_m/n/k";
    return out;
  }
  const std::string runtime = get("Runtime");
  char* end = nullptr;
  const double ms = runtime.empty() ? 0 : std::strtod(runtime.c_str(), &end);
  if (runtime.empty() || *end || !(ms > 0) || !std::isfinite(ms))
    throw InputError(where + ": column Runtime: expected a positive time in ms, got '" + runtime + "'");
  out.runtime_us = ms * 1e3;
  const auto [a_type, a_layout] = operand(get("A"));
  const auto [b_type, b_layout] = operand(get("B"));
  const auto c_layout = operand(get("C")).second;
  const bool sm90 = op.find("sm90") != std::string::npos;

  YAML::Node w;
  w["kind"] = "gemm";
  w["m"] = m;
  w["n"] = n;
  w["k"] = k;
  w["dtype"] = a_type;
  YAML::Node lay;
  lay["a"] = a_layout;
  lay["b"] = b_layout;
  lay["c"] = c_layout;
  lay.SetStyle(YAML::EmitterStyle::Flow);
  w["layout"] = lay;
  YAML::Node tile;
  for (std::uint64_t v : {bm, bn, bk}) tile.push_back(v);
  tile.SetStyle(YAML::EmitterStyle::Flow);
  w["tile"] = tile;
  if (const std::uint64_t s = num("stages", 0)) w["stages"] = s;
  if (const std::uint64_t s = num("split_k_slices", 1); s > 1) w["split_k"] = s;
  YAML::Node order;
  if (sm90) {
    // CUTLASS 3: a warp-specialised persistent kernel (pingpong when the name says so).
    w["schedule"] = op.find("pingpong") != std::string::npos ? "pingpong" : "cooperative";
    const std::uint64_t cm = num("cluster_m", 1), cn = num("cluster_n", 1);
    order["kind"] = "cutlass_sm90";
    const std::string raster = get("raster_order");
    order["raster"] = raster == "along_m" ? "m" : raster == "along_n" ? "n" : "heuristic";
    order["max_swizzle"] = num("swizzle_size", 1);
    if (cm > 1 || cn > 1) {
      YAML::Node cl;
      cl.push_back(cm);
      cl.push_back(cn);
      cl.SetStyle(YAML::EmitterStyle::Flow);
      order["cluster"] = cl;
    }
  } else {
    w["mainloop"] = "mma_sync";  // CUTLASS 2 tensor-op kernels: warp-level mma.sync
    if (const std::uint64_t warps = num("warps_m", 0) * num("warps_n", 0) * num("warps_k", 1)) w["threads"] = 32 * warps;
    order["kind"] = "swizzle";   // GemmIdentityThreadblockSwizzle; the profiler's instances use log_tile 0
  }
  order.SetStyle(YAML::EmitterStyle::Flow);
  YAML::Node root;
  root["name"] = out.case_name;
  root["description"] = "imported from the CUTLASS profiler: " + op;
  root["arch"] = arch;
  root["workload"] = w;
  root["order"] = order;
  YAML::Node v;
  v["case"] = out.case_name;
  v["family"] = "cutlass_profiler";
  v.SetStyle(YAML::EmitterStyle::Flow);
  root["validate"] = v;
  out.yaml = yaml_document(root);
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
