// The L2 request coalescer folds one SM's repeated requests for a rectangle (a wrapped tile's
// rows past M, workload ragged: wrap) into lookups of at most l2.request_coalescing_max
// requests: measured on the H100, a 128-row Triton tile over M = 16 (each row requested eight
// times) reaches the L2 as two lookups of the rows per k-step, a 64-row tile (four) as one
// (calibration/measurements/h100/row_wrap).
#include <catch2/catch.hpp>

#include "sim/config/experiment.hpp"
#include "sim/core/simulator.hpp"

using namespace tilesim;

namespace {

// A's counters of one 16-row GEMM (`n` columns: n / 64 blocks) under the h100 preset (the power
// cap off) with `l2` overrides.
MemCounters a_counters(std::uint32_t tile_m, const std::string& ragged, const std::string& l2, std::uint32_t n = 64,
                       std::uint32_t bk = 64) {
  const std::string text = "arch: h100\narch_overrides: {power: {cap_w: 0}" + (l2.empty() ? "" : ", l2: {" + l2 + "}") +
                           "}\nworkload: {kind: gemm, m: 16, n: " + std::to_string(n) + ", k: 512, tile: [" + std::to_string(tile_m) +
                           ", 64, " + std::to_string(bk) + "], ragged: " + ragged + "}\n";
  const ExperimentPoint p = load_experiment_text(text, "exp.yaml", ".", {}).points.at(0);
  return simulate(*p.workload, p.arch, p.options).kernels.at(0).tensors.at(0).mem;
}

}  // namespace

TEST_CASE("request coalescer: one SM's repeats of a rectangle reach the L2 once per four", "[sim][coalescer]") {
  // A is 16 rows x 512 fp16 = 512 sectors, read once per k-step slice by the one block.
  constexpr std::uint64_t kOnce = 16 * 512 * 2 / 32;
  // 128 rows: eight requests per slice, two lookups (the second all hits), six folded.
  const MemCounters eight = a_counters(128, "wrap", "");
  CHECK(eight.read_sectors == 2 * kOnce);
  CHECK(eight.read_hit_sectors == kOnce);
  CHECK(eight.coalesced_sectors == 6 * kOnce);
  CHECK(eight.dram_read_bytes == kOnce * 32);
  // 64 rows: four requests, one lookup.
  const MemCounters four = a_counters(64, "wrap", "");
  CHECK(four.read_sectors == kOnce);
  CHECK(four.coalesced_sectors == 3 * kOnce);
  // No limit folds every repeat; no coalescer looks every one up; mask reads the rows once.
  CHECK(a_counters(128, "wrap", "request_coalescing_max: 0").read_sectors == kOnce);
  const MemCounters none = a_counters(128, "wrap", "request_coalescing_ns: 0");
  CHECK(none.read_sectors == 8 * kOnce);
  CHECK(none.coalesced_sectors == 0);
  const MemCounters masked = a_counters(128, "mask", "");
  CHECK(masked.read_sectors == kOnce);
  CHECK(masked.coalesced_sectors == 0);
}

TEST_CASE("request coalescer: one entry carries at most four requests, whichever SMs send them", "[sim][coalescer]") {
  constexpr std::uint64_t kOnce = 16 * 512 * 2 / 32;
  constexpr std::uint32_t kBlocks = 32;  // one wave, every block reading A's rows at each k-step together
  // Four repeats per block fill its own entry: no other block's request joins it, every block
  // looks A up once per slice (the Triton decode matmuls: only the repeats are merged).
  const MemCounters wrapped = a_counters(64, "wrap", "", 64 * kBlocks);
  CHECK(wrapped.read_sectors == kBlocks * kOnce);
  CHECK(wrapped.coalesced_sectors == 3 * kBlocks * kOnce);
  // One request per block: blocks in step merge into one another's entries, three to a lookup
  // at most, so at least a quarter of the requests are looked up.
  const MemCounters once = a_counters(16, "mask", "", 64 * kBlocks);
  CHECK(once.coalesced_sectors > 0);
  CHECK(once.read_sectors + once.coalesced_sectors == kBlocks * kOnce);
  CHECK(once.read_sectors * 4 >= kBlocks * kOnce);
  // Without the bound the same blocks merge more.
  const MemCounters unbounded = a_counters(16, "mask", "request_coalescing_max: 0", 64 * kBlocks);
  CHECK(unbounded.coalesced_sectors > once.coalesced_sectors);
}

TEST_CASE("request coalescer: other SMs' requests for part of each line are not merged", "[sim][coalescer]") {
  constexpr std::uint64_t kOnce = 16 * 512 * 2 / 32;
  constexpr std::uint32_t kBlocks = 32;
  // 32-element k-steps read 64 bytes of each 128-byte line of A: every block's request is looked
  // up (CUTLASS 2's and the project's kernels: measured merges of 8% where whole lines merge).
  const MemCounters halves = a_counters(16, "mask", "", 64 * kBlocks, 32);
  CHECK(halves.coalesced_sectors == 0);
  CHECK(halves.read_sectors == kBlocks * kOnce);
  // Whole lines (64-element k-steps) merge across the same blocks.
  CHECK(a_counters(16, "mask", "", 64 * kBlocks, 64).coalesced_sectors > 0);
  // Nor do one SM's repeats of a part line fold: part-line reads reach the L2 a sector a request
  // (measured: the W4A16 decode kernel's wrapped 64-byte halves of A, 4.14 M lookups against the
  // 1.89 M that folding four to one gives; docs/validation.md, "Part lines are not folded either").
  const MemCounters repeats = a_counters(64, "wrap", "", 64, 32);
  CHECK(repeats.read_sectors == 4 * kOnce);
  CHECK(repeats.coalesced_sectors == 0);
}

TEST_CASE("request coalescer: bulk copies (TMA) are bounded at four requests a lookup too", "[sim][coalescer]") {
  // Measured (calibration/measurements/h100/lrc_share): 132 SMs streaming the same pieces with
  // cp.async.bulk reach the L2 as one lookup per 3.6-3.8 requests, as loads do.
  const std::string text =
      "arch: h100\narch_overrides: {power: {cap_w: 0}}\nworkload: {kind: gemm, m: 16, n: 2048, k: 256, "
      "tile: [128, 64, 64], stages: 4, mainloop: wgmma_tma_ws}\n";  // every k-step's copies issued at launch
  const ExperimentPoint p = load_experiment_text(text, "exp.yaml", ".", {}).points.at(0);
  const MemCounters a = simulate(*p.workload, p.arch, p.options).kernels.at(0).tensors.at(0).mem;
  constexpr std::uint64_t kRequested = 32 * (16 * 256 * 2 / 32);  // 32 blocks read all of A once each
  CHECK(a.read_sectors + a.coalesced_sectors == kRequested);
  CHECK(a.coalesced_sectors > 0);
  CHECK(a.read_sectors * 4 >= kRequested);
}

TEST_CASE("request coalescer: a request waiting for a busy crossbar stays open to others", "[sim][coalescer]") {
  // The blocks of one wave read A's rows at each k-step together. With a slow crossbar their
  // requests queue; while one waits, later requests for the same rows join it (measured: the
  // 4096^3 Triton matmuls merge 21-45% of their reads where a fixed window merges 8-45%).
  constexpr std::uint32_t kBlocks = 32;
  // The window of the presets before 2026-12-02 (one coalescer, 20 ns): the queue's effect shows.
  const std::string slow = "crossbar_bandwidth_gbps: 20, request_coalescing_ns: 20, request_coalescing_per_gpc: false, "
                           "request_coalescing_queue: ";
  const MemCounters queued = a_counters(16, "mask", slow + "true", 64 * kBlocks);
  const MemCounters fixed = a_counters(16, "mask", slow + "false", 64 * kBlocks);
  CHECK(queued.coalesced_sectors > fixed.coalesced_sectors);
  CHECK(queued.read_sectors + queued.coalesced_sectors == fixed.read_sectors + fixed.coalesced_sectors);
  // An unlimited crossbar has no queue: the window is the fixed one either way.
  const std::string idle = "crossbar_bandwidth_gbps: 0, request_coalescing_ns: 20, request_coalescing_per_gpc: false, "
                           "request_coalescing_queue: ";
  CHECK(a_counters(16, "mask", idle + "true", 64 * kBlocks).coalesced_sectors ==
        a_counters(16, "mask", idle + "false", 64 * kBlocks).coalesced_sectors);
}

TEST_CASE("request coalescer: the coalescer holds only the first request_coalescing_queue_max_ns of the queue",
          "[sim][coalescer]") {
  // Beyond the bound the queue backs up into the SMs, whose requests have not reached the
  // coalescer: a bounded window merges fewer than the whole queue and more than the fixed one;
  // a bound longer than any wait is no bound.
  constexpr std::uint32_t kBlocks = 32;
  // The window of the presets before 2026-12-02 (one coalescer, 20 ns): the queue's effect shows.
  const std::string slow = "crossbar_bandwidth_gbps: 20, request_coalescing_ns: 20, request_coalescing_per_gpc: false, "
                           "request_coalescing_queue: ";
  const MemCounters whole = a_counters(16, "mask", slow + "true, request_coalescing_queue_max_ns: 0", 64 * kBlocks);
  const MemCounters fixed = a_counters(16, "mask", slow + "false", 64 * kBlocks);
  const MemCounters bounded =
      a_counters(16, "mask", slow + "true, request_coalescing_queue_max_ns: 100", 64 * kBlocks);
  CHECK(bounded.coalesced_sectors < whole.coalesced_sectors);
  CHECK(bounded.coalesced_sectors > fixed.coalesced_sectors);
  CHECK(bounded.read_sectors + bounded.coalesced_sectors == whole.read_sectors + whole.coalesced_sectors);
  CHECK(a_counters(16, "mask", slow + "true, request_coalescing_queue_max_ns: 1000000", 64 * kBlocks).coalesced_sectors ==
        whole.coalesced_sectors);
}

TEST_CASE("request coalescer: with one per GPC, only requests from SMs of one GPC merge", "[sim][coalescer]") {
  // Measured on the H200 (calibration/measurements/h200/lrc_delay/pairs): two SMs of one GPC
  // streaming the same lines merge, two of different GPCs never do, whatever the delay.
  constexpr std::uint32_t kBlocks = 32;  // one wave, one block an SM, all reading A's rows together
  auto a_with = [&](const std::string& gpcs, bool per_gpc) {
    // Replacing sm.gpcs drops the preset's joins, which index its own map.
    const std::string text = "arch: h100\narch_overrides: {power: {cap_w: 0}, sm: {gpcs: " + gpcs +
                             "}, l2: {request_coalescing_per_gpc: " + (per_gpc ? "true" : "false") +
                             "}}\nworkload: {kind: gemm, m: 16, n: " + std::to_string(64 * kBlocks) +
                             ", k: 512, tile: [16, 64, 64], ragged: mask}\n";
    const ExperimentPoint p = load_experiment_text(text, "exp.yaml", ".", {}).points.at(0);
    return simulate(*p.workload, p.arch, p.options).kernels.at(0).tensors.at(0).mem;
  };
  // GPCs of two SMs, of every SM, of one SM each.
  std::string pairs = "[", one = "[[", each = "[";
  for (std::uint32_t s = 0; s < 132; ++s) {
    if (s % 2 == 0) pairs += (s ? ", [" : "[") + std::to_string(s) + ", " + std::to_string(s + 1) + "]";
    one += (s ? ", " : "") + std::to_string(s);
    each += (s ? ", [" : "[") + std::to_string(s) + "]";
  }
  pairs += "]";
  one += "]]";
  each += "]";
  // Pairs merge two requests a lookup at most, one coalescer up to its four.
  const MemCounters gpu = a_with(pairs, false), gpc = a_with(pairs, true);
  CHECK(gpc.coalesced_sectors > 0);
  CHECK(gpc.coalesced_sectors < gpu.coalesced_sectors);
  CHECK(gpc.read_sectors + gpc.coalesced_sectors == gpu.read_sectors + gpu.coalesced_sectors);
  CHECK(gpc.read_sectors * 2 >= kBlocks * (16 * 512 * 2 / 32));
  // One GPC of every SM is one coalescer; a GPC per SM merges nothing across SMs.
  CHECK(a_with(one, true).coalesced_sectors == a_with(one, false).coalesced_sectors);
  CHECK(a_with(each, true).coalesced_sectors == 0);
  CHECK(a_with(each, false).coalesced_sectors > 0);
}

TEST_CASE("request coalescer: groups of sm.gpcs joined into one GPC share its coalescer", "[sim][coalescer]") {
  // Measured on the H200 (calibration/measurements/h200/lrc_delay/gpc0): the cluster map's four
  // pairs 124-131 and its group of 8 merge each other's requests; SM 6's GPC merges with none.
  constexpr std::uint32_t kBlocks = 32;
  auto a_with = [&](const std::string& joined) {
    std::string gpcs = "[";
    for (std::uint32_t s = 0; s < 132; s += 2) gpcs += (s ? ", [" : "[") + std::to_string(s) + ", " + std::to_string(s + 1) + "]";
    gpcs += "]";
    const std::string text = "arch: h100\narch_overrides: {power: {cap_w: 0}, sm: {gpcs: " + gpcs + joined +
                             "}, l2: {request_coalescing_per_gpc: true}}\nworkload: {kind: gemm, m: 16, n: " +
                             std::to_string(64 * kBlocks) + ", k: 512, tile: [16, 64, 64], ragged: mask}\n";
    const ExperimentPoint p = load_experiment_text(text, "exp.yaml", ".", {}).points.at(0);
    return simulate(*p.workload, p.arch, p.options).kernels.at(0).tensors.at(0).mem;
  };
  // The h100 preset joins its own map's groups; this map of pairs replaces them, joins and all.
  const MemCounters pairs = a_with(""), joined = a_with(", gpcs_joined: [[0, 1, 2, 3, 4, 5, 6, 7]]");
  CHECK(joined.coalesced_sectors > pairs.coalesced_sectors);
  CHECK(joined.read_sectors + joined.coalesced_sectors == pairs.read_sectors + pairs.coalesced_sectors);
  // A bad join names the key.
  CHECK_THROWS_WITH(a_with(", gpcs_joined: [[0, 99]]"), Catch::Contains("gpcs_joined") && Catch::Contains("no group 99"));
  CHECK_THROWS_WITH(a_with(", gpcs_joined: [[0, 1], [1, 2]]"), Catch::Contains("joined twice"));
  // An override that empties the map drops the preset's joins with it; joins of its own beside an
  // empty map are an error naming the key.
  const auto empty_map = [](const std::string& joined) {
    return load_experiment_text("arch: h100\narch_overrides: {sm: {gpcs: []" + joined + "}}\nworkload: {kind: gemm, m: 128, n: 128, k: 64, tile: [64, 64, 64]}\n",
                                "exp.yaml", ".", {});
  };
  CHECK(empty_map("").points.at(0).arch.sm.gpc_of_group.empty());
  CHECK_NOTHROW(empty_map(", gpcs_joined: []"));
  CHECK_THROWS_WITH(empty_map(", gpcs_joined: [[0, 1]]"), Catch::Contains("gpcs_joined") && Catch::Contains("needs sm.gpcs"));
  // An override that leaves the map keeps the preset's joins.
  const ExperimentPoint kept = load_experiment_text("arch: h100\narch_overrides: {sm: {l2_port_fast_factor: 1.3}}\n"
                                                    "workload: {kind: gemm, m: 128, n: 128, k: 64, tile: [64, 64, 64]}\n",
                                                    "exp.yaml", ".", {}).points.at(0);
  CHECK(kept.arch.sm.gpc_of_group.size() == kept.arch.sm.gpcs.size());
  CHECK(kept.arch.sm.gpc_of_group.at(8) == kept.arch.sm.gpc_of_group.at(0));
}

TEST_CASE("request coalescer: an entry survives the lines later lookups bring in (request_coalescing_lines)",
          "[sim][coalescer]") {
  // 32 blocks in one wave read A's rows at each k-step together; between one block's lookup and
  // another's request for the same rows, the GPC's other lookups (B's tiles) bring lines in. Room
  // for a billion lines keeps every entry (as without the key); less room merges fewer; almost
  // none merges only what no line came between.
  const auto merged = [](const std::string& l2) { return a_counters(16, "mask", l2, 64 * 32).coalesced_sectors; };
  const std::uint64_t base = merged("");
  REQUIRE(base > 0);
  CHECK(merged("request_coalescing_lines: 1000000000") >= base * 999 / 1000);
  const std::uint64_t some = merged("request_coalescing_lines: 2000"), little = merged("request_coalescing_lines: 200");
  INFO("base " << base << ", 2000 lines " << some << ", 200 lines " << little);
  CHECK(some < base);
  CHECK(little < some);
  CHECK(merged("request_coalescing_lines: 2000") == some);  // the draws repeat
}
