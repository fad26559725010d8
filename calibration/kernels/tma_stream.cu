// tma_stream: how fast the L2 delivers to the SMs through bulk copies (cp.async.bulk, the TMA
// path CUTLASS 3 and cuBLAS's nvjet kernels load tiles with) against load instructions
// (ld.global.cg, 16 bytes a thread, the path Triton's and the project's kernels use).
//
// Every block streams CHUNK-byte pieces of one BYTES-byte buffer, each block starting at its own
// offset and wrapping, ITERS pieces in all. Bulk mode: one thread keeps STAGES copies in flight
// into shared memory, each completing on its own mbarrier (the data is not used: only the
// transfer is timed). Load mode: 256 threads load each piece with 16-byte ld.global.cg, 8 loads
// in flight per thread, and fold what they read into one word written per block. With a buffer
// that fits in the L2 (warmed by the first launch), the rate is the L2's to the SMs; with one far
// larger, DRAM's.
//
// With SHARED = 1 every block streams the same pieces in the same order (all start at piece 0),
// so that the blocks ask for each piece at about the same time: what the L2 request coalescer
// merges across SMs, for bulk copies and for load instructions (GRID sets the block count).
//
// Usage: tma_stream MODE BYTES [BLOCKS_PER_SM] [CHUNK] [ITERS] [GRID] [SHARED]
//   MODE bulk | load. Prints one line: mode bytes blocks chunk iters median_us tb_per_s.
#include <cuda_runtime.h>

#include "common.cuh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr int kStages = 4;
constexpr int kLoadThreads = 256;

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Spins until the mbarrier at `bar` completes the phase of parity `parity`.
__device__ __forceinline__ void wait_parity(unsigned long long* bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
}

__global__ void bulk_kernel(const char* __restrict__ buf, size_t bytes, unsigned chunk, unsigned iters, unsigned spread) {
  extern __shared__ __align__(128) char smem[];
  __shared__ __align__(8) unsigned long long bar[kStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < kStages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar[s])));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const size_t pieces = bytes / chunk;
  size_t piece = (static_cast<size_t>(blockIdx.x) * spread) % pieces;
  for (unsigned i = 0; i < iters; ++i) {
    const int s = i % kStages;
    // The copy issued into this stage kStages pieces ago must have landed.
    if (i >= kStages) wait_parity(&bar[s], ((i / kStages) - 1) & 1);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(&bar[s])), "r"(chunk)
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            smem_addr(smem + static_cast<size_t>(s) * chunk)),
        "l"(buf + piece * chunk), "r"(chunk), "r"(smem_addr(&bar[s]))
        : "memory");
    piece = piece + 1 == pieces ? 0 : piece + 1;
  }
  for (unsigned i = iters > kStages ? iters - kStages : 0; i < iters; ++i) {  // drain
    const int s = i % kStages;
    wait_parity(&bar[s], (i / kStages) & 1);
  }
}

__global__ void __launch_bounds__(kLoadThreads) load_kernel(const uint4* __restrict__ buf, size_t bytes, unsigned chunk,
                                                             unsigned iters, unsigned spread, unsigned* __restrict__ out) {
  const size_t pieces = bytes / chunk;
  const unsigned per_piece = chunk / 16;  // uint4s
  size_t piece = (static_cast<size_t>(blockIdx.x) * spread) % pieces;
  unsigned x = 0;
  for (unsigned i = 0; i < iters; ++i) {
    const uint4* p = buf + piece * per_piece;
    for (unsigned j = threadIdx.x; j < per_piece; j += kLoadThreads * 8) {
      uint4 v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const unsigned q = j + u * kLoadThreads;
        if (q < per_piece) asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(p + q));
        else v[u] = make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    piece = piece + 1 == pieces ? 0 : piece + 1;
  }
  if (x == 0x9e3779b9u) out[blockIdx.x] = x;  // keeps the loads; practically never taken
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s bulk|load BYTES [BLOCKS_PER_SM] [CHUNK] [ITERS] [GRID] [SHARED]\n", argv[0]);
    return 2;
  }
  const bool bulk = strcmp(argv[1], "bulk") == 0;
  const size_t bytes = strtoull(argv[2], nullptr, 10);
  const int per_sm = argc > 3 ? atoi(argv[3]) : 1;
  const unsigned chunk = argc > 4 ? strtoul(argv[4], nullptr, 10) : 16384;
  const unsigned iters = argc > 5 ? strtoul(argv[5], nullptr, 10) : 2048;
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int grid = argc > 6 ? atoi(argv[6]) : 0;
  const unsigned spread = argc > 7 && atoi(argv[7]) ? 0u : 7919u;  // SHARED: every block from piece 0
  const int blocks = grid > 0 ? grid : prop.multiProcessorCount * per_sm;
  char* buf = nullptr;
  unsigned* out = nullptr;
  CUDA_CHECK(cudaMalloc(&buf, bytes));
  CUDA_CHECK(cudaMemset(buf, 1, bytes));
  CUDA_CHECK(cudaMalloc(&out, blocks * sizeof(unsigned)));
  const size_t smem = static_cast<size_t>(kStages) * chunk;
  if (bulk) CUDA_CHECK(cudaFuncSetAttribute(bulk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  auto launch = [&] {
    if (bulk) bulk_kernel<<<blocks, 32, smem>>>(buf, bytes, chunk, iters, spread);
    else load_kernel<<<blocks, kLoadThreads>>>(reinterpret_cast<const uint4*>(buf), bytes, chunk, iters, spread, out);
  };
  std::vector<float> t = time_launches(launch, 3, 15);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  const double med = t[t.size() / 2];
  const double moved = static_cast<double>(blocks) * iters * chunk;
  printf("%s %zu %d %u %u %.2f %.3f\n", bulk ? "bulk" : "load", bytes, blocks, chunk, iters, med, moved / (med * 1e-6) / 1e12);
  return 0;
}
