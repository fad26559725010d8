// l2_prefetch: how much a load that misses in the L2 fetches from DRAM, with and without the
// prefetch-size qualifier of cp.async (.L2::64B, .L2::128B, .L2::256B). CUTLASS 2's copies and
// CuTe's SM80 copies (FlashAttention-2) carry .L2::128B; Triton's and the project's do not. A
// CUTLASS 2 main loop with 32-element k-tiles reads 64 bytes of each 128-byte line per k-step, so
// whether the miss fetches the whole line decides whether the next k-step's half hits.
//
// The buffer is cut into CHUNK-byte chunks. Pass p reads WIDTH bytes at offset p x WIDTH of every
// chunk (16-byte cp.async.cg, one per thread per chunk piece); PASSES passes, separated by a
// grid-wide barrier (one block per SM, all resident) after each pass's copies have landed. One
// pass shows what a miss fetches (DRAM bytes over requested bytes); two show whether the second
// pass finds its bytes in the L2 (its lookups' hit rate).
//
// Usage: l2_prefetch HINT CHUNK WIDTH PASSES [BYTES]
//   HINT none | 64 | 128 | 256. BYTES (default 8 MiB) is the span the chunks cover.
//   Prints: hint chunk width passes bytes requested_bytes us
#include <cuda_runtime.h>

#include "common.cuh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

constexpr int kThreads = 256;

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// One 16-byte copy into shared memory under the hint HINT (bytes; 0 = none).
template <int HINT>
__device__ __forceinline__ void copy16(void* smem, const void* gmem) {
  const unsigned s = smem_addr(smem);
  if constexpr (HINT == 0) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
  if constexpr (HINT == 64) asm volatile("cp.async.cg.shared.global.L2::64B [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
  if constexpr (HINT == 128) asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
  if constexpr (HINT == 256) asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

// Every block arrives, then waits until all have (one block per SM: all resident).
__device__ void grid_barrier(unsigned* counter, unsigned target) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(counter, 1u);
    while (atomicAdd(counter, 0u) < target) {
    }
    __threadfence();
  }
  __syncthreads();
}

template <int HINT>
__global__ void probe_kernel(const char* __restrict__ buf, size_t chunks, unsigned chunk, unsigned width,
                             unsigned passes, unsigned* counter, unsigned* sink) {
  __shared__ __align__(16) char smem[kThreads * 16 * 4];
  const unsigned pieces = width / 16;  // 16-byte copies per chunk and pass
  const size_t total = chunks * pieces;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (unsigned p = 0; p < passes; ++p) {
    unsigned n = 0;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
      const size_t c = i / pieces, piece = i % pieces;
      copy16<HINT>(smem + (threadIdx.x * 4 + (n++ & 3)) * 16, buf + c * chunk + p * width + piece * 16);
      if ((n & 3) == 0) asm volatile("cp.async.wait_all;\n" ::: "memory");
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    grid_barrier(counter, (p + 1) * gridDim.x);
  }
  // Keep the copies observable.
  if (threadIdx.x == 0) sink[blockIdx.x] = smem[threadIdx.x * 64];
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: l2_prefetch none|64|128|256 CHUNK WIDTH PASSES [BYTES]\n");
    return 2;
  }
  const int hint = std::strcmp(argv[1], "none") == 0 ? 0 : std::atoi(argv[1]);
  const unsigned chunk = std::atoi(argv[2]), width = std::atoi(argv[3]), passes = std::atoi(argv[4]);
  const size_t bytes = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : (8u << 20);
  if (width % 16 || width * passes > chunk || bytes % chunk) {
    std::fprintf(stderr, "l2_prefetch: WIDTH must be a multiple of 16, WIDTH x PASSES <= CHUNK, CHUNK | BYTES\n");
    return 2;
  }
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  char* buf;
  unsigned *counter, *sink;
  CUDA_CHECK(cudaMalloc(&buf, bytes));
  CUDA_CHECK(cudaMemset(buf, 1, bytes));
  CUDA_CHECK(cudaMalloc(&counter, sizeof(unsigned)));
  CUDA_CHECK(cudaMalloc(&sink, sms * sizeof(unsigned)));
  const auto launch = [&]() {
    CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned)));
    const size_t chunks = bytes / chunk;
    switch (hint) {
      case 0: probe_kernel<0><<<sms, kThreads>>>(buf, chunks, chunk, width, passes, counter, sink); break;
      case 64: probe_kernel<64><<<sms, kThreads>>>(buf, chunks, chunk, width, passes, counter, sink); break;
      case 128: probe_kernel<128><<<sms, kThreads>>>(buf, chunks, chunk, width, passes, counter, sink); break;
      case 256: probe_kernel<256><<<sms, kThreads>>>(buf, chunks, chunk, width, passes, counter, sink); break;
      default: std::fprintf(stderr, "l2_prefetch: HINT must be none, 64, 128 or 256\n"); std::exit(2);
    }
    CUDA_CHECK(cudaGetLastError());
  };
  // A flush (a write far larger than the L2) before every launch: each starts cold.
  auto times = time_launches(launch, 2, 5, 1, size_t{512} << 20);
  std::printf("%s %u %u %u %zu %zu %.2f\n", argv[1], chunk, width, passes, bytes,
              bytes / chunk * static_cast<size_t>(width) * passes, median_of(times));
  CUDA_CHECK(cudaFree(buf));
  return 0;
}
