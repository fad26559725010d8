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

// A's counters of one 16-row GEMM under the h100 preset (the power cap off) with `l2` overrides.
MemCounters a_counters(std::uint32_t tile_m, const std::string& ragged, const std::string& l2) {
  const std::string text = "arch: h100\narch_overrides: {power: {cap_w: 0}" + (l2.empty() ? "" : ", l2: {" + l2 + "}") +
                           "}\nworkload: {kind: gemm, m: 16, n: 64, k: 512, tile: [" + std::to_string(tile_m) +
                           ", 64, 64], ragged: " + ragged + "}\n";
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
