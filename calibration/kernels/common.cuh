// Shared by the calibration programs: CUDA error checks and event timing.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(x)                                                                          \
  do {                                                                                         \
    cudaError_t err_ = (x);                                                                    \
    if (err_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__,         \
              __LINE__, cudaGetErrorString(err_));                                             \
      exit(2);                                                                                 \
    }                                                                                          \
  } while (0)

// The SM a thread runs on, and the GPU's nanosecond timer (both readable by every thread).
__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Runs `launch` `warmup` times, then times `iters` samples, each `launches` launches back to back
// between two CUDA events. With `flush_bytes`, a buffer that large is written before each sample,
// outside its event pair (as Triton's do_bench evicts the L2): while the GPU writes it (~100 us
// for 256 MiB) the host queues the event and the launch, so host launch overhead opens no gap
// inside the pair. Returns the per-launch times in microseconds, sorted ascending.
template <class Launch>
std::vector<float> time_launches(Launch&& launch, int warmup, int iters, int launches = 1, size_t flush_bytes = 0) {
  void* flush = nullptr;
  if (flush_bytes) CUDA_CHECK(cudaMalloc(&flush, flush_bytes));
  for (int i = 0; i < warmup; ++i) launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> ev(2 * iters);
  for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < iters; ++i) {
    if (flush) CUDA_CHECK(cudaMemsetAsync(flush, 0, flush_bytes));
    CUDA_CHECK(cudaEventRecord(ev[2 * i]));
    for (int l = 0; l < launches; ++l) launch();
    CUDA_CHECK(cudaEventRecord(ev[2 * i + 1]));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> us(iters);
  for (int i = 0; i < iters; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    us[i] = ms * 1000.f / launches;
  }
  for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
  if (flush) CUDA_CHECK(cudaFree(flush));
  std::sort(us.begin(), us.end());
  return us;
}

inline double median_of(const std::vector<float>& sorted) {
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

// A relaxed GPU-scope load of a flag or counter another block writes (no caching in L1).
__device__ __forceinline__ unsigned ld_relaxed(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
