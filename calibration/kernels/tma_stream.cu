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
// With DELAY_NS > 0 block b starts streaming b x DELAY_NS after its own start (all blocks of a
// small grid start within one %globaltimer tick), so that, with SHARED = 1, each block asks for
// every piece a known interval after the block before it: how long after a request another SM's
// request for the same data still merges into it (calibration/lrc_delay_probe.sh). The blocks'
// streaming start and end (ns from the first start) are printed after the timing line.
//
// With SM_A and SM_B the grid is one block per SM (each asks for more than half an SM's shared
// memory) and only the blocks on those two SMs stream, SM_B's DELAY_NS behind SM_A's: whether
// the coalescer merges across a TPC, a GPC or the L2 halves alike. With a comma-separated SMS
// list instead, the blocks on those SMs stream, the i-th of the list i x DELAY_NS behind the
// first (calibration/lrc_gpc_probe.sh: how many of a GPC's requests one lookup carries when
// they arrive spread out).
//
// Usage: tma_stream MODE BYTES [BLOCKS_PER_SM] [CHUNK] [ITERS] [GRID] [SHARED] [DELAY_NS] [SM_A SM_B | SMS]
//   MODE bulk | load. Prints one line: mode bytes blocks chunk iters median_us tb_per_s.
#include <cuda_runtime.h>

#include "common.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr int kStages = 4;
constexpr int kLoadThreads = 256;

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

// The block's role: its index, or with chosen SMs (`roles`: per SM its place in the list, -1
// for the others) its SM's place, so that the chosen SMs stream and the rest exit.
constexpr int kMaxSms = 1024;
__device__ __forceinline__ int role(const int* roles) {
  if (roles == nullptr) return static_cast<int>(blockIdx.x);
  unsigned sm;
  asm volatile("mov.u32 %0, %smid;" : "=r"(sm));
  return sm < kMaxSms ? roles[sm] : -1;
}

// Holds the block until `delay` x its role ns after it started; returns when it may stream.
__device__ __forceinline__ unsigned long long hold(unsigned delay, int r) {
  const unsigned long long t0 = global_ns(), until = t0 + static_cast<unsigned long long>(delay) * r;
  unsigned long long t = t0;
  while (t < until) t = global_ns();
  return t;
}

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

__global__ void bulk_kernel(const char* __restrict__ buf, size_t bytes, unsigned chunk, unsigned iters, unsigned spread,
                            unsigned delay, unsigned long long* __restrict__ stamps, const int* __restrict__ roles) {
  extern __shared__ __align__(128) char smem[];
  __shared__ __align__(8) unsigned long long bar[kStages];
  const int r = role(roles);
  if (threadIdx.x != 0 || r < 0) return;
  stamps[2 * r] = hold(delay, r);
  for (int s = 0; s < kStages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bar[s])));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const size_t pieces = bytes / chunk;
  size_t piece = (static_cast<size_t>(r) * spread) % pieces;
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
  stamps[2 * r + 1] = global_ns();
}

__global__ void __launch_bounds__(kLoadThreads) load_kernel(const uint4* __restrict__ buf, size_t bytes, unsigned chunk,
                                                             unsigned iters, unsigned spread, unsigned* __restrict__ out,
                                                             unsigned delay, unsigned long long* __restrict__ stamps,
                                                             const int* __restrict__ roles) {
  __shared__ unsigned long long start;
  const int r = role(roles);
  if (r < 0) return;
  if (threadIdx.x == 0) start = hold(delay, r);
  __syncthreads();
  if (threadIdx.x == 0) stamps[2 * r] = start;
  const size_t pieces = bytes / chunk;
  const unsigned per_piece = chunk / 16;  // uint4s
  size_t piece = (static_cast<size_t>(r) * spread) % pieces;
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
  __syncthreads();
  if (threadIdx.x == 0) stamps[2 * r + 1] = global_ns();
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s bulk|load BYTES [BLOCKS_PER_SM] [CHUNK] [ITERS] [GRID] [SHARED] [DELAY_NS]\n", argv[0]);
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
  const unsigned delay = argc > 8 ? strtoul(argv[8], nullptr, 10) : 0;
  // Chosen SMs: SM_A SM_B, or one comma-separated list.
  std::vector<int> chosen;
  if (argc > 10) {
    chosen = {atoi(argv[9]), atoi(argv[10])};
  } else if (argc > 9) {
    for (const char* p = argv[9]; *p;) {
      chosen.push_back(atoi(p));
      while (*p && *p != ',') ++p;
      if (*p == ',') ++p;
    }
  }
  const bool picked = !chosen.empty();
  std::vector<int> role_of(kMaxSms, -1);
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (chosen[i] < 0 || chosen[i] >= prop.multiProcessorCount || role_of[chosen[i]] >= 0) {
      fprintf(stderr, "tma_stream: SM %d is not an SM of this GPU or is listed twice\n", chosen[i]);
      return 2;
    }
    role_of[chosen[i]] = static_cast<int>(i);
  }
  int* roles = nullptr;
  if (picked) {
    CUDA_CHECK(cudaMalloc(&roles, kMaxSms * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(roles, role_of.data(), kMaxSms * sizeof(int), cudaMemcpyHostToDevice));
  }
  const int blocks = picked ? prop.multiProcessorCount : grid > 0 ? grid : prop.multiProcessorCount * per_sm;
  const int stamp_rows = picked ? static_cast<int>(chosen.size()) : blocks;
  char* buf = nullptr;
  unsigned* out = nullptr;
  unsigned long long* stamps = nullptr;
  CUDA_CHECK(cudaMalloc(&stamps, 2 * stamp_rows * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMalloc(&buf, bytes));
  CUDA_CHECK(cudaMemset(buf, 1, bytes));
  CUDA_CHECK(cudaMalloc(&out, blocks * sizeof(unsigned)));
  // Chosen SMs: more than half an SM's shared memory a block, so one block per SM.
  const size_t smem = std::max(static_cast<size_t>(kStages) * chunk, picked ? prop.sharedMemPerMultiprocessor / 2 + 1024 : 0);
  if (bulk) CUDA_CHECK(cudaFuncSetAttribute(bulk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  else if (picked) CUDA_CHECK(cudaFuncSetAttribute(load_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  auto launch = [&] {
    if (bulk) bulk_kernel<<<blocks, 32, smem>>>(buf, bytes, chunk, iters, spread, delay, stamps, roles);
    else load_kernel<<<blocks, kLoadThreads, picked ? smem : 0>>>(reinterpret_cast<const uint4*>(buf), bytes, chunk, iters, spread, out, delay,
                                                              stamps, roles);
  };
  std::vector<float> t = time_launches(launch, 3, 15);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  const double med = t[t.size() / 2];
  const double moved = static_cast<double>(stamp_rows) * iters * chunk;
  printf("%s %zu %d %u %u %.2f %.3f\n", bulk ? "bulk" : "load", bytes, blocks, chunk, iters, med, moved / (med * 1e-6) / 1e12);
  if (delay > 0) {  // the last launch's streaming spans
    std::vector<unsigned long long> st(2 * stamp_rows);
    CUDA_CHECK(cudaMemcpy(st.data(), stamps, st.size() * sizeof(st[0]), cudaMemcpyDeviceToHost));
    unsigned long long t0 = st[0];
    for (int b = 0; b < stamp_rows; ++b) t0 = st[2 * b] < t0 ? st[2 * b] : t0;
    for (int b = 0; b < stamp_rows; ++b) printf("block %d %llu %llu\n", b, st[2 * b] - t0, st[2 * b + 1] - t0);
  }
  return 0;
}
