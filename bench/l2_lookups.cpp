// Sector lookups per second through the real L2Cache::access hot path, on the h100 preset
// (2 halves x 12800 sets x 16 ways, xor_fold, LRU, far copies). Single thread.
//
//   BM_L2_Gemm      a GEMM-like stream: C[8192x8192] = A[8192x8192] * B^T, fp16, all row-major,
//                   128x128 output tiles, K step 64. Each access is one 128x64 fp16 operand tile:
//                   128 rows of one 128-byte line, rows 16 KiB apart (512 sectors). Tiles run in
//                   waves of 132 (one per SM, row-major raster), the wave's tiles advancing their
//                   K loop together; SM i sits next to half i % 2. Each tile ends with its C store
//                   (128 rows x 256 B, a write). Mix of near hits, copies, far hits and misses.
//   BM_L2_Random    random full-line reads (4 sectors) over a footprint: 32 MiB (fits, mostly
//                   hits) and 4 GiB (mostly misses with evictions).
//
// items_processed counts sectors, so the `items_per_second` column reads as sectors/s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "models/arch.hpp"
#include "models/cache/l2.hpp"

using namespace tilesim;

namespace {

struct Req {
  ByteRect rect;
  std::uint32_t partition;
  bool write;
};

L2Spec h100_l2() { return load_arch("h100", YAML::Node(), "bench").l2; }

std::vector<Req> gemm_trace() {
  constexpr std::uint64_t kDim = 8192, kElem = 2, kTile = 128, kKStep = 64, kSms = 132;
  constexpr std::uint64_t kPitch = kDim * kElem;           // 16 KiB
  constexpr std::uint64_t kBytes = kDim * kDim * kElem;    // 128 MiB per matrix
  constexpr Addr kA = 0, kB = kBytes, kC = 2 * kBytes;
  constexpr std::uint64_t kTilesN = kDim / kTile, kTiles = kTilesN * kTilesN, kKSteps = kDim / kKStep;
  std::vector<Req> t;
  t.reserve(kTiles * (2 * kKSteps + 1));
  for (std::uint64_t w0 = 0; w0 < kTiles; w0 += kSms) {
    const std::uint64_t w1 = std::min(kTiles, w0 + kSms);
    for (std::uint64_t k = 0; k < kKSteps; ++k) {
      for (std::uint64_t tile = w0; tile < w1; ++tile) {
        const std::uint64_t m = tile / kTilesN, n = tile % kTilesN;
        const auto part = static_cast<std::uint32_t>((tile - w0) % 2);
        const std::uint64_t col = k * kKStep * kElem;
        t.push_back({ByteRect{kA + m * kTile * kPitch + col, kPitch, kKStep * kElem, kTile}, part, false});
        t.push_back({ByteRect{kB + n * kTile * kPitch + col, kPitch, kKStep * kElem, kTile}, part, false});
      }
    }
    for (std::uint64_t tile = w0; tile < w1; ++tile) {
      const std::uint64_t m = tile / kTilesN, n = tile % kTilesN;
      const auto part = static_cast<std::uint32_t>((tile - w0) % 2);
      t.push_back({ByteRect{kC + m * kTile * kPitch + n * kTile * kElem, kPitch, kTile * kElem, kTile}, part, true});
    }
  }
  return t;
}

void run_trace(benchmark::State& state, L2Cache& cache, const std::vector<Req>& trace) {
  std::size_t i = 0;
  L2AccessResult total;
  for (auto _ : state) {
    const Req& q = trace[i];
    L2AccessResult r = cache.access(q.rect, q.partition, q.write);
    benchmark::DoNotOptimize(r);
    total += r;
    if (++i == trace.size()) {
      // Start the pattern again from a cold cache (off the clock).
      state.PauseTiming();
      cache.invalidate_all();
      i = 0;
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(total.sectors));
  const double s = total.sectors ? static_cast<double>(total.sectors) : 1.0;
  state.counters["hit_rate"] = static_cast<double>(total.hit_sectors) / s;
  state.counters["near_copy_rate"] = static_cast<double>(total.near_copy_hit_sectors) / s;
  state.counters["dram_read_rate"] = static_cast<double>(total.dram_read_sectors) / s;
  state.counters["sectors_per_access"] =
      static_cast<double>(total.sectors) / static_cast<double>(std::max<std::int64_t>(1, state.iterations()));
}

void BM_L2_Gemm(benchmark::State& state) {
  static const std::vector<Req> trace = gemm_trace();
  L2Cache cache(h100_l2(), 1, "bench");
  run_trace(state, cache, trace);
}
BENCHMARK(BM_L2_Gemm)->Unit(benchmark::kMicrosecond);

void BM_L2_Random(benchmark::State& state) {
  const std::uint64_t footprint_lines = (static_cast<std::uint64_t>(state.range(0)) << 20) / 128;
  std::vector<Req> trace(1u << 20);
  std::mt19937_64 rng(42);
  for (std::size_t i = 0; i < trace.size(); ++i)
    trace[i] = {ByteRect{(rng() % footprint_lines) * 128, 0, 128, 1}, static_cast<std::uint32_t>(i & 1), false};
  L2Cache cache(h100_l2(), 1, "bench");
  // Warm up once so that the measured part is in steady state (no cold-fill phase).
  for (const Req& q : trace) cache.access(q.rect, q.partition, q.write);
  std::size_t i = 0;
  L2AccessResult total;
  for (auto _ : state) {
    const Req& q = trace[i];
    L2AccessResult r = cache.access(q.rect, q.partition, q.write);
    benchmark::DoNotOptimize(r);
    total += r;
    if (++i == trace.size()) i = 0;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(total.sectors));
  const double s = total.sectors ? static_cast<double>(total.sectors) : 1.0;
  state.counters["hit_rate"] = static_cast<double>(total.hit_sectors) / s;
  state.counters["dram_read_rate"] = static_cast<double>(total.dram_read_sectors) / s;
}
BENCHMARK(BM_L2_Random)->Arg(32)->Arg(4096)->ArgName("footprint_MiB")->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
