// Loaded latency: how long one dependent load takes while the rest of the GPU streams.
//
// Block 0 (one thread) chases a random cycle of pointers, one per 128-byte line, and times the
// hops with %globaltimer; blocks 1..N (one per SM: the dynamic shared memory keeps a second
// block off) stream reads of their own region as fast as they can, or with a pause between
// rounds, until block 0 is done. The chase's footprint decides where its loads are served
// (larger than the L2: DRAM; a few MiB: the L2), the streams' footprint where theirs are.
// Each run prints the chase's mean latency and the streams' bandwidth over the same interval:
// one point of the latency-versus-load curve that tilesim's DRAM queueing wait and L2 model
// stand for (calibration/loaded_latency_probe.sh, docs/archs.md).
// With --shared-bytes S every stream block reads the same S bytes, and the chase's cycle runs
// through those very lines: the latency of a line that many SMs want at once (a GEMM's shared
// A and B tiles; does a lookup queue at its L2 slice behind the other SMs' lookups of it?),
// against the default, where each stream reads lines of its own.
//
//   loaded_latency --chase-bytes B --hog-blocks N --hog-bytes H [--shared-bytes S] [--pause-ns P] [--hops K] [--reps R]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common.cuh"
#include "load_streams.cuh"

// The chase's loads ask the L2 to keep their lines (evict_last) and the streams' loads to drop
// theirs first (evict_first): otherwise a stream from DRAM evicts the lines an L2 chase measures.
__device__ __forceinline__ unsigned long long load_chase(const unsigned long long* p) {
  unsigned long long v;
  asm volatile(
      "{ .reg .b64 pol; createpolicy.fractional.L2::evict_last.b64 pol, 1.0;\n"
      "  ld.global.cg.L2::cache_hint.u64 %0, [%1], pol; }"
      : "=l"(v)
      : "l"(p));
  return v;
}

struct Result {
  unsigned long long chase_start, chase_end, hops, sink;
  unsigned long long hog_bytes, hog_start, hog_end;  // summed over the stream blocks / min / max
  unsigned int chase_sm;
};

__global__ void loaded_latency_kernel(const unsigned long long* chase, unsigned long long start_index, int hops,
                                      const float4* hog, size_t hog_elems_per_block, size_t hog_block_stride, unsigned pause_ns,
                                      volatile int* stop, Result* out) {
  extern __shared__ char keep_one_block_per_sm[];
  if (blockIdx.x == 0) {
    if (threadIdx.x != 0) return;
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    // Let the streams reach their rate before timing.
    const unsigned long long t0 = globaltimer();
    while (globaltimer() - t0 < 20000) {
    }
    unsigned long long i = start_index;
    const unsigned long long begin = globaltimer();
    for (int h = 0; h < hops; ++h) i = load_chase(chase + i * 16);  // one pointer per 128-byte line
    const unsigned long long end = globaltimer();
    *stop = 1;
    __threadfence();
    out->chase_start = begin;
    out->chase_end = end;
    out->hops = hops;
    out->sink = i;
    out->chase_sm = smid;
    keep_one_block_per_sm[0] = static_cast<char>(i);
    return;
  }
  // A stream block (load_streams.cuh) over its own region, or all over the shared one.
  stream_block(hog + (blockIdx.x - 1) * hog_block_stride, hog_elems_per_block, pause_ns, stop, out,
               keep_one_block_per_sm + 1);
}

int main(int argc, char** argv) {
  const size_t chase_bytes = arg_size(argc, argv, "--chase-bytes", size_t{512} << 20);
  const int hog_blocks = static_cast<int>(arg_size(argc, argv, "--hog-blocks", 0));
  const size_t hog_bytes = arg_size(argc, argv, "--hog-bytes", size_t{4} << 30);  // all stream blocks together
  const unsigned pause_ns = static_cast<unsigned>(arg_size(argc, argv, "--pause-ns", 0));
  const int hops = static_cast<int>(arg_size(argc, argv, "--hops", 20000));
  const int reps = static_cast<int>(arg_size(argc, argv, "--reps", 3));
  const int threads = static_cast<int>(arg_size(argc, argv, "--threads", 1024));
  const size_t shared_bytes = arg_size(argc, argv, "--shared-bytes", 0);  // 0: each stream its own region

  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (hog_blocks > prop.multiProcessorCount - 1) {
    std::fprintf(stderr, "--hog-blocks at most %d\n", prop.multiProcessorCount - 1);
    return 2;
  }
  // The chase: a random cycle over one 8-byte pointer per 128-byte line (shared: the streams' lines).
  const size_t lines = (shared_bytes ? shared_bytes : chase_bytes) / 128;
  std::vector<unsigned long long> order(lines);
  for (size_t i = 0; i < lines; ++i) order[i] = i;
  std::mt19937_64 rng(12345);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<unsigned long long> host(lines * 16, 0);
  for (size_t i = 0; i < lines; ++i) host[order[i] * 16] = order[(i + 1) % lines];
  unsigned long long* chase;
  CUDA_CHECK(cudaMalloc(&chase, lines * 128));
  CUDA_CHECK(cudaMemcpy(chase, host.data(), lines * 128, cudaMemcpyHostToDevice));

  const int streams = std::max(hog_blocks, 1);
  const size_t round = 4 * static_cast<size_t>(threads);  // float4s a block reads per round
  size_t per_block = std::max<size_t>(hog_bytes / streams / sizeof(float4) / round, 1) * round;
  float4* hog;
  if (shared_bytes) {
    // One region for every stream block (each block's offset is 0: hog_block_stride = 0 below),
    // the chase's pointers in it, so the chase reads lines the streams read too.
    if (shared_bytes % (round * sizeof(float4)) != 0 || shared_bytes > (size_t{8} << 20)) {
      std::fprintf(stderr, "--shared-bytes: a multiple of %zu bytes, at most 8 MiB\n", round * sizeof(float4));
      return 2;
    }
    per_block = shared_bytes / sizeof(float4);
    hog = reinterpret_cast<float4*>(chase);
  } else {
    CUDA_CHECK(cudaMalloc(&hog, per_block * streams * sizeof(float4)));
    CUDA_CHECK(cudaMemset(hog, 0, per_block * streams * sizeof(float4)));
  }
  // A buffer larger than the L2, written between repetitions, evicts what the chase touched.
  const size_t flush_bytes = size_t{256} << 20;
  void* flush;
  CUDA_CHECK(cudaMalloc(&flush, flush_bytes));
  int* stop;
  Result* res;
  CUDA_CHECK(cudaMalloc(&stop, sizeof(int)));
  CUDA_CHECK(cudaMalloc(&res, sizeof(Result)));
  const size_t smem = static_cast<size_t>(prop.sharedMemPerMultiprocessor) * 3 / 5;  // one block per SM
  CUDA_CHECK(cudaFuncSetAttribute(loaded_latency_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  const bool chase_in_l2 = lines * 128 <= size_t{8} << 20;
  if (chase_in_l2) {
    // The streams would evict the chase's lines (they allocate in the L2 like any read): the
    // chase's buffer is made persisting, so what the chase measures stays an L2 hit.
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 2 * chase_bytes));
    cudaStreamAttrValue attr{};
    attr.accessPolicyWindow.base_ptr = chase;
    attr.accessPolicyWindow.num_bytes = lines * 128;
    attr.accessPolicyWindow.hitRatio = 1.0f;
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr));
  }
  const size_t hog_elems = shared_bytes ? per_block : per_block * streams;
  const bool hog_in_l2 = hog_elems * sizeof(float4) <= size_t{32} << 20;
  if (hog_in_l2) {  // warm: one pass over the streams' data, so their reads hit from the start
    warm_kernel<<<prop.multiProcessorCount * 4, 256, 0, stream>>>(hog, hog_elems, res);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  if (chase_in_l2) {  // warm: one pass over the cycle so every line is in the L2
    loaded_latency_kernel<<<1, 32, smem, stream>>>(chase, 0, static_cast<int>(lines), hog, per_block, 0, 0, stop, res);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::printf("chase_bytes,hog_blocks,hog_bytes,pause_ns,rep,hops,latency_ns,hog_gbps,chase_sm\n");
  unsigned long long next = 0;
  for (int r = 0; r < reps; ++r) {
    if (!chase_in_l2) CUDA_CHECK(cudaMemsetAsync(flush, r, flush_bytes, stream));
    CUDA_CHECK(cudaMemsetAsync(stop, 0, sizeof(int), stream));
    Result init{};
    init.hog_start = ~0ull;
    CUDA_CHECK(cudaMemcpyAsync(res, &init, sizeof(Result), cudaMemcpyHostToDevice, stream));
    loaded_latency_kernel<<<1 + hog_blocks, threads, smem, stream>>>(chase, next, hops, hog, per_block,
                                                                     shared_bytes ? 0 : per_block, pause_ns, stop, res);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    Result h;
    CUDA_CHECK(cudaMemcpy(&h, res, sizeof(Result), cudaMemcpyDeviceToHost));
    next = h.sink;  // the next repetition goes on along the cycle: lines not touched yet
    const double lat = static_cast<double>(h.chase_end - h.chase_start) / h.hops;
    const double gbps = hog_blocks && h.hog_end > h.hog_start
                            ? static_cast<double>(h.hog_bytes) / static_cast<double>(h.hog_end - h.hog_start)
                            : 0.0;
    std::printf("%zu,%d,%zu,%u,%d,%d,%.1f,%.1f,%u\n", lines * 128, hog_blocks, shared_bytes ? shared_bytes : hog_bytes,
                pause_ns, r, hops, lat, gbps, h.chase_sm);
  }
  return 0;
}
