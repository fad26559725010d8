// gemm_order: tiled fp16 GEMM whose block -> output-tile mapping is read from a tilesim order file.
//
//   C[M,N] = A[M,K] * B[K,N]
//   A: row-major [M,K] (K contiguous); B: stored [N,K] row-major ("col-major" B, nn.Linear weight);
//   C: row-major [M,N] fp16; fp32 accumulation on tensor cores (mma.sync.aligned.m16n8k16).
//   Block tile BMx128x32 (BM = 128, or 64 with --bm 64), 256 threads (8 warps as 2(M) x 4(N), warp
//   tile 64x32 or 32x32), cp.async pipeline with STAGES=3, ldmatrix from XOR-swizzled shared memory,
//   epilogue staged through shared memory so C is written with full 16-byte coalesced stores.
//   The tile code is in gemm_tile.cuh (shared with ffn_chain.cu).
//   M need not be a multiple of BM (decode): the last tile row's A rows >= M are zero-filled
//   (cp.async src-size 0, no memory traffic) and its C rows >= M are not stored. N and K must be
//   multiples of 128. When M is a multiple of BM the unmasked kernel (MASK_M = false) runs.
//
// Grid: 1-D, one block per order entry; block b computes tile order[b] = (m, n), or returns at once
// for an 'exit' entry (stored as (-1, -1)). The order is for the ceil(M/BM) x N/128 tile grid.
//
// Usage: gemm_order M N K ORDERFILE [--bm 64|128] [--check] [--iters N] [--warmup N]
//   prints  "median_us <v>"   (CUDA events, one event pair per launch, median over iters)
//   --check prints "rel_fro_error <v>" against cuBLAS (cublasGemmEx, fp32 compute, fp32 output)
//           and exits 1 if the error is > 1e-2 or NaN.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemm_tile.cuh"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using tile::THREADS;

// Block b computes tile order[b] of the ceil(M/BM) x N/128 tile grid, or returns at once on 'exit'.
template <int BM, bool MASK_M>
__global__ void __launch_bounds__(THREADS)
gemm_order_kernel(const half* __restrict__ A, const half* __restrict__ B, half* __restrict__ C,
                  const int2* __restrict__ order, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const int2 t = order[blockIdx.x];
  if (t.x < 0) return;  // early-exit entry
  tile::gemm_tile<BM, MASK_M>(A, K, B, K, C, N, M, t.x * BM, t.y * tile::BN, K, reinterpret_cast<half*>(smem_raw),
                              tile::NoWait{});
}

static void die(const std::string& msg) {
  fprintf(stderr, "gemm_order: %s\n", msg.c_str());
  exit(2);
}

// Reads a tilesim order file (docs/orders.md). Returns (m, n) per entry, (-1, -1) for 'exit'.
static std::vector<int2> read_order(const std::string& path, int gm, int gn) {
  std::ifstream in(path);
  if (!in) die("cannot open order file '" + path + "'");
  std::vector<int2> seq;
  std::vector<int> seen((size_t)gm * gn, 0);
  std::string line;
  int lineno = 0;
  bool first = true;
  while (std::getline(in, line)) {
    ++lineno;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    for (char& ch : line)
      if (ch == ',') ch = ' ';
    std::istringstream ss(line);
    std::string w0;
    if (!(ss >> w0)) continue;
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    if (w0 == "grid") {
      long a = -1, b = -1;
      if (!first || !(ss >> a >> b)) die(where + "'grid M N' allowed only as the first entry");
      if (a != gm || b != gn)
        die(where + "order is for a " + std::to_string(a) + "x" + std::to_string(b) +
            " tile grid but ceil(M/BM) x N/128 = " + std::to_string(gm) + "x" + std::to_string(gn));
      first = false;
      continue;
    }
    first = false;
    if (w0 == "exit") {
      seq.push_back(make_int2(-1, -1));
      continue;
    }
    long m = -1, n = -1;
    std::string rest;
    try {
      m = std::stol(w0);
    } catch (...) {
      die(where + "malformed line");
    }
    if (!(ss >> n) || (ss >> rest)) die(where + "malformed line");
    if (m < 0 || n < 0 || m >= gm || n >= gn) die(where + "tile outside the grid");
    if (seen[(size_t)m * gn + n]++) die(where + "repeated tile");
    seq.push_back(make_int2((int)m, (int)n));
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (!seen[i]) die(path + ": tile (" + std::to_string(i / gn) + ", " + std::to_string(i % gn) + ") missing");
  return seq;
}

template <int BM, bool MASK_M>
static void launch_gemm(unsigned grid, const half* A, const half* B, half* C, const int2* order, int M, int N, int K) {
  gemm_order_kernel<BM, MASK_M><<<grid, THREADS, tile::Cfg<BM>::SMEM_BYTES>>>(A, B, C, order, M, N, K);
}

template <int BM, bool MASK_M>
static void set_smem_attr() {
  CUDA_CHECK(cudaFuncSetAttribute(gemm_order_kernel<BM, MASK_M>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  tile::Cfg<BM>::SMEM_BYTES));
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s M N K ORDERFILE [--bm 64|128] [--check] [--iters N] [--warmup N]\n", argv[0]);
    return 2;
  }
  const int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
  const std::string order_path = argv[4];
  bool check = false;
  int iters = 20, warmup = 3, bm = 128;
  for (int i = 5; i < argc; ++i) {
    if (!strcmp(argv[i], "--check")) check = true;
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--bm") && i + 1 < argc) bm = atoi(argv[++i]);
    else die(std::string("unknown argument '") + argv[i] + "'");
  }
  if (bm != 64 && bm != 128) die("--bm must be 64 or 128");
  if (M <= 0 || N <= 0 || K <= 0 || N % 128 || K % 128) die("M, N, K must be positive and N, K multiples of 128");
  if (iters < 1 || warmup < 0) die("--iters must be >= 1 and --warmup >= 0");
  const bool masked = M % bm != 0;
  const int gm = (M + bm - 1) / bm, gn = N / tile::BN;
  const int smem_bytes = bm == 128 ? tile::Cfg<128>::SMEM_BYTES : tile::Cfg<64>::SMEM_BYTES;
  const std::vector<int2> order = read_order(order_path, gm, gn);
  int exits = 0;
  for (const int2& e : order) exits += e.x < 0;
  printf("gemm M=%d N=%d K=%d bm=%d masked=%d order=%s blocks=%zu exits=%d smem=%d\n", M, N, K, bm, (int)masked,
         order_path.c_str(), order.size(), exits, smem_bytes);

  half *dA, *dB, *dC;
  int2* dOrder;
  CUDA_CHECK(cudaMalloc(&dA, (size_t)M * K * sizeof(half)));
  CUDA_CHECK(cudaMalloc(&dB, (size_t)N * K * sizeof(half)));
  CUDA_CHECK(cudaMalloc(&dC, (size_t)M * N * sizeof(half)));
  CUDA_CHECK(cudaMalloc(&dOrder, order.size() * sizeof(int2)));
  CUDA_CHECK(cudaMemcpy(dOrder, order.data(), order.size() * sizeof(int2), cudaMemcpyHostToDevice));
  tile::fill(dA, (size_t)M * K, 12345);
  tile::fill(dB, (size_t)N * K, 67890);
  CUDA_CHECK(cudaMemset(dC, 0, (size_t)M * N * sizeof(half)));
  CUDA_CHECK(cudaDeviceSynchronize());

  set_smem_attr<128, false>();
  set_smem_attr<128, true>();
  set_smem_attr<64, false>();
  set_smem_attr<64, true>();
  const unsigned grid = (unsigned)order.size();
  auto launch = [&]() {
    if (bm == 128) {
      if (masked) launch_gemm<128, true>(grid, dA, dB, dC, dOrder, M, N, K);
      else launch_gemm<128, false>(grid, dA, dB, dC, dOrder, M, N, K);
    } else {
      if (masked) launch_gemm<64, true>(grid, dA, dB, dC, dOrder, M, N, K);
      else launch_gemm<64, false>(grid, dA, dB, dC, dOrder, M, N, K);
    }
    CUDA_CHECK(cudaGetLastError());
  };

  if (check) {
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!tile::check_tn_gemm("gemm_order", dA, dB, dC, M, N, K)) return 1;
  }

  const std::vector<float> us = time_launches(launch, warmup, iters);
  const double median = median_of(us);
  const double tflops = 2.0 * M * N * (double)K / (median * 1e-6) / 1e12;
  printf("min_us %.2f\nmedian_us %.2f\ntflops %.1f\n", us.front(), median, tflops);
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  CUDA_CHECK(cudaFree(dOrder));
  return 0;
}
