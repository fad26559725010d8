// l2_stream: L2 capacity microbenchmark matching tilesim's planned `kind: stream` workload.
//
// A buffer of S bytes is split into nchunks = S / CHUNK chunks. The kernel has passes * nchunks
// blocks (1-D grid); block p reads chunk (p mod nchunks) once with coalesced 16-byte loads
// (256 threads, each thread CHUNK/4096 loads, all issued before they are used), XOR-reduces what it
// read and writes one 4-byte value per block to out[p], so the loads cannot be optimised away.
// Blocks are dispatched in index order, so the buffer is swept `passes` times; once S exceeds
// what the L2 holds, later passes miss.
//
// With --stride STRIDE, chunk c starts at byte c x STRIDE instead of c x CHUNK (STRIDE a multiple
// of CHUNK): the same bytes read, spread over nchunks x STRIDE of address space, as a matrix's
// rows are (a GEMM's A panel has rows K x 2 bytes apart). Power-of-two strides show how the L2's
// set hash spreads them (calibration/l2_stride_probe.sh).
//
// Usage: l2_stream BYTES PASSES [CHUNK] [--stride STRIDE] [--iters N] [--warmup N]
//   prints "median_us <v>" and the effective bandwidth (bytes read / median time).
#include <cuda_runtime.h>

#include "common.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>


constexpr int THREADS = 256;
constexpr int MAX_PER_THREAD = 64;  // CHUNK up to 256 KiB

template <int PER_THREAD>
__global__ void __launch_bounds__(THREADS)
l2_stream_kernel(const uint4* __restrict__ buf, unsigned* __restrict__ out, unsigned nchunks, size_t stride16) {
  const unsigned chunk = blockIdx.x % nchunks;
  const uint4* p = buf + (size_t)chunk * stride16 + threadIdx.x;
  uint4 v[PER_THREAD];
#pragma unroll
  for (int i = 0; i < PER_THREAD; ++i) v[i] = p[i * THREADS];  // all loads in flight
  unsigned x = 0;
#pragma unroll
  for (int i = 0; i < PER_THREAD; ++i) x ^= v[i].x ^ v[i].y ^ v[i].z ^ v[i].w;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) x ^= __shfl_xor_sync(0xffffffffu, x, o);
  __shared__ unsigned red[THREADS / 32];
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = x;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned y = 0;
#pragma unroll
    for (int w = 0; w < THREADS / 32; ++w) y ^= red[w];
    out[blockIdx.x] = y;
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s BYTES PASSES [CHUNK] [--stride STRIDE] [--iters N] [--warmup N]\n", argv[0]);
    return 2;
  }
  const size_t bytes = strtoull(argv[1], nullptr, 10);
  const long passes = atol(argv[2]);
  size_t chunk = 64 * 1024, stride = 0;
  int iters = 20, warmup = 3;
  int i = 3;
  if (argc > 3 && argv[3][0] != '-') chunk = strtoull(argv[i++], nullptr, 10);
  for (; i < argc; ++i) {
    if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--stride") && i + 1 < argc) stride = strtoull(argv[++i], nullptr, 10);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
    else {
      fprintf(stderr, "l2_stream: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  const size_t per_block_unit = 16 * THREADS;  // 4 KiB: one 16-byte load per thread
  if (chunk == 0 || chunk % per_block_unit || chunk / per_block_unit > MAX_PER_THREAD ||
      (chunk / per_block_unit & (chunk / per_block_unit - 1))) {
    fprintf(stderr, "l2_stream: CHUNK must be 4 KiB x a power of two, at most %d x 4 KiB\n", MAX_PER_THREAD);
    return 2;
  }
  if (bytes == 0 || bytes % chunk || passes < 1 || iters < 1 || warmup < 0) {
    fprintf(stderr, "l2_stream: BYTES must be a positive multiple of CHUNK, PASSES >= 1\n");
    return 2;
  }
  if (stride == 0) stride = chunk;
  if (stride % chunk) {
    fprintf(stderr, "l2_stream: STRIDE must be a multiple of CHUNK\n");
    return 2;
  }
  const size_t nchunks = bytes / chunk;
  const size_t span = nchunks * stride;  // bytes of address space the chunks are spread over
  const size_t blocks = (size_t)passes * nchunks;
  if (blocks > 0x7fffffffull) {
    fprintf(stderr, "l2_stream: too many blocks\n");
    return 2;
  }
  const int per_thread = (int)(chunk / per_block_unit);
  printf("l2_stream bytes=%zu passes=%ld chunk=%zu stride=%zu nchunks=%zu blocks=%zu read_bytes=%zu\n", bytes, passes,
         chunk, stride, nchunks, blocks, blocks * chunk);

  uint4* buf;
  unsigned* out;
  CUDA_CHECK(cudaMalloc(&buf, span));
  CUDA_CHECK(cudaMalloc(&out, blocks * sizeof(unsigned)));
  CUDA_CHECK(cudaMemset(buf, 0x5a, span));
  CUDA_CHECK(cudaMemset(out, 0, blocks * sizeof(unsigned)));
  CUDA_CHECK(cudaDeviceSynchronize());

  auto launch = [&]() {
    const unsigned g = (unsigned)blocks, n = (unsigned)nchunks;
    const size_t s16 = stride / 16;
    switch (per_thread) {
      case 1: l2_stream_kernel<1><<<g, THREADS>>>(buf, out, n, s16); break;
      case 2: l2_stream_kernel<2><<<g, THREADS>>>(buf, out, n, s16); break;
      case 4: l2_stream_kernel<4><<<g, THREADS>>>(buf, out, n, s16); break;
      case 8: l2_stream_kernel<8><<<g, THREADS>>>(buf, out, n, s16); break;
      case 16: l2_stream_kernel<16><<<g, THREADS>>>(buf, out, n, s16); break;
      case 32: l2_stream_kernel<32><<<g, THREADS>>>(buf, out, n, s16); break;
      case 64: l2_stream_kernel<64><<<g, THREADS>>>(buf, out, n, s16); break;
    }
    CUDA_CHECK(cudaGetLastError());
  };

  const std::vector<float> us = time_launches(launch, warmup, iters);
  const double median = median_of(us);
  printf("min_us %.2f\nmedian_us %.2f\ngbps %.1f\n", us.front(), median, blocks * chunk / (median * 1e-6) / 1e9);
  std::vector<unsigned> h(std::min<size_t>(blocks, 4));
  CUDA_CHECK(cudaMemcpy(h.data(), out, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(buf));
  CUDA_CHECK(cudaFree(out));
  return 0;
}
