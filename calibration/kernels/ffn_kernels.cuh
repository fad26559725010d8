// The kernels of ffn_chain.cu (its header comment describes the modes): the FFN's two GEMMs as a
// CuSync producer and consumer, CuSync's wait kernel, and the fused block-index dataflow kernel,
// each with an optional per-block timeline (TL). Device code only; the harness is ffn_chain.cu.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemm_tile.cuh"
using tile::BN;
using tile::THREADS;

struct FfnArgs {
  const half* X;
  const half* W0;
  half* H;
  const half* W1;
  half* Y;
  int M, D, F;
  unsigned* row_ctr;    // [tiles_m]: producer tiles stored per row (x epochs)
  unsigned* tile_flag;  // [tiles_m * gn0]: per producer tile (x epochs)
  unsigned* started;    // CuSync wait kernel's flag: highest epoch whose producer started
  unsigned* ticket;     // dataflow ticket counter
  unsigned* err;        // watchdog flag (sticky)
  unsigned epoch;       // 1, 2, ... per chain
  unsigned long long* tl;  // --timeline: 4 words per block slot (see tl_begin), else nullptr
};

// Timeline (--timeline): with TL, thread 0 of every block records its SM and the %globaltimer
// at its start, after its wait (consumers) and at its end, in 4 words per block slot:
// tl[4s] start, tl[4s+1] end, tl[4s+2] wait end (0: no wait), tl[4s+3] sm | role << 8 | m << 16 |
// n << 40. The TL = false instantiations are the measured kernels, unchanged.
template <bool TL>
__device__ __forceinline__ void tl_begin(const FfnArgs& a, unsigned slot, unsigned long long t0, unsigned role, int m,
                                         int n) {
  if (TL && threadIdx.x == 0)
    a.tl[4 * slot + 3] = smid() | (role << 8) | ((unsigned long long)m << 16) | ((unsigned long long)n << 40);
  if (TL && threadIdx.x == 0) a.tl[4 * slot] = t0;
}
template <bool TL>
__device__ __forceinline__ void tl_mark(const FfnArgs& a, unsigned slot, int word) {
  if (TL && threadIdx.x == 0) a.tl[4 * slot + word] = globaltimer();
}
template <bool TL>
__device__ __forceinline__ void tl_finish(const FfnArgs& a, unsigned slot) {
  if (TL) {
    __syncthreads();
    tl_mark<TL>(a, slot, 1);
  }
}

// gemm0 (producer): block b -> tile (b / gn0, b % gn0). POST: CuSync-style producer.
template <int BM, bool MASK_M, bool POST, bool TL = false>
__global__ void __launch_bounds__(THREADS, tile::Cfg<BM>::MIN_BLOCKS) ffn_gemm0_kernel(FfnArgs a) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const unsigned long long t0 = TL ? globaltimer() : 0;
  const int gn0 = a.F / BN;
  const int m = blockIdx.x / gn0, n = blockIdx.x % gn0;
  tl_begin<TL>(a, blockIdx.x, t0, 0, m, n);
  if (POST && threadIdx.x == 0 && tile::ld_relaxed(a.started) < a.epoch) atomicMax(a.started, a.epoch);
  tile::gemm_tile<BM, MASK_M>(a.X, a.D, a.W0, a.D, a.H, a.F, a.M, m * BM, n * BN, a.D,
                              reinterpret_cast<half*>(smem_raw), tile::NoWait{});
  if (POST) tile::post_tile(a.row_ctr + m, a.tile_flag + (size_t)m * gn0 + n);
  tl_finish<TL>(a, blockIdx.x);
}

// gemm1 (consumer): block b -> tile (b / gn1, b % gn1). WAIT: waits once for its producer row.
// Timeline slots follow gemm0's (offset: the producer's block count).
template <int BM, bool MASK_M, bool WAIT, bool TL = false>
__global__ void __launch_bounds__(THREADS, tile::Cfg<BM>::MIN_BLOCKS) ffn_gemm1_kernel(FfnArgs a) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const unsigned long long t0 = TL ? globaltimer() : 0;
  const int gn0 = a.F / BN, gn1 = a.D / BN;
  const int m = blockIdx.x / gn1, n = blockIdx.x % gn1;
  const unsigned slot = TL ? (unsigned)(((a.M + BM - 1) / BM) * gn0) + blockIdx.x : 0;
  tl_begin<TL>(a, slot, t0, 1, m, n);
  if (WAIT) {
    if (threadIdx.x == 0) tile::spin_geq(a.row_ctr + m, a.epoch * (unsigned)gn0, a.err);
    __syncthreads();
    tl_mark<TL>(a, slot, 2);
  }
  tile::gemm_tile<BM, MASK_M>(a.H, a.F, a.W1, a.F, a.Y, a.D, a.M, m * BM, n * BN, a.F,
                              reinterpret_cast<half*>(smem_raw), tile::NoWait{});
  tl_finish<TL>(a, slot);
}

// CuSync's wait kernel: one block that spins until the producer of this epoch has started.
__global__ void cusync_wait_kernel(FfnArgs a) {
  if (threadIdx.x == 0) tile::spin_geq(a.started, a.epoch, a.err);
}

// The fused kernel. table[t] = {role (0 producer, 1 consumer), m, n, 0} for ticket t.
// WAIT: kWaitTile (per k-step, the producer tile read), kWaitRow (once per row) or kWaitNone
// (no wait at all: a timing experiment only, the result is wrong; --df-wait none skips --check).
enum : int { kWaitRow = 0, kWaitTile = 1, kWaitNone = 2 };
template <int BM, bool MASK_M, int WAIT, bool TL = false>
__global__ void __launch_bounds__(THREADS, tile::Cfg<BM>::MIN_BLOCKS) ffn_dataflow_kernel(FfnArgs a, const int4* __restrict__ table,
                                                               unsigned nblocks) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const unsigned long long t0 = TL ? globaltimer() : 0;
  unsigned* s_ticket = reinterpret_cast<unsigned*>(smem_raw);
  if (threadIdx.x == 0) *s_ticket = atomicAdd(a.ticket, 1u) - (a.epoch - 1) * nblocks;
  __syncthreads();
  const unsigned t = *s_ticket;
  __syncthreads();  // the pipeline below overwrites s_ticket
  if (t >= nblocks) {  // cannot happen unless launches overlap or the counter was not reset
    if (threadIdx.x == 0) atomicExch(a.err, 2u);
    return;
  }
  const int4 e = table[t];
  const bool consumer = e.x != 0;
  const int m = e.y, n = e.z;
  const int gn0 = a.F / BN;
  tl_begin<TL>(a, t, t0, consumer ? 1u : 0u, m, n);
  half* smem = reinterpret_cast<half*>(smem_raw);
  if (!consumer) {
    tile::gemm_tile<BM, MASK_M>(a.X, a.D, a.W0, a.D, a.H, a.F, a.M, m * BM, n * BN, a.D, smem, tile::NoWait{});
    tile::post_tile(a.row_ctr + m, a.tile_flag + (size_t)m * gn0 + n);
  } else if (WAIT == kWaitTile) {
    const tile::TileWait w{a.tile_flag + (size_t)m * gn0, a.epoch, a.err, true};
    tile::gemm_tile<BM, MASK_M>(a.H, a.F, a.W1, a.F, a.Y, a.D, a.M, m * BM, n * BN, a.F, smem, w);
  } else {
    if (WAIT == kWaitRow) {
      if (threadIdx.x == 0) tile::spin_geq(a.row_ctr + m, a.epoch * (unsigned)gn0, a.err);
      __syncthreads();
      tl_mark<TL>(a, t, 2);
    }
    tile::gemm_tile<BM, MASK_M>(a.H, a.F, a.W1, a.F, a.Y, a.D, a.M, m * BM, n * BN, a.F, smem, tile::NoWait{});
  }
  tl_finish<TL>(a, t);
}
