#include "models/arch.hpp"

#include <filesystem>
#include <utility>

#include "common/error.hpp"
#include "common/text.hpp"
#include "models/arch_presets.hpp"
#include "models/cache/hash/hash.hpp"
#include "models/cache/replacement/replacement.hpp"

namespace tilesim {

namespace {

bool is_pow2(std::uint64_t v) { return v && !(v & (v - 1)); }

// A list of SM indices under sm.`key`, each below sm.count. A preset's lists name SMs of the
// full part; an override of sm.count must restate them.
std::vector<std::uint32_t> sm_list(const ConfigNode& list, std::uint32_t count, const std::string& key) {
  if (!list.is_sequence()) list.fail("expected a list of SM indices");
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const ConfigNode e = list.element(i);
    const auto sm = static_cast<std::uint32_t>(e.as_integer(0, 4095));
    if (sm >= count)
      e.fail("SM " + std::to_string(sm) + " does not exist with sm.count " + std::to_string(count) +
             " (an override of sm.count must restate sm." + key + ", e.g. as [])");
    out.push_back(sm);
  }
  return out;
}

// sm.gpcs: [[SM, ...], ...], each SM in at most one GPC.
void parse_gpcs(const ConfigNode& n, SmSpec& s) {
  const auto f = n.find("gpcs");
  if (!f) return;
  if (!f->is_sequence()) f->fail("expected a list of GPCs, each a list of SM indices, e.g. [[0, 1], [2, 3]]");
  std::vector<bool> seen(s.count, false);
  for (std::size_t g = 0; g < f->size(); ++g) {
    const ConfigNode gpc = f->element(g);
    if (gpc.is_sequence() && gpc.size() == 0) gpc.fail("expected a non-empty list of SM indices");
    s.gpcs.push_back(sm_list(gpc, s.count, "gpcs"));
    for (std::size_t i = 0; i < s.gpcs.back().size(); ++i) {
      const std::uint32_t sm = s.gpcs.back()[i];
      if (seen[sm]) gpc.element(i).fail("SM " + std::to_string(sm) + " is in two GPCs");
      seen[sm] = true;
    }
  }
}

// sm.gpcs_joined: [[group, ...], ...], indices into sm.gpcs, each group in at most one GPC.
void parse_gpcs_joined(const ConfigNode& n, SmSpec& s) {
  const auto f = n.find("gpcs_joined");
  if (!f) return;
  if (!f->is_sequence()) f->fail("expected a list of GPCs, each a list of indices into sm.gpcs, e.g. [[0, 8, 9]]");
  if (f->size() == 0) return;  // none joined
  if (s.gpcs.empty())
    f->fail("needs sm.gpcs: its entries are indices of sm.gpcs' groups (an arch_overrides that replaces "
            "sm.gpcs drops the preset's joins by itself)");
  s.gpc_of_group.resize(s.gpcs.size());
  for (std::uint32_t g = 0; g < s.gpc_of_group.size(); ++g) s.gpc_of_group[g] = g;
  std::vector<bool> seen(s.gpcs.size(), false);
  for (std::size_t j = 0; j < f->size(); ++j) {
    const ConfigNode join = f->element(j);
    if (!join.is_sequence() || join.size() < 2) join.fail("expected a list of two or more indices into sm.gpcs");
    std::uint32_t first = 0;
    for (std::size_t i = 0; i < join.size(); ++i) {
      const ConfigNode e = join.element(i);
      const auto g = static_cast<std::uint32_t>(e.as_integer(0, 4095));
      if (g >= s.gpcs.size())
        e.fail("sm.gpcs has no group " + std::to_string(g) + " (it has " + std::to_string(s.gpcs.size()) + ")");
      if (seen[g]) e.fail("group " + std::to_string(g) + " of sm.gpcs is joined twice");
      seen[g] = true;
      if (i == 0) first = g;
      s.gpc_of_group[g] = first;
    }
  }
}

void parse_sm(const ConfigNode& n, SmSpec& s) {
  n.allow_keys({"count", "clock_mhz", "max_threads", "max_blocks", "registers", "max_registers_per_thread",
                "register_alloc_unit", "shared_memory_bytes", "max_shared_memory_per_block",
                "reserved_shared_memory_per_block", "partition_map", "block_launch_ns", "kernel_launch_ns", "block_time_jitter",
                "l2_port_bytes_per_clk", "l2_port_clock_mhz", "l2_port_fast_sms", "l2_port_fast_factor", "max_inflight_bytes", "max_sms_per_gpc",
                "sync_check_ns", "sync_post_ns", "step_noise_ns", "solo_step_noise_ns", "shared_step_noise_ns", "gpcs",
                "gpcs_joined", "placement", "l2_port_sharing"});
  s.count = static_cast<std::uint32_t>(n.integer("count", 1, 4096));
  s.clock_mhz = n.number("clock_mhz", 1, 10000);
  s.max_threads = static_cast<std::uint32_t>(n.integer("max_threads", 32, 65536));
  s.max_blocks = static_cast<std::uint32_t>(n.integer("max_blocks", 1, 1024));
  s.registers = static_cast<std::uint32_t>(n.integer("registers", 1024, 1 << 24));
  s.max_registers_per_thread = static_cast<std::uint32_t>(n.integer_or("max_registers_per_thread", 255, 16, 1024));
  s.register_alloc_unit = static_cast<std::uint32_t>(n.integer_or("register_alloc_unit", 256, 1, 65536));
  s.shared_memory_bytes = n.bytes("shared_memory_bytes", 1024, 1ull << 30);
  s.max_shared_memory_per_block = n.bytes("max_shared_memory_per_block", 1024, s.shared_memory_bytes);
  s.reserved_shared_memory_per_block = n.bytes_or("reserved_shared_memory_per_block", 0, 0, 1 << 20);
  s.partition_map = n.string_or("partition_map", "interleaved");
  s.sm_half.assign(s.count, 0);
  if (s.partition_map == "interleaved") {
    for (std::uint32_t i = 0; i < s.count; ++i) s.sm_half[i] = static_cast<std::uint8_t>(i % 2);
  } else if (s.partition_map == "blocked") {
    for (std::uint32_t i = 0; i < s.count; ++i) s.sm_half[i] = i < s.count / 2 ? 0 : 1;
  } else {
    if (s.partition_map.size() != s.count ||
        s.partition_map.find_first_not_of("01") != std::string::npos)
      n.fail_key("partition_map", "expected interleaved, blocked, or one digit 0 or 1 per SM (" +
                                      std::to_string(s.count) + " digits), got '" + s.partition_map + "'");
    for (std::uint32_t i = 0; i < s.count; ++i) s.sm_half[i] = static_cast<std::uint8_t>(s.partition_map[i] - '0');
  }
  s.block_launch_ns = n.number_or("block_launch_ns", 0, 0, 1e6);
  s.kernel_launch_ns = n.number_or("kernel_launch_ns", 0, 0, 1e6);
  if (n.find("block_time_jitter"))
    n.fail_key("block_time_jitter", "removed: the per-block time factor made blocks drift apart without bound; drift now "
                                    "comes from the SM pipe's arbitration and the per-SM L2 ports (docs/architecture.md)");
  s.l2_port_bytes_per_clk = n.number_or("l2_port_bytes_per_clk", 0, 0, 1e4);
  s.l2_port_clock_mhz = n.number_or("l2_port_clock_mhz", 0, 0, 1e5);
  if (auto f = n.find("l2_port_fast_sms")) s.l2_port_fast_sms = sm_list(*f, s.count, "l2_port_fast_sms");
  s.l2_port_fast_factor = n.number_or("l2_port_fast_factor", 1.0, 0.1, 10.0);
  s.l2_port_sharing = n.choice_or("l2_port_sharing", "fifo", {"fifo", "fair"}) == "fair" ? SmSpec::PortSharing::fair
                                                                                        : SmSpec::PortSharing::fifo;
  s.max_sms_per_gpc = static_cast<std::uint32_t>(n.integer_or("max_sms_per_gpc", 0, 0, 4096));
  parse_gpcs(n, s);
  parse_gpcs_joined(n, s);
  const std::string placement = n.choice_or("placement", "round_robin", {"round_robin", "gpc", "gpc_fill"});
  s.placement = placement == "gpc" ? SmSpec::Placement::gpc
                : placement == "gpc_fill" ? SmSpec::Placement::gpc_fill : SmSpec::Placement::round_robin;
  // gpc_fill without GPCs is index order (every SM unlisted); gpc has no order without them.
  if (s.placement == SmSpec::Placement::gpc && s.gpcs.empty())
    n.fail_key("placement", "gpc placement needs sm.gpcs (the SMs of each GPC)");
  s.max_inflight_bytes = n.bytes_or("max_inflight_bytes", 0, 0, 1ull << 30);
  s.sync_check_ns = n.number_or("sync_check_ns", 0, 0, 1e6);
  s.sync_post_ns = n.number_or("sync_post_ns", 0, 0, 1e6);
  s.step_noise_ns = n.number_or("step_noise_ns", 0, 0, 1e5);
  s.solo_step_noise_ns = n.has("solo_step_noise_ns") ? n.number("solo_step_noise_ns", 0, 1e5) : -1;
  s.shared_step_noise_ns = n.number_or("shared_step_noise_ns", 0, 0, 1e5);
}

// [{tile: [rows, cols], warps: W, efficiency: E}, ...]: one entry per tile and warp count.
void parse_tile_efficiency(const ConfigNode& n, std::vector<TileEfficiency>& out) {
  if (!n.is_sequence()) n.fail("expected a list of {tile: [rows, cols], warps: W, efficiency: E}");
  for (std::size_t i = 0; i < n.size(); ++i) {
    const ConfigNode e = n.element(i);
    e.allow_keys({"tile", "warps", "efficiency"});
    const ConfigNode tile = e.at("tile");
    if (!tile.is_sequence() || tile.size() != 2) tile.fail("expected [rows, cols] of the block's output tile");
    TileEfficiency t;
    t.rows = static_cast<std::uint32_t>(tile.element(0).as_integer(1, 4096));
    t.cols = static_cast<std::uint32_t>(tile.element(1).as_integer(1, 4096));
    t.warps = static_cast<std::uint32_t>(e.integer("warps", 1, 64));
    t.efficiency = e.number("efficiency", 0.01, 1.0);
    for (const TileEfficiency& o : out)
      if (o.rows == t.rows && o.cols == t.cols && o.warps == t.warps)
        e.fail("tile " + std::to_string(t.rows) + "x" + std::to_string(t.cols) + " with " + std::to_string(t.warps) +
               " warps is listed twice");
    out.push_back(t);
  }
}

void parse_mainloops(const ConfigNode& n, ComputeSpec& c) {
  const ConfigNode all = n.at("mainloops");
  all.allow_keys(mainloop_names());
  bool any = false;
  for (const auto& name : mainloop_names()) {
    auto k = all.find(name);
    if (!k) continue;
    k->allow_keys({"efficiency", "tile_efficiency", "saturating_warps", "arbitration", "step_overhead_cycles",
                   "l2_port_factor", "l2_port_gbps", "bulk_copies", "load_use_ns", "coresident_rate_sd",
                   "serialized_wait_cycles", "prefetch", "smem_bytes_per_clk", "saturating_elements",
                   "single_fragments", "waiting_holds"});
    MainLoopSpec& m = c.mainloops[static_cast<int>(*mainloop_from_name(name))];
    m.supported = true;
    m.efficiency = k->number("efficiency", 0.01, 1.0);
    if (auto t = k->find("tile_efficiency")) parse_tile_efficiency(*t, m.tile_efficiency);
    m.saturating_warps = k->number("saturating_warps", 1, 64);
    m.step_overhead_cycles = k->number_or("step_overhead_cycles", 0, 0, 1e5);
    m.l2_port_factor = k->number_or("l2_port_factor", 1.0, 0.1, 10.0);
    m.l2_port_gbps = k->number_or("l2_port_gbps", 0, 0, 1e4);
    m.bulk_copies = k->boolean_or("bulk_copies", false);
    m.load_use_ns = k->number_or("load_use_ns", 0, 0, 1e5);
    m.coresident_rate_sd = k->number_or("coresident_rate_sd", 0, 0, 0.2);
    m.waiting_holds = k->number_or("waiting_holds", 0, 0, 1);
    m.serialized_wait_cycles = k->number_or("serialized_wait_cycles", 0, 0, 1e4);
    m.smem_bytes_per_clk = k->number_or("smem_bytes_per_clk", 0, 0, 1e5);
    m.saturating_elements = k->number_or("saturating_elements", 0, 0, 1e7);
    if (auto f = k->find("single_fragments")) {
      f->allow_keys({"efficiency", "saturating_warps"});
      m.single_fragment_efficiency = f->number("efficiency", 0.01, 1.0);
      m.single_fragment_saturating_warps = f->number("saturating_warps", 1, 64);
    }
    if (k->find("prefetch")) m.prefetch_after_wait = k->choice("prefetch", {"when_free", "after_wait"}) == "after_wait";
    const std::string a = k->string("arbitration");
    const auto how = arbitration_from_name(a);
    if (!how) k->fail_key("arbitration", "expected oldest_first or fair, got '" + a + "'");
    m.arbitration = *how;
    any = true;
  }
  if (!any) all.fail("expected at least one main-loop kind (" + std::string("mma_sync, wgmma_cp_async, wgmma_tma_ws") + ")");
  const std::string d = n.string("mainloop");
  const auto k = mainloop_from_name(d);
  if (!k || !c.mainloop(*k).supported)
    n.fail_key("mainloop", "expected one of the kinds under mainloops, got '" + d + "'");
  c.default_mainloop = *k;
}

void parse_compute(const ConfigNode& n, ComputeSpec& c) {
  n.allow_keys({"mma", "flops_per_cycle", "mma_efficiency", "mainloop", "mainloops", "alu_ops_per_cycle",
                "alu_ops_per_element"});
  if (n.find("mma_efficiency"))
    n.fail_key("mma_efficiency", "replaced by one efficiency per main-loop kind: compute.mainloops.<kind>.efficiency "
                                 "(kinds: mma_sync, wgmma_cp_async, wgmma_tma_ws; docs/archs.md)");
  parse_mainloops(n, c);
  c.alu_ops_per_cycle = n.number_or("alu_ops_per_cycle", 128, 1, 1e5);
  if (auto a = n.find("alu_ops_per_element")) {
    a->allow_keys({"dequant_w4", "softmax", "epilogue"});
    c.alu_ops_per_element.dequant_w4 = a->number_or("dequant_w4", 0, 0, 1e4);
    c.alu_ops_per_element.softmax = a->number_or("softmax", 0, 0, 1e4);
    c.alu_ops_per_element.epilogue = a->number_or("epilogue", 0, 0, 1e4);
  }
  if (auto mma = n.find("mma")) {
    mma->allow_keys({"m", "n", "k_bytes"});
    c.mma_m = static_cast<std::uint32_t>(mma->integer("m", 1, 256));
    c.mma_n = static_cast<std::uint32_t>(mma->integer("n", 1, 256));
    c.mma_k_bytes = static_cast<std::uint32_t>(mma->integer("k_bytes", 1, 256));
  }
  ConfigNode f = n.at("flops_per_cycle");
  std::vector<std::string> names;
  for (int i = 0; i < kNumDtypes; ++i) {
    const auto d = static_cast<Dtype>(i);
    if (d == Dtype::int4 || d == Dtype::int32) continue;  // storage-only types
    names.emplace_back(dtype_name(d));
  }
  f.allow_keys(names);
  for (const auto& name : names) c.flops_per_cycle[static_cast<int>(*dtype_from_name(name))] = f.number_or(name, 0, 0, 1e7);
}

void parse_l2(const ConfigNode& n, L2Spec& l) {
  n.allow_keys({"bytes", "partitions", "line_bytes", "sector_bytes", "fill_bytes", "ways", "hash", "replacement", "far_copy", "request_coalescing_ns", "request_coalescing_max", "request_coalescing_lines",
                "request_coalescing_queue", "request_coalescing_queue_max_ns", "request_coalescing_per_gpc", "hit_latency_ns", "far_extra_latency_ns", "bandwidth_gbps", "crossbar_bandwidth_gbps", "fabric_bandwidth_gbps",
                "return_wait_ns_per_tbps", "hit_wait_dram_share", "write_flush_dirty_fraction"});
  l.bytes = n.bytes("bytes", 1024, 1ull << 36);
  l.partitions = static_cast<std::uint32_t>(n.integer_or("partitions", 1, 1, 2));
  l.line_bytes = static_cast<std::uint32_t>(n.integer_or("line_bytes", 128, 32, 1024));
  l.sector_bytes = static_cast<std::uint32_t>(n.integer_or("sector_bytes", 32, 8, 1024));
  l.fill_bytes = static_cast<std::uint32_t>(n.integer_or("fill_bytes", 0, 0, 1024));
  l.ways = static_cast<std::uint32_t>(n.integer_or("ways", 16, 1, 64));
  // Checked here, so that a bad name is an error of the file that gave it, before any point runs.
  l.hash = n.kind_or("hash", "xor_fold", hash_names());
  l.replacement = n.kind_or("replacement", "lru", replacement_names());
  l.far_copy = n.boolean_or("far_copy", l.partitions > 1);
  l.request_coalescing_ns = n.number_or("request_coalescing_ns", 0, 0, 1e5);
  l.request_coalescing_max = static_cast<std::uint32_t>(n.integer_or("request_coalescing_max", 0, 0, 1 << 20));
  l.request_coalescing_lines = n.number_or("request_coalescing_lines", 0, 0, 1e9);
  l.request_coalescing_queue = n.boolean_or("request_coalescing_queue", false);
  l.request_coalescing_queue_max_ns = n.number_or("request_coalescing_queue_max_ns", 0, 0, 1e6);
  l.request_coalescing_per_gpc = n.boolean_or("request_coalescing_per_gpc", false);
  l.hit_latency_ns = n.number("hit_latency_ns", 0, 1e5);
  l.far_extra_latency_ns = n.number_or("far_extra_latency_ns", 0, 0, 1e5);
  l.bandwidth_gbps = n.number("bandwidth_gbps", 1, 1e6);
  l.crossbar_bandwidth_gbps = n.number_or("crossbar_bandwidth_gbps", 0, 0, 1e6);
  l.fabric_bandwidth_gbps = n.number_or("fabric_bandwidth_gbps", 0, 0, 1e6);
  l.return_wait_ns_per_tbps = n.number_or("return_wait_ns_per_tbps", 0, 0, 1e5);
  l.hit_wait_dram_share = n.number_or("hit_wait_dram_share", 0, 0, 1);
  l.write_flush_dirty_fraction = n.number_or("write_flush_dirty_fraction", 1.0, 0, 1);
  if (!is_pow2(l.line_bytes)) n.fail_key("line_bytes", "expected a power of two");
  if (!is_pow2(l.sector_bytes) || l.line_bytes % l.sector_bytes || l.line_bytes / l.sector_bytes > 8)
    n.fail_key("sector_bytes", "expected a power of two dividing line_bytes into at most 8 sectors");
  if (l.fill_bytes && (!is_pow2(l.fill_bytes) || l.fill_bytes < l.sector_bytes || l.fill_bytes > l.line_bytes))
    n.fail_key("fill_bytes", "expected 0 or a power of two from sector_bytes (" + std::to_string(l.sector_bytes) +
                                 ") to line_bytes (" + std::to_string(l.line_bytes) + ")");
  const std::uint64_t lines = l.bytes / l.line_bytes;
  if (l.bytes % (static_cast<std::uint64_t>(l.line_bytes) * l.ways * l.partitions))
    n.fail_key("bytes", "expected a multiple of line_bytes x ways x partitions (" +
                            std::to_string(static_cast<std::uint64_t>(l.line_bytes) * l.ways * l.partitions) + ")");
  (void)lines;
}

void parse_dram(const ConfigNode& n, DramSpec& d) {
  n.allow_keys({"bandwidth_gbps", "latency_ns", "queue_latency_ns", "queue_max_utilization", "fill_jitter_ns", "stage_spread_ns"});
  d.bandwidth_gbps = n.number("bandwidth_gbps", 1, 1e6);
  d.latency_ns = n.number("latency_ns", 0, 1e5);
  d.queue_latency_ns = n.number_or("queue_latency_ns", 0, 0, 1e5);
  d.queue_max_utilization = n.number_or("queue_max_utilization", 0.9, 0.01, 0.99);
  d.fill_jitter_ns = n.number_or("fill_jitter_ns", 0, 0, 1e5);
  d.stage_spread_ns = n.number_or("stage_spread_ns", 0, 0, 1e5);
}

void parse_power(const ConfigNode& n, PowerSpec& p, double clock_mhz) {
  n.allow_keys({"cap_w", "idle_w", "w_per_tflops", "w_per_l2_tbps", "w_per_dram_tbps", "voltage_exponent",
                "min_clock_mhz", "average_ms", "peak_w"});
  // cap_w 0 switches the model off (one run at sm.clock_mhz), e.g. from an arch_overrides.
  p.cap_w = n.number("cap_w", 0, 1e5);
  if (p.cap_w == 0) return;
  p.idle_w = n.number("idle_w", 0, 1e5);
  if (p.idle_w >= p.cap_w) n.fail_key("idle_w", "expected less than cap_w (" + std::to_string(p.cap_w) + ")");
  p.w_per_tflops = n.number_or("w_per_tflops", 0, 0, 1e4);
  p.w_per_l2_tbps = n.number_or("w_per_l2_tbps", 0, 0, 1e5);
  p.w_per_dram_tbps = n.number_or("w_per_dram_tbps", 0, 0, 1e5);
  p.voltage_exponent = n.number_or("voltage_exponent", 0, 0, 4);
  p.min_clock_mhz = n.number_or("min_clock_mhz", clock_mhz / 4, 1, clock_mhz);
  p.average_ms = n.number_or("average_ms", 0, 0, 1e6);
  p.peak_w = n.number_or("peak_w", 0, 0, 1e5);
  if (p.peak_w > 0 && p.peak_w < p.cap_w) n.fail_key("peak_w", "expected 0 or at least cap_w (" + std::to_string(p.cap_w) + ")");
}

}  // namespace

std::string ComputeSpec::supported_mainloops() const {
  std::string kinds;
  for (const auto& n : mainloop_names())
    if (mainloop(*mainloop_from_name(n)).supported) kinds += (kinds.empty() ? "" : ", ") + n;
  return kinds;
}

ArchSpec parse_arch(const ConfigNode& node) {
  // `calibration`: provenance written by `tilesim calibrate` (which measurements, which error); not read.
  node.allow_keys({"name", "description", "sm", "compute", "l2", "dram", "power", "calibration"});
  ArchSpec a;
  a.name = node.string("name");
  a.description = node.string_or("description", "");
  parse_sm(node.at("sm"), a.sm);
  parse_compute(node.at("compute"), a.compute);
  parse_l2(node.at("l2"), a.l2);
  parse_dram(node.at("dram"), a.dram);
  if (auto p = node.find("power")) parse_power(*p, a.power, a.sm.clock_mhz);
  return a;
}

YAML::Node arch_preset_yaml(const std::string& name) {
  for (const auto& p : arch_presets())
    if (p.name == name) return load_yaml_text(p.yaml, "models/archs/" + p.name + ".yaml");
  // A default-constructed YAML::Node is a *defined* null node; callers test IsDefined().
  return YAML::Node(YAML::NodeType::Undefined);
}

std::vector<std::string> arch_preset_names() {
  std::vector<std::string> out;
  for (const auto& p : arch_presets()) out.push_back(p.name);
  return out;
}

namespace {

// sm.gpcs_joined holds indices into sm.gpcs: overrides that replace the map without joins of
// their own get none (an empty list) rather than the base's, which name groups no longer there.
YAML::Node without_stale_joins(const YAML::Node& overrides) {
  // Const lookups: a missing key gives an undefined node (IsDefined false, other queries throw).
  const YAML::Node sm = std::as_const(overrides)["sm"];
  if (!sm.IsDefined() || !sm.IsMap() || !sm["gpcs"].IsDefined() || sm["gpcs_joined"].IsDefined()) return overrides;
  YAML::Node none(YAML::NodeType::Map);
  none["sm"]["gpcs_joined"] = YAML::Node(YAML::NodeType::Sequence);
  return merge_yaml(overrides, none);  // new maps along the way: the caller's tree stays as it is
}

}  // namespace

ArchSpec load_arch(const std::string& name_or_path, const YAML::Node& overrides, const std::string& origin) {
  YAML::Node base = arch_preset_yaml(name_or_path);
  std::string file = "models/archs/" + name_or_path + ".yaml";
  if (!base.IsDefined()) {
    namespace fs = std::filesystem;
    fs::path p(name_or_path);
    if (p.is_relative() && !origin.empty() && !fs::exists(p)) p = fs::path(origin).parent_path() / p;
    if (!fs::exists(p)) {
      throw InputError(origin + ": arch: unknown preset or file '" + name_or_path + "' (presets: " +
                       join(arch_preset_names()) + ")");
    }
    file = p.string();
    try {
      base = load_yaml_file(file);
    } catch (const InputError& e) {
      throw InputError(origin + ": arch: " + e.what());
    }
  }
  if (overrides.IsDefined() && !overrides.IsNull()) {
    if (!overrides.IsMap()) throw InputError(origin + ": arch_overrides: expected a mapping");
    // Validate overrides against the merged tree; errors then name the override's path.
    base = merge_yaml(base, without_stale_joins(overrides));
    file = origin + " (arch_overrides over " + file + ")";
  }
  return parse_arch(ConfigNode(base, file, ""));
}

}  // namespace tilesim
