// The tile machinery shared by gemm_order.cu and ffn_chain.cu: one thread block computes one
// BM x 128 output tile of C = A * B^T (fp16 in, fp32 accumulate, fp16 out) with mma.sync, a
// 3-stage cp.async pipeline and an epilogue staged through shared memory. Also the spin-wait
// and post primitives of the chained (producer -> consumer) kernels, the input fill kernel and
// cuBLAS helpers.
//
//   A: row-major [M, K] (lda), only rows m0 .. m0+BM-1 < M are read (MASK_M: rows >= M are
//      zero-filled in shared memory with cp.async src-size 0 and never stored);
//   B: stored [N, K] row-major (ldb) = "col-major" B, an nn.Linear weight;
//   C: row-major [M, N] (ldc).
//   N and K must be multiples of 128 (BN) and 32 (BK); the callers require multiples of 128.
//
// Tile shapes (template BM):
//   BM = 128: 256 threads = 8 warps as 2 (M) x 4 (N), warp tile 64x32 (4 x 4 mma m16n8k16);
//             shared memory max(3 x (8 + 8) KiB, 128 x 136 x 2) = 49152 B.
//   BM =  64: 256 threads = 8 warps as 2 (M) x 4 (N), warp tile 32x32 (2 x 4 mma m16n8k16);
//             shared memory max(3 x (4 + 8) KiB, 64 x 136 x 2) = 36864 B.
#pragma once

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common.cuh"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUBLAS_CHECK(x)                                                                        \
  do {                                                                                         \
    cublasStatus_t st_ = (x);                                                                  \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                        \
      fprintf(stderr, "cuBLAS error %d at %s:%d\n", (int)st_, __FILE__, __LINE__);             \
      exit(2);                                                                                 \
    }                                                                                          \
  } while (0)

namespace tile {

// The pipeline depth: 3 in every measured case unless a probe builds with -DTILE_STAGES=S
// (calibration/prefetch_probe.sh times the same kernels 2 to 5 stages deep).
#ifndef TILE_STAGES
#define TILE_STAGES 3
#endif
constexpr int BN = 128, BK = 32, STAGES = TILE_STAGES, THREADS = 256;
static_assert(STAGES >= 2, "the main loop prefetches STAGES - 1 tiles ahead");

template <int BM_>
struct Cfg {
  static_assert(BM_ == 64 || BM_ == 128, "BM must be 64 or 128");
  static constexpr int BM = BM_;
  static constexpr int WARPS_M = 2, WARPS_N = 4;
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // 64x32 or 32x32
  static constexpr int MT = WM / 16, NT = WN / 8;             // mma tiles per warp: 4x4 or 2x4
  static constexpr int A_HALVES = BM * BK;                    // A tile of one stage
  static constexpr int B_HALVES = BN * BK;                    // B tile of one stage (4096 = 8 KiB)
  static constexpr int STAGE_HALVES = A_HALVES + B_HALVES;
  static constexpr int PIPE_SMEM = STAGES * STAGE_HALVES * 2;  // 49152 / 36864 bytes
  static constexpr int CS_LD = BN + 8;                         // epilogue row stride (halves)
  static constexpr int EPI_SMEM = BM * CS_LD * 2;              // 34816 / 17408 bytes
  static constexpr int SMEM_BYTES = PIPE_SMEM > EPI_SMEM ? PIPE_SMEM : EPI_SMEM;
  static constexpr int A_CHUNKS = BM * BK / 8 / THREADS;  // 16-byte A loads per thread and stage: 2 / 1
  static constexpr int B_CHUNKS = BN * BK / 8 / THREADS;  // 2
  static constexpr int C_CHUNKS = BM * BN / 8 / THREADS;  // 16-byte C stores per thread: 8 / 4
  // Blocks per SM the plain kernels reach (128 resp. 64 registers): kernels with extra
  // synchronisation code pass it to __launch_bounds__ so they keep the same occupancy.
  static constexpr int MIN_BLOCKS = BM == 128 ? 2 : 4;
  static_assert(A_CHUNKS >= 1 && A_CHUNKS <= B_CHUNKS, "load loop assumes A_CHUNKS <= B_CHUNKS");
};

// Offset (in halves) of 16-byte chunk `c` (0..3) of row `r` in a [rows][32] fp16 tile.
// The XOR makes the 8 rows of every ldmatrix 8x8 matrix hit 8 distinct 16-byte bank groups.
__device__ __forceinline__ int swz(int r, int c) { return r * BK + ((c ^ ((r >> 1) & 3)) << 3); }

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
// src_bytes 0: nothing is read, the 16 bytes in shared memory are zero-filled.
__device__ __forceinline__ void cp_async16_zfill(void* smem, const void* gmem, unsigned src_bytes) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* smem) {
  unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

__device__ __forceinline__ void mma16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ------------------------------------------------------------------ synchronisation primitives
// Spin loops give up after this many SM cycles (~2 s at 1980 MHz, ~2.5 s at the 1590 MHz base
// clock Nsight Compute locks), set *err and return false, so that a deadlock becomes a failed
// case (the host reports it) instead of a hung GPU.
constexpr long long kWatchdogCycles = 4000000000ll;
constexpr unsigned kMaxBackoffNs = 256;  // tilesim's sim.poll_interval_ns is 200

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
using ::ld_relaxed;  // common.cuh

// Called by ONE thread: waits until *p >= target (acquire). Returns false on watchdog expiry or
// when another block already hit it (err set): the caller then goes on, computing garbage, so
// that every block still terminates.
__device__ __forceinline__ bool spin_geq(const unsigned* p, unsigned target, unsigned* err) {
  if (ld_acquire(p) >= target) return true;
  const long long t0 = clock64();
  unsigned ns = 32;
  while (ld_acquire(p) < target) {
    if (ld_relaxed(err) != 0) return false;
    if (clock64() - t0 > kWatchdogCycles) {
      atomicExch(err, 1u);
      return false;
    }
    __nanosleep(ns);
    if (ns < kMaxBackoffNs) ns <<= 1;
  }
  return true;
}

// Block-wide: after this block's tile stores, makes them visible GPU-wide, then thread 0 adds 1
// to each counter in `ctr` (nullptr entries skipped). Every thread must call it.
__device__ __forceinline__ void post_tile(unsigned* ctr0, unsigned* ctr1) {
  __threadfence();  // each thread's own C stores are ordered before ...
  __syncthreads();  // ... everyone is done storing ...
  if (threadIdx.x == 0) {
    __threadfence();  // ... (cumulative) ...
    if (ctr0) atomicAdd(ctr0, 1u);  // ... the release of the counters
    if (ctr1) atomicAdd(ctr1, 1u);
  }
}

// Hook of the main loop for per-k-step waits (the consumer side of tilesim's `dataflow`, which
// waits before each k-step for the producer tile it reads). NoWait compiles to nothing.
struct NoWait {
  static constexpr bool kActive = false;
  __device__ __forceinline__ void operator()(int) const {}
};

// Waits (thread 0) before k-tile kt is loaded for the producer tile holding columns
// [kt*BK, kt*BK + BK) of the intermediate: flag[kt*BK/BN] >= target. Producer tiles are BN wide,
// so a new flag is needed every BN/BK = 4 k-tiles.
struct TileWait {
  static constexpr bool kActive = true;
  const unsigned* flags;  // this row's per-producer-tile flags
  unsigned target;
  unsigned* err;
  bool enabled;
  __device__ __forceinline__ void operator()(int kt) const {
    if (enabled && threadIdx.x == 0 && (kt * BK) % BN == 0) spin_geq(flags + kt * BK / BN, target, err);
  }
};

// ------------------------------------------------------------------ the tile
// C[m0 : m0+BM, n0 : n0+BN] = A[m0 : m0+BM, 0:K] * B[n0 : n0+BN, 0:K]^T.
// Uses `smem` (Cfg<BM>::SMEM_BYTES bytes of dynamic shared memory). All THREADS threads call it.
// With Wait::kActive, wait(kt) is called by every thread before k-tile kt's loads are issued,
// followed by a __syncthreads() before the loads, so thread 0 may block in it for everyone.
template <int BM, bool MASK_M, class Wait>
__device__ __forceinline__ void gemm_tile(const half* __restrict__ A, int lda, const half* __restrict__ B, int ldb,
                                          half* __restrict__ C, int ldc, int M, int m0, int n0, int K, half* smem,
                                          const Wait& wait) {
  using G = Cfg<BM>;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int warp_m = warp >> 2, warp_n = warp & 3;

  const half* Ag = A + (size_t)m0 * lda;
  const half* Bg = B + (size_t)n0 * ldb;
  const int KT = K / BK;

  auto load_stage = [&](int stage, int kt) {
    half* As = smem + stage * G::STAGE_HALVES;
    half* Bs = As + G::A_HALVES;
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < G::B_CHUNKS; ++i) {
      const int idx = tid + i * THREADS;  // rows x 4 chunks of 16 bytes
      const int r = idx >> 2, c = idx & 3;
      if (i < G::A_CHUNKS) {
        if (MASK_M) {
          const bool ok = m0 + r < M;  // row m0 itself is always < M
          cp_async16_zfill(As + swz(r, c), Ag + (size_t)(ok ? r : 0) * lda + k0 + c * 8, ok ? 16u : 0u);
        } else {
          cp_async16(As + swz(r, c), Ag + (size_t)r * lda + k0 + c * 8);
        }
      }
      cp_async16(Bs + swz(r, c), Bg + (size_t)r * ldb + k0 + c * 8);
    }
  };

  float acc[G::MT][G::NT][4];
#pragma unroll
  for (int i = 0; i < G::MT; ++i)
#pragma unroll
    for (int j = 0; j < G::NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

  if (Wait::kActive) {
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s)
      if (s < KT) wait(s);
    __syncthreads();
  }
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) load_stage(s, s);
    cp_async_commit();
  }

  for (int kt = 0; kt < KT; ++kt) {
    const int pf = kt + STAGES - 1;
    if (Wait::kActive && pf < KT) wait(pf);  // published to all threads by the barrier below
    cp_async_wait<STAGES - 2>();  // tile kt has landed (for this thread)
    __syncthreads();              // ... for all threads; and everyone is done with stage (kt-1)%STAGES
    {
      if (pf < KT) load_stage(pf % STAGES, pf);
      cp_async_commit();
    }
    const half* As = smem + (kt % STAGES) * G::STAGE_HALVES;
    const half* Bs = As + G::A_HALVES;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      unsigned af[G::MT][4];
      unsigned bf[G::NT / 2][4];
#pragma unroll
      for (int i = 0; i < G::MT; ++i) {
        const int r = warp_m * G::WM + i * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int c = kk * 2 + (lane >> 4);
        ldmatrix_x4(af[i], As + swz(r, c));
      }
#pragma unroll
      for (int j = 0; j < G::NT / 2; ++j) {
        const int r = warp_n * G::WN + j * 16 + (lane & 7) + (lane >> 4) * 8;
        const int c = kk * 2 + ((lane >> 3) & 1);
        ldmatrix_x4(bf[j], Bs + swz(r, c));
      }
#pragma unroll
      for (int i = 0; i < G::MT; ++i)
#pragma unroll
        for (int j = 0; j < G::NT; ++j)
          mma16816(acc[i][j], af[i], bf[j >> 1][(j & 1) * 2], bf[j >> 1][(j & 1) * 2 + 1]);
    }
  }

  // Epilogue: registers -> shared (fp16) -> 16-byte coalesced global stores (rows >= M skipped).
  cp_async_wait<0>();
  __syncthreads();
  half* Cs = smem;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int i = 0; i < G::MT; ++i)
#pragma unroll
    for (int j = 0; j < G::NT; ++j) {
      const int r = warp_m * G::WM + i * 16 + g;
      const int c = warp_n * G::WN + j * 8 + 2 * t;
      *reinterpret_cast<half2*>(Cs + r * G::CS_LD + c) = __floats2half2_rn(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<half2*>(Cs + (r + 8) * G::CS_LD + c) = __floats2half2_rn(acc[i][j][2], acc[i][j][3]);
    }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < G::C_CHUNKS; ++i) {
    const int idx = tid + i * THREADS;
    const int r = idx >> 4, c = (idx & 15) * 8;  // 16 chunks per 128-column row
    if (!MASK_M || m0 + r < M)
      *reinterpret_cast<uint4*>(C + (size_t)(m0 + r) * ldc + n0 + c) =
          *reinterpret_cast<const uint4*>(Cs + r * G::CS_LD + c);
  }
}

// ------------------------------------------------------------------ host side helpers
// A deterministic uniform value in [-1, 1) from (seed, index): a splitmix64 step.
__device__ __forceinline__ float uniform_pm1(uint64_t seed, size_t i) {
  uint64_t z = seed + i * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return 2.0f * ((float)(z >> 40) * (1.0f / 16777216.0f)) - 1.0f;
}

// Deterministic uniform values in [-1, 1] (hash of seed and index).
__global__ void fill_kernel(half* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = __float2half(uniform_pm1(seed, i));
}

inline void fill(half* p, size_t n, uint64_t seed) {
  fill_kernel<<<1024, 256>>>(p, n, seed);
  CUDA_CHECK(cudaGetLastError());
}

inline double to_double(float x) { return x; }
inline double to_double(half x) { return __half2float(x); }

// ||x - ref||_F / ||ref||_F over n elements of device arrays (x fp16; ref fp16 or fp32).
template <class Ref>
double rel_fro_error(const half* d_x, const Ref* d_ref, size_t n) {
  std::vector<half> hx(n);
  std::vector<Ref> hr(n);
  CUDA_CHECK(cudaMemcpy(hx.data(), d_x, n * sizeof(half), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(hr.data(), d_ref, n * sizeof(Ref), cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = to_double(hr[i]);
    const double d = (double)__half2float(hx[i]) - r;
    num += d * d;
    den += r * r;
  }
  return std::sqrt(num / den);
}

// ref[M,N] = A[M,K] * Bbuf[N,K]^T with cuBLAS (fp16 inputs, fp32 compute, output type Tout).
// Column-major view: ref^T[N,M] = op(Bbuf)[N,K] * Abuf-as-col-major[K,M]; Bbuf is K x N col-major (ld K).
inline void cublas_ref(cublasHandle_t h, const half* A, int lda, const half* B, int ldb, void* ref, cudaDataType tout,
                       int ldr, int M, int N, int K) {
  const float alpha = 1.f, beta = 0.f;
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16F, ldb, A, CUDA_R_16F, lda, &beta,
                            ref, tout, ldr, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// `scale` times tile::uniform_pm1 values. For a library GEMM's operands: B scaled by 1/sqrt(K)
// keeps D O(1) at any K (no fp16 overflow; the relative error keeps its meaning). Named apart from
// the measured kernels, so Nsight Compute's kernel filters skip it.
__global__ void fill_scaled(half* p, size_t n, uint64_t seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = __float2half(scale * uniform_pm1(seed, i));
}

// A library TN GEMM's device operands: A[M,K] and B[N,K] filled (B scaled by 1/sqrt(K)), D[M,N] zeroed.
struct TnOperands {
  half *A = nullptr, *B = nullptr, *D = nullptr;
};
inline TnOperands alloc_tn_operands(int M, int N, int K) {
  const size_t nA = (size_t)M * K, nB = (size_t)N * K, nD = (size_t)M * N;
  TnOperands t;
  CUDA_CHECK(cudaMalloc(&t.A, nA * sizeof(half)));
  CUDA_CHECK(cudaMalloc(&t.B, nB * sizeof(half)));
  CUDA_CHECK(cudaMalloc(&t.D, nD * sizeof(half)));
  fill_scaled<<<1024, 256>>>(t.A, nA, 12345, 1.0f);
  CUDA_CHECK(cudaGetLastError());
  fill_scaled<<<1024, 256>>>(t.B, nB, 67890, 1.0f / std::sqrt((float)K));
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemset(t.D, 0, nD * sizeof(half)));
  CUDA_CHECK(cudaDeviceSynchronize());
  return t;
}
inline void free_tn_operands(TnOperands& t) {
  CUDA_CHECK(cudaFree(t.A));
  CUDA_CHECK(cudaFree(t.B));
  CUDA_CHECK(cudaFree(t.D));
  t = TnOperands{};
}

// D[M,N] = A[M,K] * B[N,K]^T (both K-contiguous) against cuBLAS (fp32): prints rel_fro_error and
// "check ok", or "PROG: CHECK FAILED" on stderr when the error is above 1e-2 or NaN. True when ok.
inline bool check_tn_gemm(const char* prog, const half* dA, const half* dB, const half* dD, int M, int N, int K) {
  float* dRef = nullptr;
  CUDA_CHECK(cudaMalloc(&dRef, (size_t)M * N * sizeof(float)));
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  cublas_ref(h, dA, K, dB, K, dRef, CUDA_R_32F, N, M, N, K);
  CUDA_CHECK(cudaDeviceSynchronize());
  const double err = rel_fro_error(dD, dRef, (size_t)M * N);
  printf("rel_fro_error %.6e\n", err);
  CUBLAS_CHECK(cublasDestroy(h));
  CUDA_CHECK(cudaFree(dRef));
  if (!(err <= 1e-2)) {
    fprintf(stderr, "%s: CHECK FAILED (rel_fro_error %.6e > 1e-2 or NaN)\n", prog, err);
    return false;
  }
  printf("check ok\n");
  return true;
}

}  // namespace tile
