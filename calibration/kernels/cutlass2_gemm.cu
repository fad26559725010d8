// cutlass2_gemm: CUTLASS 2.x SM80-style GEMMs (warp-level mma.sync m16n8k16, cp.async multistage
// main loop) run on an H100, so that tilesim's model of a non-persistent, one-tile-per-CTA GEMM can
// be calibrated against a production kernel of that family (L2/DRAM traffic, time per tile size
// and pipeline depth).
//
//   D[M,N] = A[M,K] * B[K,N]   (alpha = 1, beta = 0: the epilogue never reads C)
//   A: half, row-major [M,K]; B: half, column-major [K,N] = stored [N,K] row-major (nn.Linear weight);
//   D: half, row-major [M,N]; fp32 accumulation. M is free (CUTLASS predicates the last tile row);
//   N and K must be multiples of 128.
//
// Kernels: cutlass::gemm::device::Gemm, OpClassTensorOp, arch Sm80 (the SM80 multistage main loop,
// compiled for sm_90), instruction 16x8x16, epilogue LinearCombination<half, 8, float, float>,
// alignment 8 (16-byte cp.async), swizzle GemmIdentityThreadblockSwizzle<1>:
//   t64x128_s{3,4,5}   tile  64x128x32, warp 32x64x32, 4 warps (128 threads)
//   t128x128_s{3,4,5}  tile 128x128x32, warp 64x64x32, 4 warps (128 threads)
//   t128x256_s3        tile 128x256x32, warp 64x64x32, 8 warps (256 threads)
//
// Tile order of GemmIdentityThreadblockSwizzle<1> (CUTLASS 7107b05535f8,
// include/cutlass/gemm/threadblock/threadblock_swizzle.h):
//   - get_log_tile (lines 117-128) returns 0 for N = 1, so the kernel's params.swizzle_log_tile is 0
//     (kernel/gemm.h line 115);
//   - get_grid_shape (lines 110-113) is then dim3(tiles_m, tiles_n, 1);
//   - get_tile_offset(log_tile) (lines 132-140) with log_tile 0 gives tile m = blockIdx.x and tile
//     n = blockIdx.y (RematerializeBlockIdxX/Y are blockIdx.x/y, threadblock/index_remat.h lines
//     68 and 74); kernel/gemm.h lines 208-209 call it.
//   So the CTA with linear launch index i = blockIdx.x + blockIdx.y * gridDim.x computes output
//   tile (m, n) = (i % tiles_m, i / tiles_m): blockIdx.x is fastest and it runs along M. In launch
//   order the tiles go down one column of the tile grid (same B tile, successive A row blocks), then
//   to the next column: column-major over the output tiles, not row-major. (The row-major order,
//   N fastest, is GemmHorizontalThreadblockSwizzle, lines 198-237.) For M <= tile M (decode) there
//   is one tile row and both orders are the same walk along N.
//
// Usage: cutlass2_gemm M N K CONFIG [--iters N] [--warmup N] [--launches N] [--check]
//   --warmup N   untimed launches first (default 3)
//   --iters N    timed samples (default 20); before each, a 256 MiB cudaMemsetAsync evicts L2 (as
//                Triton's do_bench does), outside the sample's event pair
//   --launches N GEMM launches back to back inside each sample's event pair (default 1); times are
//                printed per launch (sample / N). With N > 1 only the first launch of a sample
//                starts from a cold L2.
//   --check      first one launch compared with cuBLAS (cublasGemmEx, fp32 compute and output):
//                prints rel_fro_error, exits 1 if > 1e-2 or NaN.
//   The GEMM kernel is launched (--check ? 1 : 0) + warmup + iters * launches times; so
//   `--launches 1 --warmup 0 --iters 1` without --check launches it once, for Nsight Compute
//   (select it with -k 'regex:(^|::)Kernel(<|$)', which matches cutlass::Kernel<...> by its
//   function name "Kernel" or demangled; the only other kernel launched then is tile::fill_scaled).
// Prints "key value" lines: problem, config, tile, warp, instruction, stages, threads, smem_bytes
// (dynamic shared memory per CTA = sizeof(GemmKernel::SharedStorage)), regs_per_thread,
// ctas_per_sm (occupancy), tiles_m, tiles_n, grid, ctas, tile_order, then min_us, median_us,
// tflops. Bad arguments or CONFIG exit 2; CUDA and cuBLAS errors exit 2 with a message.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cutlass/cutlass.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle.h>

#include "cutlass_check.cuh"  // CUTLASS_OK
#include "gemm_tile.cuh"  // CUDA_CHECK, CUBLAS_CHECK, time_launches, median_of, check_tn_gemm

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Half = cutlass::half_t;

template <int TM, int TN, int WM, int WN, int Stages>
using Cutlass2Gemm = cutlass::gemm::device::Gemm<
    Half, cutlass::layout::RowMajor,     // A [M,K]
    Half, cutlass::layout::ColumnMajor,  // B [K,N] column-major = [N,K] row-major
    Half, cutlass::layout::RowMajor,     // C, D [M,N]
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<TM, TN, 32>, cutlass::gemm::GemmShape<WM, WN, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<Half, 8, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, Stages,
    8, 8>;  // alignment A, B: 8 halves, the 16-byte cp.async the main loop is built on

struct Opts {
  int M = 0, N = 0, K = 0;
  std::string config;
  int iters = 20, warmup = 3, launches = 1;
  bool check = false;
};

[[noreturn]] void die(const std::string& msg) {
  fprintf(stderr, "cutlass2_gemm: %s\n", msg.c_str());
  exit(2);
}


template <class Gemm>
int run(const Opts& o, const half* dA, const half* dB, half* dD) {
  using Kernel = typename Gemm::GemmKernel;
  using TB = typename Gemm::ThreadblockShape;
  using WS = typename Gemm::WarpShape;
  using IS = typename Gemm::InstructionShape;
  const int M = o.M, N = o.N, K = o.K;

  // beta = 0: LinearCombination::is_source_needed() is false, C (aliased to D) is never read.
  typename Gemm::Arguments args{{M, N, K},
                                {reinterpret_cast<const Half*>(dA), K},
                                {reinterpret_cast<const Half*>(dB), K},
                                {reinterpret_cast<Half*>(dD), N},
                                {reinterpret_cast<Half*>(dD), N},
                                {1.0f, 0.0f},
                                1};
  Gemm gemm;
  CUTLASS_OK(gemm.can_implement(args));
  CUTLASS_OK(gemm.initialize(args, nullptr));  // no workspace without serial split-K

  // Launch geometry as device::Gemm::run() computes it, and the resources the scheduler sees.
  const int smem = int(sizeof(typename Kernel::SharedStorage));
  const auto kernel_fn = cutlass::Kernel<Kernel>;
  if (smem >= (48 << 10))
    CUDA_CHECK(cudaFuncSetAttribute(kernel_fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel_fn));
  int ctas_per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas_per_sm, kernel_fn, Kernel::kThreadCount, smem));
  const cutlass::gemm::GemmCoord tiled = typename Gemm::ThreadblockSwizzle().get_tiled_shape(
      {M, N, K}, {TB::kM, TB::kN, TB::kK}, 1);
  const dim3 grid = typename Gemm::ThreadblockSwizzle().get_grid_shape(tiled);

  printf("problem %dx%dx%d\nconfig %s\n", M, N, K, o.config.c_str());
  printf("tile %dx%dx%d\nwarp %dx%dx%d\ninstruction %dx%dx%d\n", TB::kM, TB::kN, TB::kK, WS::kM, WS::kN, WS::kK,
         IS::kM, IS::kN, IS::kK);
  printf("stages %d\nthreads %d\nsmem_bytes %d\nregs_per_thread %d\nctas_per_sm %d\n", Gemm::kStages,
         Kernel::kThreadCount, smem, fa.numRegs, ctas_per_sm);
  printf("tiles_m %d\ntiles_n %d\n", tiled.m(), tiled.n());
  printf("grid %ux%ux%u\nctas %u\n", grid.x, grid.y, grid.z, grid.x * grid.y * grid.z);
  printf("tile_order m_fastest (blockIdx.x = tile m, blockIdx.y = tile n)\n");
  fflush(stdout);

  auto launch = [&]() { CUTLASS_OK(gemm.run()); };

  if (o.check) {
    CUDA_CHECK(cudaMemset(dD, 0, (size_t)M * N * sizeof(half)));  // stale results must not pass
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!tile::check_tn_gemm("cutlass2_gemm", dA, dB, dD, M, N, K)) return 1;
  }

  const std::vector<float> us = time_launches(launch, o.warmup, o.iters, o.launches, size_t(256) << 20);  // 256 MiB > the L2
  const double median = median_of(us);
  printf("launches_per_sample %d\niters %d\n", o.launches, o.iters);
  printf("min_us %.2f\nmedian_us %.2f\ntflops %.1f\n", us.front(), median,
         2.0 * M * N * (double)K / (median * 1e-6) / 1e12);
  return 0;
}

using RunFn = int (*)(const Opts&, const half*, const half*, half*);
struct Config {
  const char* name;
  RunFn fn;
};
// Dynamic shared memory per CTA (the main loop's stages; the epilogue's staging shares it):
// 36, 48, 60 KiB (t64x128 s3-s5), 48, 64, 80 KiB (t128x128 s3-s5), 72 KiB (t128x256_s3), all
// within the 227 KiB an sm_90 CTA may take.
const Config kConfigs[] = {
    {"t64x128_s3", run<Cutlass2Gemm<64, 128, 32, 64, 3>>},
    {"t64x128_s4", run<Cutlass2Gemm<64, 128, 32, 64, 4>>},
    {"t64x128_s5", run<Cutlass2Gemm<64, 128, 32, 64, 5>>},
    {"t128x128_s3", run<Cutlass2Gemm<128, 128, 64, 64, 3>>},
    {"t128x128_s4", run<Cutlass2Gemm<128, 128, 64, 64, 4>>},
    {"t128x128_s5", run<Cutlass2Gemm<128, 128, 64, 64, 5>>},
    {"t128x256_s3", run<Cutlass2Gemm<128, 256, 64, 64, 3>>},
};

int parse_int(const char* s, const char* what) {
  char* end = nullptr;
  const long v = strtol(s, &end, 10);
  if (!*s || *end || v < -2147483647L || v > 2147483647L) die(std::string("bad ") + what + " '" + s + "'");
  return (int)v;
}

std::string config_names() {
  std::string s;
  for (const Config& c : kConfigs) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s M N K CONFIG [--iters N] [--warmup N] [--launches N] [--check]\n  CONFIG: %s\n",
            argv[0], config_names().c_str());
    return 2;
  }
  Opts o;
  o.M = parse_int(argv[1], "M");
  o.N = parse_int(argv[2], "N");
  o.K = parse_int(argv[3], "K");
  o.config = argv[4];
  for (int i = 5; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_val = i + 1 < argc;
    if (a == "--check") o.check = true;
    else if (a == "--iters" && has_val) o.iters = parse_int(argv[++i], "--iters");
    else if (a == "--warmup" && has_val) o.warmup = parse_int(argv[++i], "--warmup");
    else if (a == "--launches" && has_val) o.launches = parse_int(argv[++i], "--launches");
    else die("unknown argument '" + a + "'" + (a.rfind("--", 0) == 0 && !has_val ? " (missing value)" : ""));
  }
  RunFn fn = nullptr;
  for (const Config& c : kConfigs)
    if (o.config == c.name) fn = c.fn;
  if (!fn) die("unknown CONFIG '" + o.config + "'; one of: " + config_names());
  if (o.M <= 0 || o.N <= 0 || o.K <= 0 || o.N % 128 || o.K % 128)
    die("M must be positive, N and K positive multiples of 128");
  if (o.iters < 1 || o.warmup < 0 || o.launches < 1) die("--iters and --launches must be >= 1, --warmup >= 0");

  int device = 0, cc_major = 0, cc_minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, device));
  printf("device_cc sm_%d%d\n", cc_major, cc_minor);

  tile::TnOperands ops = tile::alloc_tn_operands(o.M, o.N, o.K);
  half *dA = ops.A, *dB = ops.B, *dD = ops.D;

  const int rc = fn(o, dA, dB, dD);

  tile::free_tn_operands(ops);
  return rc;
}
