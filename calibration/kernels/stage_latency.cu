// Stage latency: how long a batch of independent L2-hit loads takes, as a whole, while other SMs
// stream from the L2. A GEMM main loop's stage asks for 8-64 KiB at once from one SM and waits for
// all of it, so it is done when its slowest request is back: if requests queue at their L2 slices
// behind the other SMs', a stage waits for the maximum of hundreds of queueing delays and should
// grow with the load far faster than one dependent load's mean (loaded_latency.cu). Each sample:
// the measuring block's T threads read the sample's line offsets (made on the host) into
// registers, meet at a barrier, thread 0 reads clock64, every thread issues its share of the
// batch as 16-byte ld.global.cg loads (evict_last), all before any is used, sums them into shared
// memory, and after a second barrier thread 0 reads clock64 again; then a pause (--gap-ns) keeps
// the samples apart and the measuring SM's own load small. Layouts: tile (B contiguous bytes at a
// random B-aligned offset: a tile's consecutive lines) or random (B/128 distinct lines from the
// whole region, which is persisting and warmed). B = 128 with one thread: one line's latency.
// --gemm M,N,K replaces the streams by cuBLAS fp16 GEMMs launched back to back on that stream
// (their mean time per launch in the gemm_us column), to see a stage's latency under a real
// kernel's load. The streams are loaded_latency.cu's stream blocks (1024 threads, one per SM) in a kernel of
// their own, launched just after the measuring one on another stream: 32 loads of 16 bytes in
// flight per thread need ~230 registers, which 1024-thread blocks cannot have. The measuring
// block waits until every stream block has started (a second at most, then it says so).
//
//   stage_latency --batch-bytes B --layout tile|random --hog-blocks N [--threads-measure T]
//                 [--region-bytes R] [--hog-bytes H] [--samples S] [--gap-ns G] [--reps K] [--dump FILE]
//                 [--measure-sm S] [--dump-lines FILE] [--gemm M,N,K [--gemm-count C]] [--settle-ns T] [--dram 1]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common.cuh"
#include "load_streams.cuh"

constexpr int kMaxThreads = 256;  // the measuring block: registers for 32 loads (131072 / 256 / 16) each

// "memory": the compiler keeps the reads where they are relative to the batch's loads.
__device__ __forceinline__ unsigned long long cycles() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

// The batch's loads ask the L2 to keep their lines (evict_last), as loaded_latency.cu's chase
// does; the policy is made once, outside the timed interval.
__device__ __forceinline__ uint4 load_batch(const uint4* p, unsigned long long pol) {
  uint4 v;
  asm volatile("ld.global.cg.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(pol));
  return v;
}

__device__ __forceinline__ unsigned load_index(const unsigned* p) {
  unsigned v;
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

struct Result {
  unsigned long long clock_start, clock_end, global_start, global_end, sink;
  unsigned long long hog_bytes, hog_start, hog_end;  // summed over the stream blocks / min / max
  unsigned int sm, hogs_seen;
};

// idx: per sample, the batch's line numbers in the region (lines of them). Chunk c (16 bytes) of
// the batch is thread c % T's load c / T: a warp's loads cover consecutive chunks, as a tile
// copy's do. U (loads per thread) is a template argument: every thread makes exactly U loads, so
// none is predicated, and 32 loads' data (128 registers) and addresses (64) fit without spilling.
template <int U>
__global__ void __launch_bounds__(kMaxThreads, 1)
    stage_kernel(const uint4* region, const unsigned* idx, int lines, int samples, unsigned gap_ns, unsigned hogs,
                 volatile unsigned* hogs_started, volatile int* stop, unsigned long long* out_cycles, Result* out,
                 int measure_sm, unsigned settle_ns, bool dram) {
  extern __shared__ unsigned keep_one_block_per_sm[];  // also where each thread's sum goes
  volatile unsigned* slot = keep_one_block_per_sm;
  const int t = threadIdx.x, nt = blockDim.x;
  // --measure-sm: one block per SM is launched and only the one on that SM measures; the others
  // leave at once, so the streams take their SMs.
  if (measure_sm >= 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (static_cast<int>(smid) != measure_sm) return;
  }
  // evict_last keeps the region's lines against the streams; with --dram the lines must leave
  // with the flush between repetitions, so they are read evict_first.
  unsigned long long pol;
  if (dram) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  else asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  if (t == 0) {
    const unsigned long long t0 = globaltimer();
    while (*hogs_started < hogs && globaltimer() - t0 < 1000000000ull) {
    }
    out->hogs_seen = *hogs_started;
    const unsigned long long t1 = globaltimer();  // let the streams (or the GEMMs) reach their rate before timing
    while (globaltimer() - t1 < settle_ns) {
    }
  }
  unsigned acc = 0;
  unsigned long long begin = 0;
  for (int s = 0; s < samples; ++s) {
    const unsigned long long gap_from = t == 0 ? globaltimer() : 0;
    // The sample's addresses into registers, outside the timed interval: the store to shared
    // memory needs every index, so the index loads are complete before the barrier.
    const uint4* addr[U];
    unsigned fold = 0;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = u * nt + t;
      addr[u] = region + load_index(idx + static_cast<size_t>(s) * lines + c / 8) * 8 + c % 8;
      fold ^= static_cast<unsigned>(reinterpret_cast<size_t>(addr[u]));
    }
    slot[t] = fold;
    if (t == 0)
      while (globaltimer() - gap_from < gap_ns) __nanosleep(100);
    __syncthreads();
    if (t == 0) {
      if (s == 0) {
        out->global_start = globaltimer();
        out->clock_start = cycles();
      }
      begin = cycles();
    }
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load_batch(addr[u], pol);  // all issued, then all used
#pragma unroll
    for (int u = 0; u < U; ++u) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    slot[t] = acc;  // a store before the barrier: the batch has landed when the barrier opens
    __syncthreads();
    if (t == 0) {
      const unsigned long long end = cycles();
      out_cycles[s] = end - begin;
      if (s == samples - 1) {
        out->global_end = globaltimer();
        out->clock_end = cycles();
      }
    }
  }
  if (t == 0) {
    *stop = 1;
    __threadfence();
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    out->sm = smid;
    out->sink = acc;
  }
}

using StageKernel = decltype(&stage_kernel<1>);
static StageKernel stage_kernel_for(size_t loads_per_thread) {
  const StageKernel k[] = {stage_kernel<1>, stage_kernel<2>, stage_kernel<4>, stage_kernel<8>, stage_kernel<16>,
                           stage_kernel<32>};
  for (int i = 0; i < 6; ++i)
    if (loads_per_thread == size_t{1} << i) return k[i];
  return nullptr;
}

// A stream block (load_streams.cuh) on its own SM, counted as started.
__global__ void hog_kernel(const float4* hog, size_t hog_elems_per_block, volatile unsigned* started,
                           volatile int* stop, Result* out) {
  extern __shared__ char keep_one_block_per_sm_hog[];
  if (threadIdx.x == 0) atomicAdd(const_cast<unsigned*>(started), 1u);
  stream_block(hog + blockIdx.x * hog_elems_per_block, hog_elems_per_block, 0, stop, out, keep_one_block_per_sm_hog + 1);
}

// Per sample, the batch's line numbers. rng() % n rather than a std distribution: the same
// indices from every standard library.
static std::vector<unsigned> batch_lines(bool tile, size_t region_lines, size_t lines, int samples) {
  std::mt19937_64 rng(12345);
  std::vector<unsigned> idx(lines * samples), perm(region_lines);
  for (size_t i = 0; i < region_lines; ++i) perm[i] = static_cast<unsigned>(i);
  for (int s = 0; s < samples; ++s) {
    unsigned* out = idx.data() + s * lines;
    if (tile) {
      const size_t first = rng() % (region_lines / lines) * lines;
      for (size_t j = 0; j < lines; ++j) out[j] = static_cast<unsigned>(first + j);
      continue;
    }
    for (size_t j = 0; j < lines; ++j) {  // a partial shuffle: distinct lines, as a stage's
      std::swap(perm[j], perm[j + rng() % (region_lines - j)]);
      out[j] = perm[j];
    }
  }
  return idx;
}

// Nearest rank: the smallest sample with at least a fraction p of the samples at or below it.
static double pct(const std::vector<double>& sorted, double p) {
  const size_t r = static_cast<size_t>(p * sorted.size() + 0.999999);
  return sorted[std::min(sorted.size() - 1, r ? r - 1 : 0)];
}

struct Args {
  size_t batch, region_bytes, hog_bytes;
  std::string layout, dump, dump_lines;
  int threads, samples, hog_blocks, hog_threads, reps, measure_sm;  // measure_sm -1: wherever block 0 lands
  int gemm_m = 0, gemm_n = 0, gemm_k = 0, gemm_count = 0;  // --gemm M,N,K: cuBLAS fp16 GEMMs as the load
  unsigned settle_ns = 20000;
  bool dram = false;  // --dram 1: the region in DRAM (up to 8 GiB, not persisting, the L2 flushed before each repetition)
  unsigned gap_ns;
};

static Args parse(int argc, char** argv, int sms) {
  Args a;
  a.batch = arg_size(argc, argv, "--batch-bytes", 16384);
  a.layout = arg_str(argc, argv, "--layout", "tile");
  a.threads = static_cast<int>(arg_size(argc, argv, "--threads-measure", 256));
  a.dram = arg_size(argc, argv, "--dram", 0) != 0;
  a.region_bytes = arg_size(argc, argv, "--region-bytes", a.dram ? size_t{4} << 30 : size_t{4} << 20);
  a.samples = static_cast<int>(arg_size(argc, argv, "--samples", 2000));
  a.gap_ns = static_cast<unsigned>(arg_size(argc, argv, "--gap-ns", 2000));
  a.hog_blocks = static_cast<int>(arg_size(argc, argv, "--hog-blocks", 0));
  a.measure_sm = static_cast<int>(arg_size(argc, argv, "--measure-sm", ~size_t{0}));
  const std::string gemm = arg_str(argc, argv, "--gemm", "");
  if (!gemm.empty() && std::sscanf(gemm.c_str(), "%d,%d,%d", &a.gemm_m, &a.gemm_n, &a.gemm_k) != 3) a.gemm_m = -1;
  a.gemm_count = static_cast<int>(arg_size(argc, argv, "--gemm-count", 12));
  a.settle_ns = static_cast<unsigned>(arg_size(argc, argv, "--settle-ns", gemm.empty() && !a.dram ? 20000 : 100000));
  a.hog_bytes = arg_size(argc, argv, "--hog-bytes", size_t{24} << 20);  // all stream blocks together
  a.hog_threads = static_cast<int>(arg_size(argc, argv, "--hog-threads", 1024));
  a.reps = static_cast<int>(arg_size(argc, argv, "--reps", 3));
  a.dump = arg_str(argc, argv, "--dump", "");
  a.dump_lines = arg_str(argc, argv, "--dump-lines", "");
  const size_t per_thread = a.threads >= 1 ? a.batch / 16 / a.threads : 0;
  if (a.batch % 128 || a.batch < 128 || a.batch > 131072 || a.threads < 1 || a.threads > kMaxThreads ||
      per_thread * 16 * a.threads != a.batch || !stage_kernel_for(per_thread) || a.region_bytes < a.batch ||
      a.region_bytes % a.batch || a.region_bytes > (a.dram ? size_t{8} << 30 : size_t{8} << 20) || (a.layout != "tile" && a.layout != "random") ||
      a.samples < 1 || a.hog_blocks < 0 || a.hog_blocks > sms - 1 || a.measure_sm >= sms || a.gemm_m < 0 ||
      a.gemm_n < 0 || a.gemm_k < 0 || (a.gemm_m > 0 && (a.hog_blocks > 0 || a.gemm_count < 1))) {
    std::fprintf(stderr, "--batch-bytes: 128..131072, 16 x --threads-measure (1..%d) x 1, 2, 4, 8, 16 or 32; "
                 "--region-bytes: a multiple of it, at most 8 MiB (8 GiB with --dram 1); --layout tile|random; --hog-blocks at most %d; "
                 "--measure-sm below the SM count; --gemm M,N,K (positive, without --hog-blocks)\n",
                 kMaxThreads, sms - 1);
    std::exit(2);
  }
  return a;
}

// One repetition's CSV row (and, with --dump, its samples). ns_per_cycle: globaltimer over
// clock64 across the whole measuring interval, both read by thread 0 at the same points.
// line_dump: each sample's first line (its index in the region) beside its time, to find which
// lines wait (--dump-lines; most telling with one-line batches).
static void report(const Args& a, int rep, const Result& h, const std::vector<unsigned long long>& cyc, FILE* dump,
                   FILE* line_dump, const std::vector<unsigned>& idx, int lines, double gemm_us) {
  const double ns_per_cycle =
      static_cast<double>(h.global_end - h.global_start) / static_cast<double>(h.clock_end - h.clock_start);
  std::vector<double> ns(cyc.size());
  double sum = 0;
  for (size_t s = 0; s < cyc.size(); ++s) {
    ns[s] = cyc[s] * ns_per_cycle;
    sum += ns[s];
    if (dump) std::fprintf(dump, "%s,%zu,%d,%d,%.1f\n", a.layout.c_str(), a.batch, a.hog_blocks, rep, ns[s]);
    if (line_dump) std::fprintf(line_dump, "%d,%d,%u,%.1f\n", a.hog_blocks, rep, idx[s * lines], ns[s]);
  }
  std::sort(ns.begin(), ns.end());
  const double gbps = a.hog_blocks && h.hog_end > h.hog_start
                          ? static_cast<double>(h.hog_bytes) / static_cast<double>(h.hog_end - h.hog_start)
                          : 0.0;
  std::printf("%s,%zu,%d,%d,%d,%zu,%.4f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%u,%.1f\n", a.layout.c_str(), a.batch,
              a.threads, a.hog_blocks, rep, ns.size(), ns_per_cycle, sum / ns.size(), pct(ns, 0.10), pct(ns, 0.50),
              pct(ns, 0.90), pct(ns, 0.99), ns.back(), gbps, h.sm, gemm_us);
}

// The streams would evict the region's lines (they allocate in the L2 like any read): the
// region is made persisting, so what the batch measures stays an L2 hit.
static void make_persisting(cudaStream_t stream, void* p, size_t bytes, const cudaDeviceProp& prop) {
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, std::min<size_t>(2 * bytes, prop.persistingL2CacheMaxSize)));
  cudaStreamAttrValue attr{};
  attr.accessPolicyWindow.base_ptr = p;
  attr.accessPolicyWindow.num_bytes = bytes;
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr));
}

template <class T>
static T* dev_alloc(size_t n, int fill) {
  T* p;
  CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
  CUDA_CHECK(cudaMemset(p, fill, n * sizeof(T)));
  return p;
}

// The --gemm load: C = A x B in fp16 (fp32 accumulation) through cuBLAS, on the streams' stream.
// The measuring block holds three fifths of its SM's shared memory, so cuBLAS's blocks run on
// the other SMs, as the stream blocks do.
struct GemmLoad {
  cublasHandle_t handle;
  int m, n, k;
  __half *a, *b, *c;
  GemmLoad(int m_, int n_, int k_, cudaStream_t stream) : m(m_), n(n_), k(k_) {
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS || cublasSetStream(handle, stream) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cublas setup failed\n");
      std::exit(1);
    }
    a = dev_alloc<__half>(static_cast<size_t>(m) * k, 0);
    b = dev_alloc<__half>(static_cast<size_t>(k) * n, 0);
    c = dev_alloc<__half>(static_cast<size_t>(m) * n, 0);
  }
  void run() {  // row-major C (m x n) = A (m x k) B (k x n): column-major C^T = B^T A^T
    const float one = 1.f, zero = 0.f;
    if (cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16F, n, a, CUDA_R_16F, k, &zero, c,
                     CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cublasGemmEx failed\n");
      std::exit(1);
    }
  }
};

int main(int argc, char** argv) {
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const Args a = parse(argc, argv, prop.multiProcessorCount);
  const StageKernel stage = stage_kernel_for(a.batch / 16 / a.threads);
  const int lines = static_cast<int>(a.batch / 128);
  const std::vector<unsigned> host_idx = batch_lines(a.layout == "tile", a.region_bytes / 128, lines, a.samples);
  uint4* region = dev_alloc<uint4>(a.region_bytes / sizeof(uint4), 1);
  unsigned* idx = dev_alloc<unsigned>(host_idx.size(), 0);
  CUDA_CHECK(cudaMemcpy(idx, host_idx.data(), host_idx.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  const int streams = std::max(a.hog_blocks, 1);
  const size_t round = 4 * static_cast<size_t>(a.hog_threads);  // float4s a block reads per round
  const size_t per_block = std::max<size_t>(a.hog_bytes / streams / sizeof(float4) / round, 1) * round;
  float4* hog = dev_alloc<float4>(per_block * streams, 0);
  unsigned long long* cyc = dev_alloc<unsigned long long>(a.samples, 0);
  unsigned* started = dev_alloc<unsigned>(1, 0);
  int* stop = dev_alloc<int>(1, 0);
  Result* res = dev_alloc<Result>(1, 0);
  const size_t smem = static_cast<size_t>(prop.sharedMemPerMultiprocessor) * 3 / 5;  // one block per SM
  CUDA_CHECK(cudaFuncSetAttribute(stage, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  CUDA_CHECK(cudaFuncSetAttribute(hog_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  cudaStream_t measure, streaming;
  CUDA_CHECK(cudaStreamCreateWithFlags(&measure, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&streaming, cudaStreamNonBlocking));
  if (!a.dram) make_persisting(measure, region, a.region_bytes, prop);
  // --dram: a write of 512 MiB before each repetition leaves none of the region in the L2 (the
  // samples' lines repeat from one repetition to the next).
  const size_t flush_bytes = a.dram ? size_t{512} << 20 : 0;
  unsigned char* flush = a.dram ? dev_alloc<unsigned char>(flush_bytes, 0) : nullptr;
  std::unique_ptr<GemmLoad> gemm;
  cudaEvent_t g0, g1;
  CUDA_CHECK(cudaEventCreate(&g0));
  CUDA_CHECK(cudaEventCreate(&g1));
  if (a.gemm_m > 0) {
    gemm = std::make_unique<GemmLoad>(a.gemm_m, a.gemm_n, a.gemm_k, streaming);
    gemm->run();  // cuBLAS's first call (its kernel choice, its module load) outside the timing
    CUDA_CHECK(cudaStreamSynchronize(streaming));
  }
  FILE* dump = a.dump.empty() ? nullptr : std::fopen(a.dump.c_str(), "a");
  if (!a.dump.empty() && (!dump || std::fseek(dump, 0, SEEK_END) != 0)) {
    std::fprintf(stderr, "cannot open %s\n", a.dump.c_str());
    return 1;
  }
  if (dump && std::ftell(dump) == 0) std::fprintf(dump, "layout,batch_bytes,hog_blocks,rep,ns\n");
  FILE* line_dump = a.dump_lines.empty() ? nullptr : std::fopen(a.dump_lines.c_str(), "w");
  if (!a.dump_lines.empty() && !line_dump) {
    std::fprintf(stderr, "cannot open %s\n", a.dump_lines.c_str());
    return 1;
  }
  if (line_dump) std::fprintf(line_dump, "hog_blocks,rep,line,ns\n");
  // The region's address: where its 2 MiB pages begin, for the lines' position in them.
  std::fprintf(stderr, "region at %p\n", static_cast<void*>(region));
  std::printf("layout,batch_bytes,threads,hog_blocks,rep,samples,ns_per_cycle,mean_ns,p10_ns,p50_ns,p90_ns,p99_ns,"
              "max_ns,hog_gbps,sm,gemm_us\n");
  // Warm: one pass over the streams' data and the region, then one unloaded launch (rep -1, unreported).
  warm_kernel<<<prop.multiProcessorCount * 4, 256, 0, measure>>>(hog, per_block * streams, res);
  if (!a.dram)
    warm_kernel<<<prop.multiProcessorCount * 4, 256, 0, measure>>>(reinterpret_cast<const float4*>(region),
                                                                   a.region_bytes / sizeof(float4), res);
  std::vector<unsigned long long> host_cyc(a.samples);
  for (int r = -1; r < a.reps; ++r) {
    const int hogs = r < 0 ? 0 : a.hog_blocks;
    Result init{};
    init.hog_start = ~0ull;
    CUDA_CHECK(cudaMemcpyAsync(res, &init, sizeof(Result), cudaMemcpyHostToDevice, measure));
    CUDA_CHECK(cudaMemsetAsync(started, 0, sizeof(unsigned), measure));
    CUDA_CHECK(cudaMemsetAsync(stop, 0, sizeof(int), measure));
    if (flush) CUDA_CHECK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, measure));
    CUDA_CHECK(cudaStreamSynchronize(measure));
    // The measuring kernel first: it takes one SM and waits; the streams take up to all the others.
    stage<<<a.measure_sm >= 0 ? prop.multiProcessorCount : 1, a.threads, smem, measure>>>(
        region, idx, lines, a.samples, a.gap_ns, hogs, started, stop, cyc, res, a.measure_sm, a.settle_ns, a.dram);
    CUDA_CHECK(cudaGetLastError());
    if (hogs) hog_kernel<<<hogs, a.hog_threads, smem, streaming>>>(hog, per_block, started, stop, res);
    if (gemm) {  // the load: cuBLAS GEMMs back to back on the other stream, timed as a whole
      CUDA_CHECK(cudaEventRecord(g0, streaming));
      for (int i = 0; i < a.gemm_count; ++i) gemm->run();
      CUDA_CHECK(cudaEventRecord(g1, streaming));
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    Result h;
    CUDA_CHECK(cudaMemcpy(&h, res, sizeof(Result), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(host_cyc.data(), cyc, a.samples * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    if (h.hogs_seen < static_cast<unsigned>(hogs)) {
      std::fprintf(stderr, "rep %d: only %u of %d stream blocks ran beside the measuring block\n", r, h.hogs_seen,
                   hogs);
      return 1;
    }
    float gemm_ms = 0;
    if (gemm) CUDA_CHECK(cudaEventElapsedTime(&gemm_ms, g0, g1));
    if (r >= 0) report(a, r, h, host_cyc, dump, line_dump, host_idx, lines, gemm ? 1000.0 * gemm_ms / a.gemm_count : 0);
  }
  if (dump) std::fclose(dump);
  if (line_dump) std::fclose(line_dump);
  return 0;
}
