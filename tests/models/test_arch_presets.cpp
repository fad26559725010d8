// The embedded arch presets (models/archs/*.yaml): they parse, their derived peaks agree with the
// vendors' published figures, and arch_overrides merge over them with errors that name the key.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "models/arch.hpp"

using namespace tilesim;

namespace {

bool has_preset(const std::string& name) {
  const auto names = arch_preset_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string error_of(const std::string& name, const YAML::Node& overrides, const std::string& origin) {
  try {
    load_arch(name, overrides, origin);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every embedded arch preset parses", "[arch]") {
  const auto names = arch_preset_names();
  REQUIRE_FALSE(names.empty());
  for (const auto& name : names) {
    INFO("preset " << name);
    ArchSpec a;
    REQUIRE_NOTHROW(a = load_arch(name, YAML::Node(), "test"));
    CHECK(a.name == name);
    CHECK(a.sm.count > 0);
    CHECK(a.sm.clock_mhz > 0);
    CHECK(a.supports(Dtype::fp16));
    CHECK(a.supports(Dtype::fp32));
    CHECK(a.l2.bytes % (static_cast<std::uint64_t>(a.l2.line_bytes) * a.l2.ways * a.l2.partitions) == 0);
    CHECK(a.dram.bandwidth_gbps > 0);
  }
}

TEST_CASE("the six expected arch presets exist", "[arch]") {
  for (const char* name : {"h100", "h200", "a100", "a40", "rtx4090", "rtx3050-laptop"}) {
    INFO("preset " << name);
    CHECK(has_preset(name));
  }
}

TEST_CASE("preset fp16 dense peaks match the published tensor peaks", "[arch]") {
  struct Published {
    const char* name;
    double fp16_dense_flops;
  };
  // Dense fp16 tensor-core peaks (no sparsity) as published by NVIDIA; facts, not simulator outputs.
  // Where the product lists fp16 with fp16 and with fp32 accumulate separately, the fp32-accumulate
  // figure is used (the rate GEMM libraries use for fp16 inputs in ML).
  const std::vector<Published> published{
      // NVIDIA H100 Tensor Core GPU datasheet (SXM5: 1,979 TFLOP/s with sparsity) and
      // NVIDIA H100 Tensor Core GPU Architecture whitepaper (GH100), H100 SXM5: 989.4 TFLOP/s dense.
      {"h100", 989.4e12},
      // NVIDIA H200 Tensor Core GPU datasheet (SXM): FP16 Tensor Core 1,979 TFLOP/s with sparsity,
      // 989.4 dense: the same GH100 tensor cores and clock as the H100 SXM.
      {"h200", 989.4e12},
      // NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM): FP16 Tensor Core 312 TFLOP/s dense.
      {"a100", 312e12},
      // NVIDIA A40 datasheet: FP16/BF16 Tensor 149.7 TFLOP/s dense (299.4 with sparsity).
      {"a40", 149.7e12},
      // NVIDIA Ada GPU Architecture whitepaper (AD102), GeForce RTX 4090:
      // peak FP16 Tensor TFLOPS with FP32 accumulate 165.2 dense (330.3 with fp16 accumulate).
      {"rtx4090", 165.2e12},
      // The RTX 3050 Laptop GPU has no published tensor peak (its clock depends on the OEM's TGP).
      // Reference: the GA10x GeForce per-SM rate from the NVIDIA Ampere GA102 GPU Architecture
      // whitepaper (RTX 3090: 71 TFLOP/s fp16 with fp32 accumulate, 82 SMs at 1695 MHz boost) times
      // the laptop's 16 SMs at the preset's chosen typical clock of 1500 MHz.
      {"rtx3050-laptop", 71.0e12 / (82 * 1695e6) * 16 * 1500e6},
  };
  for (const auto& p : published) {
    INFO("preset " << p.name);
    const ArchSpec a = load_arch(p.name, YAML::Node(), "test");
    // NVIDIA quotes the GH100 peaks at 1830 MHz; the h100 and h200 presets' clock is the
    // 1980 MHz boost that lone SMs measure, and their power cap brings busy chips below 1830.
    const double quoted_clock = a.power.enabled() ? 1830 : a.sm.clock_mhz;
    const double peak = a.peak_flops(Dtype::fp16) * quoted_clock / a.sm.clock_mhz;
    CHECK(std::abs(peak - p.fp16_dense_flops) / p.fp16_dense_flops < 0.02);
    // bf16 runs at the fp16 rate on every preset, and w4a16 feeds fp16 MMAs.
    CHECK(a.flops_per_cycle(Dtype::bf16) == a.flops_per_cycle(Dtype::fp16));
    CHECK(a.flops_per_cycle(Dtype::w4a16) == a.flops_per_cycle(Dtype::fp16));
  }
}

TEST_CASE("fp8 only on Hopper and Ada presets", "[arch]") {
  for (const char* name : {"a100", "a40", "rtx3050-laptop"}) {
    INFO("preset " << name);
    CHECK_FALSE(load_arch(name, YAML::Node(), "test").supports(Dtype::fp8));
  }
  for (const char* name : {"h100", "rtx4090"}) {
    INFO("preset " << name);
    CHECK(load_arch(name, YAML::Node(), "test").supports(Dtype::fp8));
  }
}

TEST_CASE("mma granularity: wgmma on Hopper, mma.sync elsewhere", "[arch]") {
  const ArchSpec h = load_arch("h100", YAML::Node(), "test");
  CHECK(h.compute.mma_m == 64);
  CHECK(h.compute.mma_n == 8);
  CHECK(h.compute.mma_k_bytes == 32);
  for (const char* name : {"a100", "a40", "rtx4090", "rtx3050-laptop"}) {
    INFO("preset " << name);
    const ArchSpec a = load_arch(name, YAML::Node(), "test");
    CHECK(a.compute.mma_m == 16);
    CHECK(a.compute.mma_n == 8);
    CHECK(a.compute.mma_k_bytes == 32);
  }
}

TEST_CASE("L2 partitions: two halves on A100 and H100 only", "[arch]") {
  CHECK(load_arch("h100", YAML::Node(), "test").l2.partitions == 2);
  CHECK(load_arch("a100", YAML::Node(), "test").l2.partitions == 2);
  for (const char* name : {"a40", "rtx4090", "rtx3050-laptop"}) {
    INFO("preset " << name);
    const ArchSpec a = load_arch(name, YAML::Node(), "test");
    CHECK(a.l2.partitions == 1);
    CHECK_FALSE(a.l2.far_copy);
  }
}

TEST_CASE("arch_overrides merge over a preset", "[arch]") {
  const ArchSpec base = load_arch("h100", YAML::Node(), "test");
  const ArchSpec a = load_arch("h100", YAML::Load("{l2: {ways: 8}}"), "exp.yaml");
  CHECK(base.l2.ways == 16);
  CHECK(a.l2.ways == 8);

  // Everything else is unchanged.
  CHECK(a.name == base.name);
  CHECK(a.description == base.description);
  CHECK(a.sm.count == base.sm.count);
  CHECK(a.sm.clock_mhz == base.sm.clock_mhz);
  CHECK(a.sm.max_threads == base.sm.max_threads);
  CHECK(a.sm.max_blocks == base.sm.max_blocks);
  CHECK(a.sm.registers == base.sm.registers);
  CHECK(a.sm.max_registers_per_thread == base.sm.max_registers_per_thread);
  CHECK(a.sm.register_alloc_unit == base.sm.register_alloc_unit);
  CHECK(a.sm.shared_memory_bytes == base.sm.shared_memory_bytes);
  CHECK(a.sm.max_shared_memory_per_block == base.sm.max_shared_memory_per_block);
  CHECK(a.sm.reserved_shared_memory_per_block == base.sm.reserved_shared_memory_per_block);
  CHECK(a.sm.partition_map == base.sm.partition_map);
  CHECK(a.sm.block_launch_ns == base.sm.block_launch_ns);
  CHECK(a.compute.flops_per_cycle == base.compute.flops_per_cycle);
  CHECK(a.compute.mma_m == base.compute.mma_m);
  CHECK(a.compute.mma_n == base.compute.mma_n);
  CHECK(a.compute.mma_k_bytes == base.compute.mma_k_bytes);
  CHECK(a.l2.bytes == base.l2.bytes);
  CHECK(a.l2.partitions == base.l2.partitions);
  CHECK(a.l2.line_bytes == base.l2.line_bytes);
  CHECK(a.l2.sector_bytes == base.l2.sector_bytes);
  CHECK(a.l2.hash == base.l2.hash);
  CHECK(a.l2.replacement == base.l2.replacement);
  CHECK(a.l2.far_copy == base.l2.far_copy);
  CHECK(a.l2.hit_latency_ns == base.l2.hit_latency_ns);
  CHECK(a.l2.far_extra_latency_ns == base.l2.far_extra_latency_ns);
  CHECK(a.l2.bandwidth_gbps == base.l2.bandwidth_gbps);
  CHECK(a.l2.fabric_bandwidth_gbps == base.l2.fabric_bandwidth_gbps);
  CHECK(a.dram.bandwidth_gbps == base.dram.bandwidth_gbps);
  CHECK(a.dram.latency_ns == base.dram.latency_ns);

  // The override does not leak into later loads of the same preset.
  CHECK(load_arch("h100", YAML::Node(), "test").l2.ways == 16);
}

TEST_CASE("an unknown override key is an error naming its path", "[arch]") {
  REQUIRE_THROWS_AS(load_arch("h100", YAML::Load("{l2: {wayz: 8}}"), "exp.yaml"), InputError);
  const std::string msg = error_of("h100", YAML::Load("{l2: {wayz: 8}}"), "exp.yaml");
  CHECK(msg.find("l2.wayz") != std::string::npos);
  CHECK(msg.find("exp.yaml") != std::string::npos);
}

TEST_CASE("an override breaking the L2 geometry is an error naming l2.bytes", "[arch]") {
  // 50 MiB + 1 KiB is not a multiple of 128 B x 16 ways x 2 partitions.
  const YAML::Node bad_bytes = YAML::Load("{l2: {bytes: 52429824}}");
  REQUIRE_THROWS_AS(load_arch("h100", bad_bytes, "exp.yaml"), InputError);
  CHECK(error_of("h100", bad_bytes, "exp.yaml").find("l2.bytes") != std::string::npos);
  // So is 50 MiB with 7 ways.
  CHECK(error_of("h100", YAML::Load("{l2: {ways: 7}}"), "exp.yaml").find("l2.bytes") != std::string::npos);
}

TEST_CASE("an unknown preset name lists the presets", "[arch]") {
  REQUIRE_THROWS_AS(load_arch("no-such-gpu", YAML::Node(), "exp.yaml"), InputError);
  const std::string msg = error_of("no-such-gpu", YAML::Node(), "exp.yaml");
  CHECK(msg.find("no-such-gpu") != std::string::npos);
  for (const auto& name : arch_preset_names()) {
    INFO("preset " << name);
    CHECK(msg.find(name) != std::string::npos);
  }
}

TEST_CASE("arch: partition_map takes interleaved, blocked or one digit per SM", "[arch]") {
  const auto with_map = [](const std::string& map) {
    YAML::Node o;
    o["sm"]["count"] = 4;
    o["sm"]["partition_map"] = map;
    o["sm"]["l2_port_fast_sms"] = YAML::Node(YAML::NodeType::Sequence);  // the preset's name SMs past 4
    o["sm"]["gpcs"] = YAML::Node(YAML::NodeType::Sequence);
    return load_arch("h100", o, "test");
  };
  CHECK(with_map("interleaved").sm.sm_half == std::vector<std::uint8_t>{0, 1, 0, 1});
  CHECK(with_map("blocked").sm.sm_half == std::vector<std::uint8_t>{0, 0, 1, 1});
  CHECK(with_map("0110").sm.sm_half == std::vector<std::uint8_t>{0, 1, 1, 0});
  CHECK_THROWS_WITH(with_map("011"), Catch::Matchers::Contains("sm.partition_map") &&
                                         Catch::Matchers::Contains("4 digits"));
  CHECK_THROWS_WITH(with_map("01x0"), Catch::Matchers::Contains("one digit 0 or 1 per SM"));
}

TEST_CASE("an override's bad L2 policy names are errors of the file, with the line it is on (issue 17, D14)",
          "[arch]") {
  // Hash and replacement names are checked where the arch is read, naming the experiment file,
  // not when the L2 is built (which named only "h100").
  const std::string hash = error_of("h100", YAML::Load("{l2: {hash: foo}}"), "exp.yaml");
  CHECK_THAT(hash, Catch::Matchers::Contains("exp.yaml") && Catch::Matchers::Contains("l2.hash") &&
                       Catch::Matchers::Contains("modulo, xor_fold") && Catch::Matchers::Contains("'foo'"));
  const std::string repl = error_of("h100", YAML::Load("{l2: {replacement: mru}}"), "exp.yaml");
  CHECK_THAT(repl, Catch::Matchers::Contains("l2.replacement") && Catch::Matchers::Contains("lru, fifo, srrip, random"));
  // The merged tree keeps the override's own line (a clone used to make every line "line 1").
  const std::string line = error_of("h100", YAML::Load("l2:\n  ways: 16\n  hash: foo\n"), "exp.yaml");
  CHECK_THAT(line, Catch::Matchers::Contains("l2.hash (line 3)"));
}

TEST_CASE("arch: a main loop's measured tile ceilings replace its efficiency for those tiles", "[arch]") {
  const ArchSpec a = load_arch("h100", YAML::Node(), "test");
  const MainLoopSpec& ml = a.compute.mainloop(MainLoop::wgmma_cp_async);
  // Measured (calibration/measurements/h100/tile_ceiling): a 64-wide tile far below a large one.
  CHECK(ml.efficiency_for(64, 64, 4) == Approx(0.515));
  CHECK(ml.efficiency_for(128, 256, 8) == Approx(0.891));
  CHECK(ml.efficiency_for(128, 128, 4) == Approx(0.882));
  // A tile or warp count not measured takes the kind's efficiency; an override beats both.
  CHECK(ml.efficiency_for(128, 64, 8) == ml.efficiency);
  CHECK(ml.efficiency_for(32, 32, 4) == ml.efficiency);
  CHECK(a.compute.efficiency(MainLoop::wgmma_cp_async, 0, 64, 64, 4) == Approx(0.515));
  CHECK(a.compute.efficiency(MainLoop::wgmma_cp_async, 0.7, 64, 64, 4) == Approx(0.7));
  CHECK(a.compute.efficiency(MainLoop::wgmma_cp_async, 0) == ml.efficiency);
  // An empty list switches them off; bad entries are errors naming the key.
  const ArchSpec off = load_arch("h100", YAML::Load("{compute: {mainloops: {wgmma_cp_async: {tile_efficiency: []}}}}"), "x.yaml");
  CHECK(off.compute.mainloop(MainLoop::wgmma_cp_async).efficiency_for(64, 64, 4) == ml.efficiency);
  const std::string twice = error_of(
      "h100",
      YAML::Load("{compute: {mainloops: {wgmma_cp_async: {tile_efficiency: [{tile: [64, 64], warps: 4, efficiency: 0.5}, "
                 "{tile: [64, 64], warps: 4, efficiency: 0.6}]}}}}"),
      "x.yaml");
  CHECK(twice.find("listed twice") != std::string::npos);
  const std::string shape = error_of(
      "h100", YAML::Load("{compute: {mainloops: {wgmma_cp_async: {tile_efficiency: [{tile: [64], warps: 4, efficiency: 0.5}]}}}}"),
      "x.yaml");
  CHECK(shape.find("tile_efficiency") != std::string::npos);
  CHECK(shape.find("[rows, cols]") != std::string::npos);
  const std::string high = error_of(
      "h100",
      YAML::Load("{compute: {mainloops: {wgmma_cp_async: {tile_efficiency: [{tile: [64, 64], warps: 4, efficiency: 1.5}]}}}}"),
      "x.yaml");
  CHECK(high.find("efficiency") != std::string::npos);
}

TEST_CASE("arch: a main loop's prefetch rule, per kind, and a bad one names the key", "[arch]") {
  const ArchSpec a = load_arch("h100", YAML::Node(), "test");
  // The project's mma.sync kernels wait for a stage before copying the next; Triton and TMA
  // producers copy as soon as a buffer is free (docs/archs.md).
  CHECK(a.compute.mainloop(MainLoop::mma_sync).prefetch_after_wait);
  CHECK_FALSE(a.compute.mainloop(MainLoop::wgmma_cp_async).prefetch_after_wait);
  CHECK_FALSE(a.compute.mainloop(MainLoop::wgmma_tma_ws).prefetch_after_wait);
  const ArchSpec free = load_arch("h100", YAML::Load("{compute: {mainloops: {mma_sync: {prefetch: when_free}}}}"), "x.yaml");
  CHECK_FALSE(free.compute.mainloop(MainLoop::mma_sync).prefetch_after_wait);
  const std::string bad = error_of("h100", YAML::Load("{compute: {mainloops: {mma_sync: {prefetch: early}}}}"), "x.yaml");
  CHECK(bad.find("prefetch") != std::string::npos);
  CHECK(bad.find("after_wait") != std::string::npos);
  CHECK(bad.find("early") != std::string::npos);
}

TEST_CASE("arch: sm.placement takes round_robin, gpc or gpc_fill, and gpc needs the GPCs", "[arch]") {
  CHECK(load_arch("a100", YAML::Node(), "test").sm.placement == SmSpec::Placement::round_robin);  // the default
  CHECK(load_arch("h100", YAML::Node(), "test").sm.placement == SmSpec::Placement::gpc_fill);      // measured
  CHECK(load_arch("h200", YAML::Node(), "test").sm.placement == SmSpec::Placement::gpc_fill);
  CHECK(load_arch("h100", YAML::Load("{sm: {placement: gpc}}"), "x.yaml").sm.placement == SmSpec::Placement::gpc);
  CHECK(load_arch("h100", YAML::Load("{sm: {placement: gpc_fill}}"), "x.yaml").sm.placement == SmSpec::Placement::gpc_fill);
  const std::string bad = error_of("h100", YAML::Load("{sm: {placement: tpc}}"), "x.yaml");
  CHECK(bad.find("sm.placement") != std::string::npos);
  CHECK(bad.find("round_robin") != std::string::npos);
  const std::string none = error_of("a100", YAML::Load("{sm: {placement: gpc}}"), "x.yaml");
  CHECK(none.find("sm.gpcs") != std::string::npos);
  // gpc_fill without GPCs: every SM is unlisted, so index order.
  CHECK(load_arch("a100", YAML::Load("{sm: {placement: gpc_fill}}"), "x.yaml").sm.placement == SmSpec::Placement::gpc_fill);
}

// The H100's near/far probe put every SM of a GPC (as the cluster probe found them) in one L2
// half: with gpc_fill placement, consecutive blocks share a half (docs/validation.md).
TEST_CASE("arch: the h100 and h200 maps put each GPC wholly in one L2 half, 64 SMs and 68", "[arch]") {
  for (const char* name : {"h100", "h200"}) {
    const ArchSpec a = load_arch(name, YAML::Node(), "test");
    REQUIRE(a.sm.sm_half.size() == 132);
    std::uint32_t in_half1 = 0;
    for (std::uint8_t h : a.sm.sm_half) in_half1 += h;
    CHECK(in_half1 == 68);
    for (const auto& g : a.sm.gpcs)
      for (std::uint32_t sm : g) CHECK(a.sm.sm_half[sm] == a.sm.sm_half[g.front()]);
  }
}

TEST_CASE("arch: sm.l2_port_sharing takes fifo (the default) or fair", "[arch]") {
  CHECK(load_arch("h100", YAML::Node(), "test").sm.l2_port_sharing == SmSpec::PortSharing::fifo);
  CHECK(load_arch("h100", YAML::Load("{sm: {l2_port_sharing: fair}}"), "x.yaml").sm.l2_port_sharing ==
        SmSpec::PortSharing::fair);
  const std::string bad = error_of("h100", YAML::Load("{sm: {l2_port_sharing: shared}}"), "x.yaml");
  CHECK(bad.find("sm.l2_port_sharing") != std::string::npos);
  CHECK(bad.find("fifo") != std::string::npos);
}

TEST_CASE("arch: a main loop's waiting_holds is 0 unless set, a fraction", "[arch]") {
  // h100 and h200 set it for wgmma_cp_async (measured: docs/validation.md); nothing else does.
  CHECK(load_arch("h100", YAML::Node(), "test").compute.mainloop(MainLoop::wgmma_cp_async).waiting_holds == 1);
  CHECK(load_arch("h200", YAML::Node(), "test").compute.mainloop(MainLoop::wgmma_cp_async).waiting_holds == 1);
  CHECK(load_arch("h100", YAML::Node(), "test").compute.mainloop(MainLoop::mma_sync).waiting_holds == 0);
  CHECK(load_arch("h100", YAML::Load("{compute: {mainloops: {wgmma_cp_async: {waiting_holds: 0.5}}}}"), "x.yaml")
            .compute.mainloop(MainLoop::wgmma_cp_async)
            .waiting_holds == 0.5);
  const std::string bad = error_of("h100", YAML::Load("{compute: {mainloops: {wgmma_cp_async: {waiting_holds: 2}}}}"), "x.yaml");
  CHECK(bad.find("waiting_holds") != std::string::npos);
}

TEST_CASE("arch: a main loop's l2_port_gbps is 0 unless set, and takes precedence over its factor", "[arch]") {
  const ArchSpec h100 = load_arch("h100", YAML::Node(), "test");
  const MainLoopSpec& tma = h100.compute.mainloop(MainLoop::wgmma_tma_ws);
  CHECK(tma.l2_port_gbps == 0);
  const double sm_mbps = h100.sm.l2_port_mbps(1980);
  CHECK(tma.port_factor(sm_mbps) == tma.l2_port_factor);
  const ArchSpec fixed = load_arch("h100", YAML::Load("{compute: {mainloops: {wgmma_tma_ws: {l2_port_gbps: 108}}}}"), "x.yaml");
  const MainLoopSpec& f = fixed.compute.mainloop(MainLoop::wgmma_tma_ws);
  CHECK(f.l2_port_gbps == 108);
  CHECK(f.port_factor(sm_mbps) * sm_mbps == Approx(108000));
  CHECK(f.port_factor(h100.sm.l2_port_mbps(990)) * h100.sm.l2_port_mbps(990) == Approx(108000));
  const std::string bad = error_of("h100", YAML::Load("{compute: {mainloops: {wgmma_tma_ws: {l2_port_gbps: -1}}}}"), "x.yaml");
  CHECK(bad.find("l2_port_gbps") != std::string::npos);
}
