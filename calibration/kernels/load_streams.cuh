// Shared by loaded_latency.cu and stage_latency.cu: the stream blocks that put a load on the
// memory system while one SM measures, the warm-up pass, and the programs' argument readers.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

#include "common.cuh"


// The streams' loads ask the L2 to drop their lines first (evict_first): otherwise a stream from
// DRAM evicts the lines the measurement reads.
__device__ __forceinline__ float4 load_stream(const float4* p) {
  float4 v;
  asm volatile(
      "{ .reg .b64 pol; createpolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"
      "  ld.global.cg.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], pol; }"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(p));
  return v;
}

// One stream block: float4 reads over `elems` (a whole number of rounds) from `base`, four in
// flight per thread per round, an optional __nanosleep between rounds, until *stop is set; its
// bytes and interval go into out->hog_bytes, hog_start, hog_end. `keep` is a byte of shared
// memory the reads' sum may be stored to, so the compiler keeps them.
// The stop flag is polled by one lane a warp every 64 rounds: a poll per thread per round put a
// twentieth of all requests on the flag's one line, whose L2 slice then queued for microseconds
// and delayed every line it holds (calibration/measurements/h200/stage_latency/polled_flag).
template <class Result>
__device__ void stream_block(const float4* base, size_t elems, unsigned pause_ns, volatile int* stop, Result* out,
                             char* keep) {
  float acc = 0.f;
  unsigned long long bytes = 0;
  const unsigned long long begin = globaltimer();
  size_t pos = threadIdx.x;
  for (unsigned round = 0;; ++round) {
    if ((round & 63) == 0) {
      const int done = (threadIdx.x & 31) == 0 ? *stop : 0;
      if (__shfl_sync(0xffffffffu, done, 0)) break;
    }
    float4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = load_stream(base + pos + u * blockDim.x);
#pragma unroll
    for (int u = 0; u < 4; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    bytes += 4 * sizeof(float4);
    pos += 4 * blockDim.x;
    if (pos >= elems) pos -= elems;
    if (pause_ns) __nanosleep(pause_ns);
  }
  const unsigned long long end = globaltimer();
  if (acc == 12345.678f) *keep = 1;
  atomicAdd(&out->hog_bytes, bytes);
  atomicMin(&out->hog_start, begin);
  atomicMax(&out->hog_end, end);
}

// One pass over `n` float4s through the L2 (the streams' data and the measured region start warm).
template <class Result>
__global__ void warm_kernel(const float4* p, size_t n, Result* out) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += __ldcg(p + i).x;
  if (acc == 12345.678f) out->sink = 1;
}

// `--name value` arguments: a size, or a string.
static size_t arg_size(int argc, char** argv, const char* name, size_t dflt) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], name)) return std::strtoull(argv[i + 1], nullptr, 10);
  return dflt;
}

static std::string arg_str(int argc, char** argv, const char* name, const char* dflt) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], name)) return argv[i + 1];
  return dflt;
}
