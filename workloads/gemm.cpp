#include "workloads/gemm.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <queue>

#include "common/error.hpp"

namespace tilesim {

namespace {

Dtype default_out(Dtype d) {
  switch (d) {
    case Dtype::fp32:
    case Dtype::tf32: return Dtype::fp32;
    case Dtype::bf16: return Dtype::bf16;
    case Dtype::fp8: return Dtype::bf16;
    case Dtype::int8: return Dtype::int32;
    default: return Dtype::fp16;
  }
}

const std::vector<std::string> kComputeDtypes{"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "w4a16"};
const std::vector<std::string> kOutDtypes{"fp32", "fp16", "bf16", "fp8", "int8", "int32"};

bool is_col(const ConfigNode& layout, std::string_view key) {
  return layout.choice_or(key, "row", {"row", "col"}) == "col";
}

}  // namespace

std::uint64_t GemmSpec::smem_bytes() const {
  std::uint64_t per_stage = (static_cast<std::uint64_t>(bm) * bk * dtype_bits(a_dtype()) +
                             static_cast<std::uint64_t>(b_rows(0, bk)) * bn * dtype_bits(b_dtype())) / 8;
  if (dtype == Dtype::w4a16) per_stage += static_cast<std::uint64_t>((bk + group_size - 1) / group_size) * bn * 2;
  return per_stage * stages;
}

namespace {

// The persistent grid of a CUTLASS 3 kernel with clusters of `size` blocks when the arch names
// its GPCs (get_max_cta_occupancy, tile_scheduler_params.h lines 56-78 at 7107b05): each full
// GPC holds as many whole clusters as fit, the SMs left over hold whole clusters too.
std::uint32_t cluster_programs(const ArchSpec& arch, std::uint32_t size) {
  const std::uint32_t sms = arch.sm.count, per_gpc = arch.sm.max_sms_per_gpc;
  if (per_gpc == 0) return sms / size * size;
  const std::uint32_t gpcs = sms < per_gpc ? 1 : sms / per_gpc;
  std::uint32_t ctas = gpcs * (per_gpc - per_gpc % size);
  const std::uint32_t rest = sms < per_gpc ? 0 : sms % per_gpc;
  ctas += rest - rest % size;
  return std::min(sms, ctas);
}

// A cluster of cm x cn tiles: powers of two, at most 16 blocks (SM90's portable limit). A grid
// that clusters do not divide is rounded up to whole clusters, as CUTLASS and cuBLAS launch it
// (the cutlass_sm90 order pads its grid; an edge cluster's blocks past the problem compute
// padded tiles). `fail` names the key it came from.
template <class Fail>
void set_cluster(GemmSpec& g, std::uint32_t cm, std::uint32_t cn, Fail fail) {
  if (cm * cn > 1 && g.split_k > 1 && !g.split_k_parallel)
    fail(std::string("clusters with serial split-K are not modelled (set split_k: 1, or split_k_mode: parallel)"));
  // A persistent program is one block of a cluster: the programs come in whole clusters.
  if (g.persistent % (cm * cn))
    fail("persistent: " + std::to_string(g.persistent) + " is not a whole number of " + std::to_string(cm * cn) +
         "-block clusters");
  g.cluster_m = cm;
  g.cluster_n = cn;
}

// A CUTLASS 3 kernel whose workload names no program count gets CUTLASS's (resident slots, or
// whole clusters per GPC).
bool programs_by_default(const GemmSpec& g, const ConfigNode& n) {
  return g.schedule != GemmSpec::Schedule::none && !n.has("persistent") && g.split_k == 1;
}

// workload.cluster: [cm, cn], checked as a shape; set_cluster checks it against the kernel.
std::array<std::uint32_t, 2> read_cluster(const ConfigNode& n) {
  const ConfigNode c = n.at("cluster");
  if (!c.is_sequence() || c.size() != 2) c.fail("expected [cluster_m, cluster_n], e.g. [2, 1]");
  std::array<std::uint32_t, 2> dims{};
  for (std::size_t i = 0; i < 2; ++i) {
    const ConfigNode e = c.element(i);
    const auto v = e.as_integer(1, 16);
    if (v & (v - 1)) e.fail("expected a power of two (1, 2, 4, 8 or 16)");
    dims[i] = static_cast<std::uint32_t>(v);
  }
  if (dims[0] * dims[1] > 16) c.fail("a cluster holds at most 16 blocks");
  return {dims[0], dims[1]};
}

// workload.stream_k: {mode, splits, reduction}, CUTLASS 3's stream-K scheduler over the
// cutlass_sm90 order's grid and raster.
void parse_stream_k(const ConfigNode& n, GemmSpec& g) {
  const ConfigNode s = n.at("stream_k");
  s.allow_keys({"mode", "splits", "reduction"});
  const std::string mode = s.choice_or("mode", "heuristic", {"heuristic", "stream_k", "split_k", "data_parallel"});
  g.stream_k.enabled = true;
  g.stream_k.mode = mode == "stream_k"   ? StreamKMode::stream_k
                    : mode == "split_k"  ? StreamKMode::split_k
                    : mode == "data_parallel" ? StreamKMode::data_parallel
                                         : StreamKMode::heuristic;
  g.stream_k.splits = static_cast<std::uint32_t>(s.integer_or("splits", 1, 1, 1024));
  // CUTLASS's can_implement: a split factor only for the heuristic and split-K decompositions.
  if (g.stream_k.splits > 1 && (mode == "stream_k" || mode == "data_parallel"))
    s.fail_key("splits", "a split factor is only meaningful with mode heuristic or split_k");
  g.stream_k.deterministic = s.choice_or("reduction", "deterministic", {"deterministic", "nondeterministic"}) == "deterministic";
  if (g.split_k > 1) n.fail_key("stream_k", "stream_k decomposes K itself: set split_k: 1 (or stream_k.mode: split_k)");
  if (g.batch > 1) n.fail_key("stream_k", "stream-K over a batch is not modelled (set batch: 1)");
  if (n.has("cluster")) n.fail_key("stream_k", "stream-K with a cluster is not modelled");
}

// workload.schedule: the kernel schedule of a warp-specialised wgmma kernel. Cooperative splits
// each tile between two consumer warpgroups: its rows (CUTLASS 3, cuBLAS's coopA kernels) or,
// as cooperative_columns, its columns (cuBLAS's coopB kernels); ping-pong gives each warpgroup
// whole tiles.
void parse_schedule(const ConfigNode& n, const ArchSpec& arch, GemmSpec& g) {
  // Stream-K runs on the cooperative kernel (CUTLASS's StreamKScheduler supports no other).
  const std::string s = n.has("schedule") ? n.choice("schedule", {"cooperative", "cooperative_columns", "pingpong"})
                                          : "cooperative";
  if (s != "cooperative" && n.has("stream_k"))
    n.fail_key("schedule", "stream_k runs with the cooperative schedule (CUTLASS's stream-K scheduler has no other)");
  const std::string key = n.has("schedule") ? "schedule" : "stream_k";
  if (!arch.compute.mainloop(MainLoop::wgmma_tma_ws).supported)
    n.fail_key(key, "CUTLASS 3 schedules run the wgmma_tma_ws main loop, which " + arch.name +
                               " does not (it runs " + arch.compute.supported_mainloops() + ")");
  g.schedule = s == "pingpong" ? GemmSpec::Schedule::pingpong : GemmSpec::Schedule::cooperative;
  // wgmma takes 64 rows a warpgroup (bm is its M) and any multiple of 8 columns (bn, its N).
  const std::uint32_t rows = s == "cooperative" ? 128 : 64;
  if (g.bm % rows)
    n.at("tile").element(0).fail("the " + s + " schedule needs bm a multiple of " + std::to_string(rows) + ", got " +
                                 std::to_string(g.bm));
  if (s == "cooperative_columns" && g.bn % 16)
    n.at("tile").element(1).fail("the cooperative_columns schedule splits bn between two warpgroups: it needs bn a "
                                 "multiple of 16, got " + std::to_string(g.bn));
}

// The problem and its operands: sizes, dtypes and layouts.
void parse_operands(const ConfigNode& n, const ArchSpec& arch, GemmSpec& g) {
  constexpr std::int64_t kMaxDim = 1 << 22;
  g.m = static_cast<std::uint32_t>(n.integer("m", 1, kMaxDim));
  g.n = static_cast<std::uint32_t>(n.integer("n", 1, kMaxDim));
  g.k = static_cast<std::uint32_t>(n.integer("k", 1, kMaxDim));
  g.batch = static_cast<std::uint32_t>(n.integer_or("batch", 1, 1, 65535));
  g.dtype = *dtype_from_name(n.choice_or("dtype", "fp16", kComputeDtypes));
  if (!arch.supports(g.dtype)) n.fail_key("dtype", "dtype " + std::string(dtype_name(g.dtype)) + " is not supported by arch " + arch.name);
  g.out_dtype = n.has("out_dtype") ? *dtype_from_name(n.choice("out_dtype", kOutDtypes)) : default_out(g.dtype);
  if (auto layout = n.find("layout")) {
    layout->allow_keys({"a", "b", "c"});
    g.a_col_major = is_col(*layout, "a");
    g.b_col_major = is_col(*layout, "b");
    g.c_col_major = is_col(*layout, "c");
  }
}

// The tile, its pipeline depth and the K split, then the tile checked against the MMA shape and
// the problem, and the K split against the tile.
void parse_tile(const ConfigNode& n, const ArchSpec& arch, GemmSpec& g) {
  const auto tile = n.integer_list("tile", 3, 1, 4096);
  g.bm = static_cast<std::uint32_t>(tile[0]);
  g.bn = static_cast<std::uint32_t>(tile[1]);
  g.bk = static_cast<std::uint32_t>(tile[2]);
  g.stages = static_cast<std::uint32_t>(n.integer_or("stages", 3, 1, 16));
  g.split_k = static_cast<std::uint32_t>(n.integer_or("split_k", 1, 1, 1024));
  if (n.has("split_k_mode")) {
    g.split_k_parallel = n.choice("split_k_mode", {"serial", "parallel"}) == "parallel";
    if (g.split_k == 1) n.fail_key("split_k_mode", "applies with split_k > 1");
  }
  g.group_size = static_cast<std::uint32_t>(n.integer_or("group_size", 128, 1, 1 << 16));
  if (n.has("group_size") && g.dtype != Dtype::w4a16) n.fail_key("group_size", "only meaningful with dtype w4a16");
  if (n.has("weight_pack")) {
    const std::string pack = n.choice("weight_pack", {"n", "k2", "k8"});
    if (g.dtype != Dtype::w4a16) n.fail_key("weight_pack", "only meaningful with dtype w4a16");
    if (pack != "n" && g.b_col_major)
      n.fail_key("weight_pack", "packing along K changes nothing with layout b: col (K is contiguous already); use n");
    g.weight_pack_k = pack == "k8" ? 8 : pack == "k2" ? 2 : 1;
  }

  // Tile shape: multiples of the MMA instruction shape along K, sane along M and N.
  const std::uint32_t k_gran = std::max(1u, arch.compute.mma_k_bytes * 8 / dtype_bits(g.a_dtype()));
  if (g.bm % 16) n.at("tile").element(0).fail("bm must be a multiple of 16, got " + std::to_string(g.bm));
  if (g.bn % 8) n.at("tile").element(1).fail("bn must be a multiple of 8, got " + std::to_string(g.bn));
  if (g.bk % k_gran)
    n.at("tile").element(2).fail("bk must be a multiple of " + std::to_string(k_gran) + " for " +
                                 std::string(dtype_name(g.dtype)) + " MMAs, got " + std::to_string(g.bk));
  // A tile may be taller or wider than the matrix, as real kernels launch them (a 128-row tile
  // at M = 16 in decode): the rows and columns past the edge are masked, so they cost MMA time
  // but no memory traffic. Along K the tile cannot exceed K padded to the MMA granularity.
  const std::uint32_t padded_k = round_up(g.k, k_gran);
  if (g.bk > padded_k)
    n.at("tile").element(2).fail("tile bk=" + std::to_string(g.bk) + " is larger than k=" + std::to_string(g.k) +
                                 " padded to the MMA granularity (" + std::to_string(padded_k) + ")");
  if (g.dtype == Dtype::w4a16 && g.bk % g.group_size && g.group_size % g.bk)
    n.fail_key("group_size", "expected a multiple or a divisor of bk (" + std::to_string(g.bk) + ")");
  if (g.split_k > g.tiles_k()) n.fail_key("split_k", "split_k " + std::to_string(g.split_k) + " exceeds the " + std::to_string(g.tiles_k()) + " k-tiles");
  const std::uint32_t per = (g.tiles_k() + g.split_k - 1) / g.split_k;
  if ((g.split_k - 1) * per >= g.tiles_k())
    n.fail_key("split_k", "split_k " + std::to_string(g.split_k) + " leaves an empty slice of the " +
                              std::to_string(g.tiles_k()) + " k-tiles");
}

// Resources: defaults follow common CUTLASS configurations (docs/configuration.md); a CUTLASS 3
// schedule has a producer warpgroup and two consumer warpgroups, so the schedule is parsed first.
void parse_resources(const ConfigNode& n, const ArchSpec& arch, GemmSpec& g) {
  const std::uint32_t warps = g.schedule != GemmSpec::Schedule::none ? 12 : std::clamp(g.bm * g.bn / 2048u, 4u, 8u);
  g.resources.threads = static_cast<std::uint32_t>(n.integer_or("threads", warps * 32, 32, 1024));
  g.resources.regs_per_thread = static_cast<std::uint32_t>(n.integer_or("registers_per_thread", 128, 16, 255));
  g.resources.smem_bytes = n.bytes_or("shared_memory_bytes", g.smem_bytes(), 0, 1ull << 30);
  if (g.resources.smem_bytes > arch.sm.max_shared_memory_per_block)
    n.fail_key(n.has("shared_memory_bytes") ? "shared_memory_bytes" : "stages",
               "shared memory per block " + std::to_string(g.resources.smem_bytes) + " bytes (" +
                   std::to_string(g.stages) + " stages of the A and B tiles) exceeds " + arch.name + "'s limit of " +
                   std::to_string(arch.sm.max_shared_memory_per_block) + " bytes");
  if (g.resources.regs_per_thread > arch.sm.max_registers_per_thread)
    n.fail_key("registers_per_thread", "exceeds " + arch.name + "'s limit of " + std::to_string(arch.sm.max_registers_per_thread));
  g.blocks_per_sm = parse_blocks_per_sm(n, arch, g.resources, "gemm", "tile");
}

// The launch's programs: persistent (and whether its tiles overlap), the cluster, and CUTLASS
// 3's default program count, which needs the resources and the cluster.
void parse_programs(const ConfigNode& n, const ArchSpec& arch, GemmSpec& g) {
  if (n.has("persistent")) {
    if (g.split_k > 1) n.fail_key("persistent", "a persistent kernel with split_k > 1 is not modelled (set split_k: 1)");
    g.persistent = parse_persistent(n, arch, g.resources, g.blocks_per_sm, "gemm");
  }
  if (n.has("persistent_overlap")) {
    if (!n.has("persistent"))
      n.fail_key("persistent_overlap", "applies to a persistent kernel: set persistent: P (or auto)");
    g.persistent_overlap = n.boolean("persistent_overlap");
    if (!g.persistent_overlap && n.has("stream_k"))
      n.fail_key("persistent_overlap", "stream-K's programs are modelled as one flattened loop (drop persistent_overlap)");
  }
  const std::array<std::uint32_t, 2> cluster = n.has("cluster") ? read_cluster(n) : std::array<std::uint32_t, 2>{1, 1};
  // A CUTLASS 3 kernel's programs: one per SM slot, in whole clusters per GPC.
  if (programs_by_default(g, n))
    g.persistent = cluster[0] * cluster[1] > 1 ? cluster_programs(arch, cluster[0] * cluster[1])
                                               : resident_programs(arch, g.resources, g.blocks_per_sm, "gemm");
  if (n.has("cluster"))
    set_cluster(g, cluster[0], cluster[1], [&](const std::string& what) { n.at("cluster").fail(what); });
}

// How a ragged tile's rows past M and columns past N are read: not at all (mask, the default)
// or modulo M and N (wrap). A cluster's multicast slices are cut from one rectangle per tile,
// which wrapped tiles are not, so the two are not combined.
void parse_ragged(const ConfigNode& n, GemmSpec& g) {
  if (!n.has("ragged")) return;
  static const std::vector<std::string> kRagged{"mask", "wrap"};
  g.wrap_ragged = n.choice("ragged", kRagged) == "wrap";
  if (g.wrap_ragged && g.cluster_m * g.cluster_n > 1)
    n.fail_key("ragged", "ragged: wrap is not modelled with thread-block clusters (drop cluster or use ragged: mask)");
}

}  // namespace

GemmSpec parse_gemm(const ConfigNode& n, const ArchSpec& arch) {
  n.allow_keys({"kind", "m", "n", "k", "batch", "dtype", "out_dtype", "layout", "tile", "stages", "split_k", "split_k_mode",
                "group_size", "weight_pack", "blocks_per_sm", "threads", "registers_per_thread", "shared_memory_bytes", "mainloop", "persistent", "persistent_overlap", "cluster", "schedule", "stream_k", "ragged"});
  GemmSpec g;
  parse_operands(n, arch, g);
  parse_tile(n, arch, g);
  if (n.has("schedule") || n.has("stream_k")) parse_schedule(n, arch, g);
  parse_resources(n, arch, g);
  g.mainloop = parse_mainloop(n, arch);
  if (g.schedule != GemmSpec::Schedule::none) {
    // CUTLASS 3's warp-specialised kernels: TMA copies, wgmma, and a persistent grid of one
    // program per SM slot unless the workload says otherwise.
    if (g.mainloop.kind && *g.mainloop.kind != MainLoop::wgmma_tma_ws)
      n.fail_key("mainloop", "a CUTLASS 3 schedule runs the wgmma_tma_ws main loop");
    g.mainloop.kind = MainLoop::wgmma_tma_ws;
  }
  parse_programs(n, arch, g);
  if (n.has("stream_k")) parse_stream_k(n, g);
  parse_ragged(n, g);
  return g;
}

std::uint32_t default_tile_rows(std::uint32_t m, const ArchSpec& arch) {
  return std::min(128u, round_up(m, std::max(16u, arch.compute.mma_m)));
}

GemmOperands add_gemm_tensors(const GemmSpec& g, Workload& w, DeviceAllocator& alloc, const std::string& prefix) {
  const auto add = [&](const std::string& name, std::uint32_t rows, std::uint32_t cols, Dtype d, bool col,
                       std::uint32_t batch) {
    Tensor t;
    t.name = prefix + name;
    t.rows = rows;
    t.cols = cols;
    t.batch = batch;
    t.elem_bits = static_cast<std::uint16_t>(dtype_bits(d));
    t.col_major = col;
    // Rows padded to whole bytes (4-bit data with an odd leading dimension).
    std::uint64_t ld = col ? rows : cols;
    while (ld * t.elem_bits % 8) ++ld;
    t.ld = ld;
    t.batch_stride = round_up<std::uint64_t>(t.bytes_per_batch(), 256);
    t.base = alloc.allocate(t.footprint());
    w.tensors.push_back(t);
    return static_cast<std::uint32_t>(w.tensors.size() - 1);
  };
  GemmOperands ops;
  ops.a = add("A", g.m, g.k, g.a_dtype(), g.a_col_major, g.batch);
  ops.b = add("B", g.b_rows(0, g.k), g.n, g.b_dtype(), g.b_col_major, g.batch);
  if (g.dtype == Dtype::w4a16)
    ops.scales = add("B_scales", (g.k + g.group_size - 1) / g.group_size, g.n, Dtype::fp16, false, g.batch);
  ops.c = add("C", g.m, g.n, g.out_dtype, g.c_col_major, g.batch);
  if (g.split_k > 1 && g.split_k_parallel)
    ops.partials = add("C_partials", g.m, g.n, Dtype::fp32, g.c_col_major, g.batch * g.split_k);
  return ops;
}

namespace {

// Which program runs which units, each list in the order the program runs them. By stride, unit
// i goes to program i mod P. Dynamically (an atomic tile counter, FlashAttention-3's LPT
// scheduler), program p starts with unit p and each later unit goes to the program that frees
// up first; which that is is decided here by list scheduling on each unit's MMA work (ties to
// the lower program), not at simulated run time, so the programs stay fixed step sequences.
std::vector<std::vector<std::uint32_t>> assign_units(const std::vector<std::uint32_t>& units, std::uint32_t programs,
                                                     bool dynamic, const std::vector<std::uint64_t>& work) {
  std::vector<std::vector<std::uint32_t>> out(programs);
  if (!dynamic) {
    for (std::size_t i = 0; i < units.size(); ++i) out[i % programs].push_back(units[i]);
    return out;
  }
  using Free = std::pair<std::uint64_t, std::uint32_t>;  // (work done, program)
  std::priority_queue<Free, std::vector<Free>, std::greater<>> idle;
  for (std::uint32_t p = 0; p < programs; ++p) {
    out[p].push_back(units[p]);
    idle.push({work[p], p});
  }
  for (std::size_t i = programs; i < units.size(); ++i) {
    const auto [done, p] = idle.top();
    idle.pop();
    out[p].push_back(units[i]);
    idle.push({done + work[i], p});
  }
  return out;
}

}  // namespace

// Turns a one-block-per-tile kernel into P programs running the work units the launch order
// puts in `seq` (assign_units: by stride, or dynamically), each program's units back to back
// (their steps concatenated, so its software pipeline runs on into its next tile, as a
// flattened persistent loop does). A unit is a tile, or a padded tile (kPaddedTile: the main
// loop's MMA on zeros, no memory); early exits are not units. z-slices follow one another as in
// the dispatch. The grid becomes the P programs that are launched.
void make_persistent(Kernel& k, std::uint32_t programs, const std::vector<TileCoord>& seq, bool dynamic) {
  constexpr std::uint32_t kPadded = kNoBlock;  // a unit on a padded tile
  std::vector<std::uint32_t> units;
  for (std::uint32_t z = 0; z < k.grid_z; ++z)
    for (const TileCoord& t : seq) {
      if (t == kPaddedTile) units.push_back(kPadded);
      else if (is_tile(t)) units.push_back((z * k.grid_m + t.m) * k.grid_n + t.n);
    }
  // A padded tile runs the k-steps of a tile without their loads and without its epilogue.
  const Block& model = k.blocks.front();
  std::vector<Step> padded(k.steps.begin() + model.first_step, k.steps.begin() + model.first_step + model.num_steps);
  std::erase_if(padded, [](const Step& s) { return s.flops == 0; });
  for (Step& s : padded) s.num_accesses = 0;
  const auto block_flops = [&](std::uint32_t u) {
    std::uint64_t f = 1;  // a unit without MMA work still takes its turn
    if (u == kPadded) {
      for (const Step& s : padded) f += s.flops;
    } else {
      for (std::uint32_t i = 0; i < k.blocks[u].num_steps; ++i) f += k.steps[k.blocks[u].first_step + i].flops;
    }
    return f;
  };
  std::vector<std::uint64_t> work;
  if (dynamic) std::transform(units.begin(), units.end(), std::back_inserter(work), block_flops);
  const auto p_count = static_cast<std::uint32_t>(std::min<std::size_t>(programs, units.size()));
  const auto assignment = assign_units(units, p_count, dynamic, work);
  // Steps and their accesses are laid out again in program order, each step's accesses right
  // after the previous step's, as every other kernel has them (a text trace relies on it).
  std::vector<Step> steps;
  std::vector<TileAccess> accesses;
  std::vector<Block> blocks;
  steps.reserve(k.steps.size());
  accesses.reserve(k.accesses.size());
  const auto append = [&](const Step* first, const Step* last, bool with_accesses) {
    for (const Step* s = first; s != last; ++s) {
      Step c = *s;
      c.first_access = static_cast<std::uint32_t>(accesses.size());
      if (with_accesses)
        accesses.insert(accesses.end(), k.accesses.begin() + s->first_access,
                        k.accesses.begin() + s->first_access + s->num_accesses);
      steps.push_back(c);
    }
  };
  for (std::uint32_t p = 0; p < p_count; ++p) {
    Block b;
    b.first_step = static_cast<std::uint32_t>(steps.size());
    b.tile_n = p;
    for (const std::uint32_t u : assignment[p]) {
      if (u == kPadded) {
        append(padded.data(), padded.data() + padded.size(), false);
        continue;
      }
      const Block& t = k.blocks[u];
      append(k.steps.data() + t.first_step, k.steps.data() + t.first_step + t.num_steps, true);
    }
    b.num_steps = static_cast<std::uint32_t>(steps.size()) - b.first_step;
    blocks.push_back(b);
  }
  k.accesses = std::move(accesses);
  k.steps = std::move(steps);
  k.blocks = std::move(blocks);
  k.grid_m = 1;
  k.grid_n = p_count;
  k.grid_z = 1;
  k.dispatch.resize(p_count);
  for (std::uint32_t p = 0; p < p_count; ++p) k.dispatch[p] = p;
}

namespace {

// Stream-K: the cutlass_sm90 order gives the scheduler's grid, raster and tile ids; its programs
// are `persistent` (CUTLASS's sm_count: the grid is not cut to the tiles).
void add_stream_k(const WorkloadContext& ctx, const GemmSpec& g, const GemmOperands& ops, const LaunchOrder& order,
                  const ConfigNode& order_node, Workload& w, DeviceAllocator& alloc) {
  const auto grid = order.scheduler_grid(g.tiles_m(), g.tiles_n());
  if (!grid)
    ctx.workload.fail_key("stream_k", "stream-K runs on CUTLASS 3's persistent scheduler: use order: {kind: cutlass_sm90, "
                                      "raster: ..., max_swizzle: ...} (the order has " + order.describe() + ")");
  if (order.cluster().m * order.cluster().n > 1) order_node.fail_key("cluster", "stream-K with a cluster is not modelled");
  StreamKRequest r;
  r.tiles_m = grid->tiles_m;
  r.tiles_n = grid->tiles_n;
  r.k_tiles = g.tiles_k();
  r.programs = g.persistent;
  r.along_m = grid->along_m;
  r.mode = g.stream_k.mode;
  r.splits = g.stream_k.splits;
  add_stream_k_kernel(g, ops, order.sequence(g.tiles_m(), g.tiles_n()), plan_stream_k(r), w, alloc, "gemm");
}

Workload build_gemm(const WorkloadContext& ctx) {
  require_stream_sync(ctx);  // one kernel, or kernels in plain stream order
  GemmSpec g = parse_gemm(ctx.workload, ctx.arch);
  ConfigNode order_node = order_node_or_row(ctx);
  const auto order = make_order(order_node, ctx.base_dir);
  // The cluster is one launch parameter that the kernel (TMA multicast) and its scheduler (a
  // cluster's tiles adjacent in the sequence) share, as CUTLASS's ClusterShape: given on either
  // side it is the other's too; given on both they must agree.
  const TileCoord oc = order->cluster();
  if (programs_by_default(g, ctx.workload) && !ctx.workload.has("cluster") && oc.m * oc.n > 1)
    g.persistent = cluster_programs(ctx.arch, oc.m * oc.n);
  const auto str = [](std::uint32_t m, std::uint32_t n) { return "[" + std::to_string(m) + ", " + std::to_string(n) + "]"; };
  if (!ctx.workload.has("cluster") && oc.m * oc.n > 1)
    set_cluster(g, oc.m, oc.n, [&](const std::string& what) { order_node.fail_key("cluster", what); });
  else if (oc.m * oc.n == 1 && g.cluster_m * g.cluster_n > 1)
    ctx.workload.fail_key("cluster", "a cluster needs an order that keeps its blocks together: order: {kind: " +
                                         std::string("cutlass_sm90, ...}"));
  else if (oc.m != g.cluster_m || oc.n != g.cluster_n)
    ctx.workload.fail_key("cluster", str(g.cluster_m, g.cluster_n) + " differs from the order's cluster " +
                                         str(oc.m, oc.n) + " (one launch parameter: give it once)");
  Workload w;
  DeviceAllocator alloc;
  const GemmOperands ops = add_gemm_tensors(g, w, alloc, "");
  if (g.stream_k.enabled) {
    add_stream_k(ctx, g, ops, *order, order_node, w, alloc);
    return w;
  }
  add_gemm_kernel(g, ops, *order, w, "gemm", g.persistent == 0);  // make_persistent rewrites the kernel
  if (g.persistent) {
    Kernel& k = w.kernels.back();
    make_persistent(k, g.persistent, order->sequence(k.grid_m, k.grid_n), order->dynamic());
    k.drain_between_tiles = !g.persistent_overlap;
  }
  return w;
}

const bool registered = register_workload("gemm",
    "one GEMM C = A.B, optionally split-K, persistent or stream-K", build_gemm);

}  // namespace

}  // namespace tilesim
