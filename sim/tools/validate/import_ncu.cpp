// `tilesim import ncu` (import_ncu.hpp): an experiment per measured GEMM kernel.
#include "sim/tools/validate/import_ncu.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "common/types.hpp"

namespace tilesim {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::uint32_t to_u32(const std::string& s) { return static_cast<std::uint32_t>(std::stoul(s)); }

// The first `n` bytes of `s` as printable ASCII ('?' for anything else): a kernel name quoted in
// a message or a description is never cut inside a multi-byte character.
std::string ascii(const std::string& s, std::size_t n) {
  std::string out;
  for (char ch : s.substr(0, n)) out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
  return out;
}

using Dims = std::array<std::uint32_t, 3>;

// MxNxK in a case name (gemm_128x14336x4096_row).
std::optional<std::array<std::uint32_t, 3>> shape_in(const std::string& name) {
  static const std::regex re(R"((?:^|[^0-9])([0-9]{1,7})x([0-9]{1,7})x([0-9]{1,7})(?:[^0-9x]|$))");
  std::smatch m;
  if (!std::regex_search(name, m, re)) return std::nullopt;
  return std::array<std::uint32_t, 3>{to_u32(m[1]), to_u32(m[2]), to_u32(m[3])};
}

// A tile and pipeline depth in a library kernel's name: CUTLASS 2 `..._128x128_32x3_...`,
// cuBLAS `nvjet_..._128x256_64x4_...` (BMxBN_BKxSTAGES), CUTLASS 3 `..._128x256x64_...`.
struct TileGuess {
  std::array<std::uint32_t, 3> tile;
  std::optional<std::uint32_t> stages;
};
// A demangled CUTLASS 3 name spells its tile as cute::tuple<cute::C<128>, cute::C<128>, cute::C<64>>
// (read first: the same name also holds MMA atom shapes such as MMA_64x128x16, never a tile).
std::optional<TileGuess> tile_in(const std::string& kernel) {
  static const std::regex cute(R"(C<([0-9]{2,3})>\s*,\s*(?:cute::)?C<([0-9]{2,3})>\s*,\s*(?:cute::)?C<([0-9]{2,3})>)");
  static const std::regex two(R"((?:^|_)([0-9]{2,3})x([0-9]{2,3})_([0-9]{2,3})x([0-9])(?:_|$))");
  static const std::regex three(R"((?:^|_)([0-9]{2,3})x([0-9]{2,3})x([0-9]{2,3})(?:_|$))");
  std::smatch m;
  if (std::regex_search(kernel, m, cute)) return TileGuess{{to_u32(m[1]), to_u32(m[2]), to_u32(m[3])}, std::nullopt};
  if (std::regex_search(kernel, m, two)) return TileGuess{{to_u32(m[1]), to_u32(m[2]), to_u32(m[3])}, to_u32(m[4])};
  for (auto it = std::sregex_iterator(kernel.begin(), kernel.end(), three); it != std::sregex_iterator(); ++it) {
    const auto at = static_cast<std::size_t>(it->position(0));
    if (at >= 3 && kernel.compare(at - 3, 3, "MMA") == 0) continue;  // "MMA_64x128x16_": an MMA atom
    const std::smatch& x = *it;
    return TileGuess{{to_u32(x[1]), to_u32(x[2]), to_u32(x[3])}, std::nullopt};
  }
  return std::nullopt;
}

// cuBLAS's Hopper kernels, `nvjet_[sm90_]<types>_{TM}x{TN}_{BK}x{STAGES}_{CM}x{CN}_{h|v}_<x>
// [_coopA|_coopB][_splitK]_{opA}{opB}{frame}` (docs/validation.md, "cuBLAS"): persistent,
// TMA-fed and warp-specialised. Their tile's first extent runs along the user's N (cuBLAS's M:
// the row-major C = A B is cuBLAS's column-major C^T = B^T A^T); opA and opB say whether B and A
// are transposed for cuBLAS, so N, N is row-major A and B; the frame letter says which extent is
// wgmma's M: the first (T: the kernel runs in cuBLAS's frame) or the second (N: in the user's).
// Described with CUTLASS 3's scheduler, less the clusters its rounding to whole swizzle bands
// adds (the kernels show no such cost).
struct Nvjet {
  std::uint32_t tm, tn, bk, stages, cm, cn;
  bool raster_h, split_k;
  std::string coop;  // "", "A" or "B"
  char op_b, op_a, frame;
};
std::optional<Nvjet> nvjet_in(const std::string& kernel) {
  static const std::regex re(
      R"(^nvjet_(?:sm[0-9]+_)?[a-z0-9]+_([0-9]{1,4})x([0-9]{1,4})_([0-9]{1,4})x([0-9]{1,2})_([0-9]{1,2})x([0-9]{1,2})_([hv])_[a-z0-9]+(?:_coop([AB]))?(_splitK)?_([NT])([NT])([NT])$)");
  std::smatch m;
  if (!std::regex_match(kernel, m, re)) return std::nullopt;
  const Nvjet nv{to_u32(m[1]), to_u32(m[2]), to_u32(m[3]), to_u32(m[4]), to_u32(m[5]), to_u32(m[6]),
                 m[7] == "h", m[9].matched, m[8].str(), m[10].str()[0], m[11].str()[0], m[12].str()[0]};
  // A name with a zero extent is no kernel cuBLAS launches: read as any other name.
  if (!nv.tm || !nv.tn || !nv.bk || !nv.stages || !nv.cm || !nv.cn) return std::nullopt;
  return nv;
}

// The swizzle an nvjet kernel is described with (its name does not say): the widest band, up to
// CUTLASS's 8 and no wider than CUTLASS's rule for the grid's smaller side allows, whose
// rounding to whole bands adds at most a quarter of the grid of tiles_m x tiles_n. Inferred from
// cuBLAS's measured DRAM reads (bands at M = 8192) and durations (no padded tiles at M = 128, 512).
std::uint32_t nvjet_swizzle(std::uint64_t tiles_m, std::uint64_t tiles_n, const std::array<std::uint32_t, 2>& cluster) {
  const std::uint64_t cta_m = round_up<std::uint64_t>(tiles_m, cluster[0]), cta_n = round_up<std::uint64_t>(tiles_n, cluster[1]);
  for (const auto& [band, least_side] : {std::pair<std::uint64_t, std::uint64_t>{8, 6}, {4, 3}, {2, 2}}) {
    if (std::min(cta_m, cta_n) < least_side) continue;
    const std::uint64_t rounded = round_up(cta_m, band * cluster[0]) * round_up(cta_n, band * cluster[1]);
    if (4 * rounded <= 5 * tiles_m * tiles_n) return static_cast<std::uint32_t>(band);
  }
  return 1;
}

// row / column / groupedG / hilbert as a token of a case name.
std::optional<std::string> order_in(const std::string& name) {
  static const std::regex re(R"((?:^|_)(row|column|col|hilbert|grouped([0-9]+))(?:_|$))");
  std::smatch m;
  if (!std::regex_search(name, m, re)) return std::nullopt;
  if (m[2].matched) return "{kind: grouped, group_m: " + m[2].str() + "}";
  return "{kind: " + std::string(m[1] == "col" ? "column" : m[1].str()) + "}";
}

// A launch metric as a count; none when absent or negative. Above 2^31 it is no launch a GPU
// makes: the case is skipped naming it (metric_problem).
std::optional<std::uint64_t> metric(const MeasuredKernel& k, const char* name) {
  const auto v = k.get(name);
  if (!v || *v < 0 || *v >= 2147483648.0) return std::nullopt;
  return static_cast<std::uint64_t>(*v + 0.5);
}

std::string metric_problem(const MeasuredKernel& k) {
  for (const char* name : {"launch__block_size", "launch__registers_per_thread", "launch__grid_size",
                           "launch__shared_mem_per_block_dynamic", "launch__shared_mem_per_block_static"})
    if (const auto v = k.get(name); v && (*v >= 2147483648.0 || !(*v == *v)))
      return std::string(name) + " = " + std::to_string(*v) + " is no launch a GPU makes";
  return "";
}

std::string dims_text(const std::array<std::uint32_t, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// --shape, else an MxNxK in the case name (a guess, noted).
std::optional<Dims> case_shape(const MeasuredCase& c, const ImportOptions& o, std::vector<std::string>& guessed) {
  auto shape = o.shape;
  if (!shape && (shape = shape_in(c.name))) guessed.push_back("shape " + dims_text(*shape) + " from the case name");
  return shape;
}

// --tile, else the kernel name's tile; --stages, else the stages the kernel name gives with its
// tile (guesses, noted).
std::optional<Dims> case_tile(const MeasuredKernel& k, const ImportOptions& o, std::optional<std::uint32_t>& stages,
                              std::vector<std::string>& guessed) {
  auto tile = o.tile;
  stages = o.stages;
  if (!tile) {
    if (const auto g = tile_in(k.name)) {
      tile = g->tile;
      if (!stages) stages = g->stages;
      guessed.push_back("tile " + dims_text(*tile) + (g->stages ? " and " + std::to_string(*g->stages) + " stages" : "") +
                        " from the kernel name");
    }
  }
  return tile;
}

// --order, else a row/column/groupedG/hilbert token of the case name, else row (noted either way).
std::string case_order(const MeasuredCase& c, const ImportOptions& o, std::vector<std::string>& guessed) {
  std::string order = o.order;
  if (order.empty()) {
    if (const auto g = order_in(c.name)) {
      order = *g;
      guessed.push_back("order " + order + " from the case name");
    } else {
      order = "{kind: row}";
      guessed.push_back("order {kind: row} assumed (give --order)");
    }
  }
  return order;
}

// The workload: the shape and tile, and the launch as measured (threads, registers, shared
// memory) where the page has it, so the simulated kernel has the measured one's occupancy.
YAML::Node measured_workload(const MeasuredKernel& k, const Dims& shape, const Dims& tile,
                             std::optional<std::uint32_t> stages, const std::string& dtype) {
  YAML::Node w;
  w["kind"] = "gemm";
  w["m"] = shape[0];
  w["n"] = shape[1];
  w["k"] = shape[2];
  w["dtype"] = dtype;
  YAML::Node t;
  for (std::uint32_t v : tile) t.push_back(v);
  t.SetStyle(YAML::EmitterStyle::Flow);
  w["tile"] = t;
  if (stages) w["stages"] = *stages;
  if (const auto v = metric(k, "launch__block_size")) w["threads"] = *v;
  if (const auto v = metric(k, "launch__registers_per_thread")) w["registers_per_thread"] = *v;
  const auto dyn = metric(k, "launch__shared_mem_per_block_dynamic");
  const auto stat = metric(k, "launch__shared_mem_per_block_static");
  if (dyn || stat) w["shared_memory_bytes"] = dyn.value_or(0) + stat.value_or(0);
  return w;
}

// An nvjet kernel's workload and order for the user's M x N x K (`shape`), in the kernel's own
// frame (see Nvjet), or the reason it has none.
struct NvjetDescription {
  YAML::Node workload;
  std::string order, skipped;
};
NvjetDescription nvjet_description(const MeasuredKernel& k, const Nvjet& nv, const Dims& shape, const std::string& dtype) {
  NvjetDescription d;
  const auto flip = [](const char* l) { return std::string(l) == "row" ? "col" : "row"; };
  const char* a = nv.op_a == 'N' ? "row" : "col";  // the user's A and B as stored
  const char* b = nv.op_b == 'N' ? "row" : "col";
  const bool own_frame = nv.frame == 'T';  // wgmma's M along the user's N: C^T = B^T A^T
  const Dims dims = own_frame ? Dims{shape[1], shape[0], shape[2]} : shape;
  const std::array<std::uint32_t, 2> tile = own_frame ? std::array{nv.tm, nv.tn} : std::array{nv.tn, nv.tm};
  const std::array<std::uint32_t, 2> cluster = own_frame ? std::array{nv.cm, nv.cn} : std::array{nv.cn, nv.cm};
  d.workload = measured_workload(k, dims, {tile[0], tile[1], nv.bk}, nv.stages, dtype);
  YAML::Node layout;
  layout["a"] = own_frame ? flip(b) : a;
  layout["b"] = own_frame ? flip(a) : b;
  layout["c"] = own_frame ? "col" : "row";
  layout.SetStyle(YAML::EmitterStyle::Flow);
  d.workload["layout"] = layout;
  d.workload["schedule"] = nv.coop == "A" ? "cooperative" : nv.coop == "B" ? "cooperative_columns" : "pingpong";
  const std::uint64_t tiles_m = ceil_div<std::uint64_t>(dims[0], tile[0]), tiles_n = ceil_div<std::uint64_t>(dims[1], tile[1]);
  const std::uint64_t slots = round_up<std::uint64_t>(tiles_m, cluster[0]) * round_up<std::uint64_t>(tiles_n, cluster[1]);
  const std::uint64_t grid = metric(k, "launch__grid_size").value_or(slots);
  if (nv.split_k) {
    // The grid is the clusters' tiles times the K slices, whose partials a second kernel sums.
    if (grid % slots || grid / slots < 2) {
      d.skipped = "a cuBLAS split-K kernel whose grid (" + std::to_string(grid) + ") is not a multiple of its " +
                  std::to_string(slots) + " tiles: a persistent split-K, which tilesim does not describe";
      return d;
    }
    d.workload["split_k"] = grid / slots;
    d.workload["split_k_mode"] = "parallel";
  } else {
    d.workload["persistent"] = std::min(slots, grid);
  }
  // h steps along cuBLAS's N, the user's M.
  const bool along_m = own_frame != nv.raster_h;
  d.order = "{kind: cutlass_sm90, raster: " + std::string(along_m ? "m" : "n") +
            ", max_swizzle: " + std::to_string(nvjet_swizzle(tiles_m, tiles_n, cluster)) + ", cluster: [" +
            std::to_string(cluster[0]) + ", " + std::to_string(cluster[1]) + "], band_padding: skip}";
  return d;
}

// The experiment file: the workload and order under the case's name, the cold L2 Nsight Compute
// measures with, a validate section naming the case, then the user's --set overrides.
std::string experiment_yaml(const MeasuredCase& c, const MeasuredKernel& k, const ImportOptions& o,
                            const std::string& arch, const YAML::Node& w, const std::string& order) {
  YAML::Node root;
  root["name"] = c.name;
  root["description"] = "imported from Nsight Compute: " + ascii(k.name, 120);
  root["arch"] = arch;
  root["workload"] = w;
  try {
    root["order"] = YAML::Load(order);
  } catch (const YAML::Exception& e) {
    throw InputError("--order: not YAML: " + std::string(e.what()) + " (expected e.g. '{kind: grouped, group_m: 8}')");
  }
  root["sim"] = YAML::Load("{cold_l2: kernel}");  // Nsight Compute flushes the caches before each kernel
  YAML::Node v;
  v["case"] = c.name;
  v["family"] = o.family;
  v.SetStyle(YAML::EmitterStyle::Flow);
  root["validate"] = v;
  for (const std::string& s : o.overrides) apply_override(root, s);
  return yaml_document(root);
}

ImportedCase import_case(const MeasuredCase& c, const ImportOptions& o) {
  ImportedCase out{c.name, "", "", {}};
  // cuBLAS's split-K: its kernel and the reduction of its partials, described together.
  const auto first = c.kernels.empty() ? std::nullopt : nvjet_in(c.kernels[0].name);
  const bool cublas_split_k = c.kernels.size() == 2 && first && first->split_k &&
                              c.kernels[1].name.find("splitKreduce") != std::string::npos;
  if (c.kernels.size() != 1 && !cublas_split_k) {
    out.skipped = std::to_string(c.kernels.size()) + " kernels (a chain or a split-K reduction): write its experiment " +
                  "by hand (docs/configuration.md)";
    return out;
  }
  const MeasuredKernel& k = c.kernels[0];
  if (const std::string bad = metric_problem(k); !bad.empty()) {
    out.skipped = bad;
    return out;
  }
  std::string arch = o.arch;
  if (arch.empty() && c.device) arch = arch_for_device(c.device->name);
  if (arch.empty()) {
    out.skipped = "the device" + (c.device ? " '" + c.device->name + "'" : std::string()) + " has no preset: give --arch";
    return out;
  }
  const auto shape = case_shape(c, o, out.guessed);
  if (!shape) {
    out.skipped = "no shape: give --shape MxNxK (the case name has no MxNxK)";
    return out;
  }
  if (const auto nv = o.tile ? std::nullopt : first) {
    const NvjetDescription d = nvjet_description(k, *nv, *shape, o.dtype);
    if (!d.skipped.empty()) {
      out.skipped = d.skipped;
      return out;
    }
    out.guessed.push_back("a cuBLAS kernel: tile, stages, cluster, raster, schedule, frame and split-K from its name, A "
                          "and B as cuBLAS's op letters say (N: row-major), the swizzle inferred (docs/validation.md, cuBLAS)");
    out.yaml = experiment_yaml(c, k, o, arch, d.workload, o.order.empty() ? d.order : o.order);
    return out;
  }
  std::optional<std::uint32_t> stages;
  const auto tile = case_tile(k, o, stages, out.guessed);
  if (!tile) {
    out.skipped = "no tile: give --tile BMxBNxBK (the kernel name '" + ascii(k.name, 60) + "' does not say)";
    return out;
  }
  const std::string order = case_order(c, o, out.guessed);
  const std::uint64_t tiles = (std::uint64_t{(*shape)[0]} + (*tile)[0] - 1) / (*tile)[0] *
                              ((std::uint64_t{(*shape)[1]} + (*tile)[1] - 1) / (*tile)[1]);
  if (const auto grid = metric(k, "launch__grid_size"); grid && *grid != tiles)
    out.guessed.push_back("launch grid " + std::to_string(*grid) + " is not the " + std::to_string(tiles) +
                          " tiles of the shape and tile (a persistent or split-K kernel, or a wrong tile?)");
  out.yaml = experiment_yaml(c, k, o, arch, measured_workload(k, *shape, *tile, stages, o.dtype), order);
  return out;
}

}  // namespace

std::array<std::uint32_t, 3> parse_dims(const std::string& text, const std::string& what) {
  static const std::regex re(R"(([0-9]{1,7})x([0-9]{1,7})x([0-9]{1,7}))");
  std::smatch m;
  if (!std::regex_match(text, m, re) || to_u32(m[1]) == 0 || to_u32(m[2]) == 0 || to_u32(m[3]) == 0)
    throw InputError(what + ": expected three positive integers as AxBxC, got '" + text + "'");
  return {to_u32(m[1]), to_u32(m[2]), to_u32(m[3])};
}

std::string arch_for_device(const std::string& device_name) {
  const std::string d = lower(device_name);
  if (d.find("h200") != std::string::npos) return "h200";
  if (d.find("h100") != std::string::npos) return "h100";
  if (d.find("a100") != std::string::npos) return "a100";
  if (d.find("a40") != std::string::npos) return "a40";
  if (d.find("4090") != std::string::npos) return "rtx4090";
  if (d.find("3050") != std::string::npos && d.find("laptop") != std::string::npos) return "rtx3050-laptop";
  return "";
}

std::vector<std::string> experiment_file_names(const std::vector<std::string>& cases) {
  std::vector<std::string> out;
  std::map<std::string, std::size_t> seen;
  for (const std::string& c : cases) {
    std::string stem;
    for (char ch : c) stem += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.' ? ch : '_';
    if (stem.empty() || stem[0] == '.') stem = "case" + stem;
    const std::size_t n = ++seen[stem];
    out.push_back(n == 1 ? stem + ".yaml" : stem + "_" + std::to_string(n) + ".yaml");
  }
  return out;
}

std::vector<ImportedCase> import_ncu(const std::map<std::string, MeasuredCase>& cases, const ImportOptions& options) {
  std::vector<ImportedCase> out;
  for (const auto& [name, c] : cases) out.push_back(import_case(c, options));
  return out;
}

}  // namespace tilesim
