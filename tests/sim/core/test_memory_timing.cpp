// MemoryTiming: which servers a step's sectors pass through, worked out on paper.
#include <algorithm>
#include <cmath>
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "common/config_node.hpp"
#include "sim/core/memory_timing.hpp"

using namespace tilesim;

namespace {

// Two SMs at 1 GHz, one per L2 half (interleaved map), no port limit; each half looks up
// 64 GB/s (0.5 ns per 32-byte sector) with no latency; `crossbar` per half as given.
ArchSpec two_half_arch(double crossbar_gbps) {
  const std::string yaml = R"(
name: halves
sm: {count: 2, clock_mhz: 1000, max_threads: 2048, max_blocks: 32, registers: 65536,
     shared_memory_bytes: 233472, max_shared_memory_per_block: 232448, block_launch_ns: 0}
compute: {flops_per_cycle: {fp16: 1000}, mainloop: mma_sync,
          mainloops: {mma_sync: {efficiency: 1.0, saturating_warps: 1, arbitration: fair}}}
l2: {bytes: 65536, partitions: 2, line_bytes: 128, sector_bytes: 32, ways: 4, hash: modulo,
     hit_latency_ns: 0, bandwidth_gbps: 64, crossbar_bandwidth_gbps: )" +
                           std::to_string(crossbar_gbps) + R"(}
dram: {bandwidth_gbps: 128, latency_ns: 200}
)";
  return parse_arch(ConfigNode(YAML::Load(yaml), "halves.yaml", ""));
}

// `n` sectors requested by an SM of half `req`, all hits, `far` of them looked up in the other half.
L2AccessResult hits(std::uint64_t n, std::uint64_t far, std::uint32_t req) {
  L2AccessResult r;
  r.sectors = n;
  r.hit_sectors = n;
  r.fabric_sectors = far;
  r.partition_sectors[req] = n;
  r.partition_sectors[1 - req] = far;
  return r;
}

constexpr Time kNs = 1000;  // ps

}  // namespace

TEST_CASE("L2 crossbar: a half's SMs share its crossbar, lookups over the fabric do not use it",
          "[sim][memory]") {
  SECTION("unlimited crossbar: only the halves' lookups bound the time") {
    MemoryTiming m(two_half_arch(0));
    // 100 sectors in the near half: 50 ns; then 100 more from the other SM's half, in parallel.
    CHECK(m.serve(0, 0, hits(100, 0, 0), 0).ready == 50 * kNs);
    CHECK(m.serve(1, 0, hits(100, 0, 1), 0).ready == 50 * kNs);
  }
  SECTION("a slower crossbar binds the requester's half only") {
    MemoryTiming m(two_half_arch(32));  // 1 ns per sector
    CHECK(m.serve(0, 0, hits(100, 0, 0), 0).ready == 100 * kNs);
    CHECK(m.serve(0, 0, hits(100, 0, 0), 0).ready == 200 * kNs);  // queues behind the first
    CHECK(m.serve(1, 0, hits(100, 0, 1), 0).ready == 100 * kNs);  // the other half's crossbar is free
  }
  SECTION("far sectors take the far half's lookups and the near half's crossbar") {
    MemoryTiming m(two_half_arch(32));
    // SM 0 reads 100 sectors, 80 looked up in half 1: its crossbar carries all 100 (100 ns).
    CHECK(m.serve(0, 0, hits(100, 80, 0), 0).ready == 100 * kNs);
    // SM 1's crossbar did not carry them: half 1's lookups did (80 x 0.5 = 40 ns busy), so
    // 20 sectors from SM 1 wait for those lookups (40 + 10 ns) but not for a crossbar (20 ns).
    CHECK(m.serve(1, 0, hits(20, 0, 1), 0).ready == 50 * kNs);
  }
}

TEST_CASE("DRAM fill jitter: a fill arrives within dram.fill_jitter_ns / 2 of its time, the same in every run", "[sim][memory]") {
  // 64 misses of one sector each, one SM, at 10 ns intervals (the DRAM never queues: 0.25 ns a
  // sector): without jitter each fill is there 200 ns (latency) + 0.25 ns after its request.
  L2AccessResult miss;
  miss.sectors = 1;
  miss.partition_sectors[0] = 1;
  miss.dram_read_sectors = 1;
  ArchSpec jittery = two_half_arch(0);
  jittery.dram.fill_jitter_ns = 300;
  MemoryTiming plain(two_half_arch(0)), a(jittery, 7), b(jittery, 7), c(jittery, 8);
  double lo = 1e18, hi = -1e18, sum = 0;
  bool other_seed_differs = false;
  for (Time i = 0; i < 64; ++i) {
    const Time now = i * 10 * kNs;
    const Time base = plain.serve(0, now, miss, now).filled;
    const Time fa = a.serve(0, now, miss, now).filled;
    CHECK(fa == b.serve(0, now, miss, now).filled);
    other_seed_differs = other_seed_differs || c.serve(0, now, miss, now).filled != fa;
    const double shift = static_cast<double>(fa) - static_cast<double>(base);
    lo = std::min(lo, shift);
    hi = std::max(hi, shift);
    sum += shift;
  }
  CHECK(lo < -100.0 * kNs);  // spread over the whole -150..+150 ns
  CHECK(lo > -150.0 * kNs);
  CHECK(hi > 100.0 * kNs);
  CHECK(hi < 150.0 * kNs);
  CHECK(std::abs(sum / 64) < 40.0 * kNs);  // centred: the mean latency stays the measured one
  CHECK(other_seed_differs);
}

TEST_CASE("L2 return path: a request's data waits in proportion to all SMs' recent traffic",
          "[sim][memory]") {
  ArchSpec arch = two_half_arch(0);
  arch.l2.return_wait_ns_per_tbps = 1000;  // 1 ns per GB/s
  MemoryTiming m(arch);
  // The first request meets no traffic: 10 sectors, 5 ns of lookups.
  CHECK(m.serve(0, 0, hits(10, 0, 0), 0).ready == 5 * kNs);
  // 64 KiB more from SM 0 at t = 0: over the 2 us window that is 32.8 GB/s of traffic, which the
  // other half's SM meets too (one path for the whole GPU), merged sectors counted as delivered.
  m.serve(0, 0, hits(1024, 0, 0), 0, 1024);
  const Time other = m.serve(1, 0, hits(10, 0, 1), 0).ready;
  CHECK(static_cast<double>(other) / kNs == Approx(5 + (320 + 65536) / 2000.0).epsilon(0.01));
  // The port is not delayed by the wait: a port-bound step still ends when its bytes are through.
  CHECK(m.serve(1, 0, hits(10, 0, 1), 0).port <= m.serve(1, 0, hits(10, 0, 1), 0).ready);
}

TEST_CASE("L2 hits behind misses: a hit pays a share of DRAM's current wait (l2.hit_wait_dram_share)",
          "[sim][memory]") {
  ArchSpec arch = two_half_arch(0);
  // Misses fill 64 KiB from DRAM at 128 GB/s (512 ns of backlog) at t = 0 from SM 0.
  L2AccessResult miss;
  miss.sectors = 2048;
  miss.dram_read_sectors = 2048;
  miss.partition_sectors[0] = 2048;
  for (const double share : {0.0, 0.5}) {
    arch.l2.hit_wait_dram_share = share;
    MemoryTiming m(arch);
    // Idle DRAM: a hit waits nothing, share or not (10 sectors, 5 ns of lookups).
    CHECK(m.serve(1, 0, hits(10, 0, 1), 0).ready == 5 * kNs);
    m.serve(0, 0, miss, 0);
    // 100 ns later DRAM still holds ~412 ns of the fill: the other half's hit pays half of it
    // (and no queueing wait: dram.queue_latency_ns is 0 here), or nothing with share 0.
    const Time hit = m.serve(1, 100 * kNs, hits(10, 0, 1), 0).ready - 100 * kNs;
    if (share == 0) CHECK(hit == 5 * kNs);
    else CHECK(static_cast<double>(hit) / kNs == Approx(5 + 0.5 * 412).margin(2));
  }
}

TEST_CASE("DRAM stage spread: a step of many missed lines is in when its slowest is (dram.stage_spread_ns)",
          "[sim][memory]") {
  ArchSpec arch = two_half_arch(0);
  L2AccessResult one, many;
  one.sectors = one.dram_read_sectors = one.partition_sectors[0] = 4;       // one line
  many.sectors = many.dram_read_sectors = many.partition_sectors[0] = 256;  // 64 lines
  const auto filled = [&](double spread_ns, const L2AccessResult& r) {
    arch.dram.stage_spread_ns = spread_ns;
    MemoryTiming m(arch);
    return m.serve(0, 0, r, 0).filled;
  };
  CHECK(filled(100, one) == filled(0, one));  // one line: no spread
  CHECK(static_cast<double>(filled(100, many) - filled(0, many)) / kNs == Approx(100.0 * 63 / 64).margin(0.01));
}
