// How much of the memory system does each SM get, alone and when every SM streams at once?
// One block per SM (its shared memory forces it) streams reads (ld.global.cg: through the L2 only)
// and stamps %globaltimer at its start and end, with its SM:
//   --mode l2:   every block reads the same L2-resident buffer (the L2's lookups and crossbars bind)
//   --mode dram: every block reads its own slice of a buffer far larger than the L2 (DRAM binds)
//   --solo S:    only the blocks that land on SM S work (the others exit at once): that SM alone
//   --same-lines: l2 mode with every block starting at the same place: the SMs request the same
//                lines at about the same time, as the blocks of a GEMM that share a panel do
//   --per-sm N, --threads T: N blocks of T threads per SM (default 1 of 1024: enough loads in
//                flight to reach the bandwidth; 2 of 128 has few in flight, so latency binds)
// Prints one CSV row per working block: mode,solo,sm,ns,bytes,gbps.
//   nvcc -O3 -arch=sm_90 -o sm_share calibration/kernels/sm_share.cu
//   ./sm_share --mode l2 --bytes 16777216 --passes 8 [--solo S]
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

#include "common.cuh"

namespace {

// Each working block reads `span` int4s from `base` + its offset, `passes` times.
__global__ void stream(const int4* __restrict__ buf, unsigned long long span, unsigned long long slice, int passes,
                       int solo, bool own_slice, bool same_lines, unsigned long long* out, int* sink) {
  extern __shared__ int pad[];
  const unsigned sm = smid();
  if (solo >= 0 && static_cast<int>(sm) != solo) return;
  __syncthreads();
  const unsigned long long t0 = globaltimer();
  const int4* base = buf + (own_slice ? static_cast<unsigned long long>(blockIdx.x) * slice : 0);
  // Blocks sharing one buffer start at different places so they do not move in lock-step.
  const unsigned long long start =
      own_slice || same_lines ? 0 : (static_cast<unsigned long long>(blockIdx.x) * 7919ull * 64) % span;
  int acc = 0;
  for (int p = 0; p < passes; ++p) {
    for (unsigned long long i = threadIdx.x; i < span; i += 4ull * blockDim.x) {
      int4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const unsigned long long j = i + static_cast<unsigned long long>(u) * blockDim.x;
        v[u] = j < span ? __ldcg(base + (start + j) % span) : make_int4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  __syncthreads();
  const unsigned long long t1 = globaltimer();
  if (acc == 0x12345678) sink[0] = acc + pad[0];  // keeps the loads
  if (threadIdx.x == 0) {
    out[3 * blockIdx.x] = sm + 1;  // 0 = the block did not work
    out[3 * blockIdx.x + 1] = t1 - t0;
    out[3 * blockIdx.x + 2] = span * 16ull * passes;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = "l2";
  unsigned long long bytes = 16ull << 20;
  int passes = 8, solo = -1, per_sm = 1, threads = 1024;
  bool same_lines = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--mode")) mode = argv[i + 1];
    else if (!std::strcmp(argv[i], "--bytes")) bytes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--passes")) passes = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--solo")) solo = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--per-sm")) per_sm = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--same-lines")) same_lines = std::atoi(argv[i + 1]) != 0;
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
  }
  const bool dram = !std::strcmp(mode, "dram");
  int dev = 0, sm_count = 0, smem = 0, smem_sm = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  // per_sm blocks fit an SM's shared memory (1 KiB reserved per block), per_sm + 1 do not.
  smem = std::min(smem, smem_sm / per_sm - 1024);
  const int blocks = sm_count * per_sm;
  // dram: each block its own slice of `bytes`; l2: one shared buffer of `bytes`.
  const unsigned long long total = dram ? bytes * blocks : bytes;
  int4* buf = nullptr;
  CUDA_CHECK(cudaMalloc(&buf, total));
  CUDA_CHECK(cudaMemset(buf, 1, total));
  unsigned long long* out = nullptr;
  int* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&out, 3ull * blocks * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMalloc(&sink, sizeof(int)));
  CUDA_CHECK(cudaFuncSetAttribute(stream, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const unsigned long long span = bytes / 16, slice = bytes / 16;
  std::vector<unsigned long long> host(3ull * blocks);
  std::printf("mode,solo,sm,ns,bytes,gbps\n");
  for (int rep = 0; rep < 2; ++rep) {  // the first warms the L2 (l2 mode) and the clocks
    CUDA_CHECK(cudaMemset(out, 0, 3ull * blocks * sizeof(unsigned long long)));
    stream<<<blocks, threads, smem>>>(buf, span, slice, passes, solo, dram, same_lines, out, sink);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaMemcpy(host.data(), out, host.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    if (host[3 * b] == 0) continue;
    const double ns = static_cast<double>(host[3 * b + 1]);
    std::printf("%s,%d,%llu,%.0f,%llu,%.2f\n", mode, solo, host[3 * b] - 1, ns, host[3 * b + 2],
                static_cast<double>(host[3 * b + 2]) / ns);
  }
  return 0;
}
