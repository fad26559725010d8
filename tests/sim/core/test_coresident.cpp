// The SMs' own speeds while blocks share them (a main loop's coresident_rate_sd).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/error.hpp"
#include "sim/core/engine.hpp"
#include "sim/core/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::test;
using Catch::Matchers::Contains;

namespace {

// `blocks` compute-bound blocks of 50 steps (each step re-reads one line, a hit after the first
// step; 1 us of MMA at the full rate), `per_sm` of them on each SM at once.
Workload compute_bound(std::uint32_t blocks, std::uint32_t per_sm) {
  Kernel k = toy_kernel(4);
  for (std::uint32_t b = 0; b < blocks; ++b) add_block(k, std::vector<std::uint32_t>(50, 0), 1000000);
  k.blocks_per_sm = per_sm;
  return one_kernel(std::move(k));
}

// Each SM's block duration (they are alike on one SM), in ps.
std::map<std::uint32_t, Time> duration_by_sm(const SimResult& r) {
  std::map<std::uint32_t, Time> d;
  for (const BlockRecord& b : r.blocks) d[b.sm] = std::max(d[b.sm], b.end - b.start);
  return d;
}

}  // namespace

TEST_CASE("coresident deviations: one per SM, bell-shaped around zero, bounded, the same for a seed", "[sim]") {
  const auto z = detail::coresident_deviations(4096, 1);
  REQUIRE(z.size() == 4096);
  double sum = 0, sq = 0;
  for (double v : z) sum += v, sq += v * v;
  const double mean = sum / 4096, sd = std::sqrt(sq / 4096 - mean * mean);
  CHECK(std::abs(mean) < 0.06);
  CHECK(sd == Approx(1.0).epsilon(0.05));
  CHECK(*std::max_element(z.begin(), z.end()) < 3.47);
  CHECK(*std::min_element(z.begin(), z.end()) > -3.47);
  CHECK(detail::coresident_deviations(4096, 1) == z);
  CHECK(detail::coresident_deviations(4096, 2) != z);
}

TEST_CASE("coresident rate spread: SMs holding two blocks keep their own speed, a lone block runs alike on any",
          "[sim]") {
  ArchSpec arch = toy_arch(8);
  arch.compute.mainloops[static_cast<int>(MainLoop::mma_sync)].coresident_rate_sd = 0.05;
  // Two blocks on each of 8 SMs share its pipe: 100 us each, times the SM's factor.
  const SimResult two = simulate(compute_bound(16, 2), arch, SimOptions{});
  const auto d2 = duration_by_sm(two);
  REQUIRE(d2.size() == 8);
  Time lo = d2.begin()->second, hi = lo;
  for (const auto& [sm, t] : d2) lo = std::min(lo, t), hi = std::max(hi, t);
  CHECK(static_cast<double>(hi - lo) > 0.02 * static_cast<double>(lo));  // SMs apart by several percent
  CHECK(static_cast<double>(hi) < 1.2 * 100e6);                          // bounded: 3.5 sd at most
  // The same run again: the same speeds.
  CHECK(duration_by_sm(simulate(compute_bound(16, 2), arch, SimOptions{})) == d2);
  // Without the spread, alike.
  ArchSpec flat = toy_arch(8);
  const auto d0 = duration_by_sm(simulate(compute_bound(16, 2), flat, SimOptions{}));
  for (const auto& [sm, t] : d0) CHECK(t == d0.begin()->second);
  // One block per SM: the spread does not act.
  const auto d1 = duration_by_sm(simulate(compute_bound(8, 1), arch, SimOptions{}));
  REQUIRE(d1.size() == 8);
  for (const auto& [sm, t] : d1) CHECK(t == d1.begin()->second);
}

TEST_CASE("coresident rate spread: the key is checked", "[sim][config]") {
  const std::string yaml = R"(
name: toy
sm: {count: 1, clock_mhz: 1000, max_threads: 2048, max_blocks: 32, registers: 65536,
     shared_memory_bytes: 233472, max_shared_memory_per_block: 232448}
compute: {flops_per_cycle: {fp16: 1000}, mainloop: mma_sync,
          mainloops: {mma_sync: {efficiency: 1.0, saturating_warps: 1, arbitration: fair, coresident_rate_sd: 0.5}}}
l2: {bytes: 4096, partitions: 1, line_bytes: 128, sector_bytes: 32, ways: 4, hash: modulo, replacement: lru,
     hit_latency_ns: 100, bandwidth_gbps: 256}
dram: {bandwidth_gbps: 128, latency_ns: 200}
)";
  CHECK_THROWS_WITH(parse_arch(ConfigNode(YAML::Load(yaml), "toy.yaml", "")),
                    Contains("toy.yaml") && Contains("coresident_rate_sd"));
}
