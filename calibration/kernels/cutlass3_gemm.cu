// cutlass3_gemm: a CUTLASS 3 SM90 persistent GEMM (TMA + WGMMA, warp-specialized) whose tile
// scheduler raster order and swizzle are chosen at run time, so that the effect of the production
// tile order on L2/DRAM traffic and time can be measured and compared with tilesim's model of it.
//
//   D[M,N] = A[M,K] * B[K,N]   (alpha = 1, beta = 0, no C operand: ElementC = void, so C is never read)
//   A: row-major [M,K]; B: stored [N,K] row-major ("col-major" B, nn.Linear weight), i.e. CUTLASS TN;
//   D: row-major [M,N] fp16; fp16 inputs, fp32 accumulation.
//
// Kernels (all cutlass::device_kernel<GemmUniversal<...>>, PersistentScheduler, stages
// StageCountAutoCarveout = as many as fit next to the epilogue's shared memory):
//   --schedule coop      KernelTmaWarpSpecializedCooperative, tile 128x128x64, 1 producer + 2 consumer
//                        warpgroups on the same tile (384 threads); --cluster 2x1 gives the same kernel
//                        with a 2x1x1 cluster (the B tile is TMA-multicast to both CTAs of a cluster).
//   --schedule pingpong  KernelTmaWarpSpecializedPingpong, tile 64x128x64, 2 consumer warpgroups on
//                        alternating tiles (384 threads).
//
// Tile order (CUTLASS PersistentTileSchedulerSm90): the launch grid has min(SMs, tiles) CTAs (cluster
// 1x1); CTA c takes linear tile indices c, c + G, c + 2G, ... (G = grid size); a linear index maps to
// (m, n) by the raster order (AlongN: consecutive indices walk along N) and the swizzle (S = 1, 2, 4
// or 8 consecutive indices cycle through S adjacent tile rows (AlongN) or columns (AlongM) first;
// S is cut to 4 unless both tile counts are >= 6, to 2 unless >= 3, to 1 unless >= 2). With S > 1
// both tile counts are rounded up to a multiple of S (times the cluster size along that mode) and
// the padded tiles are scheduled and computed too (their TMA loads fall outside the tensors). 'heuristic' rasters AlongM when tiles_n > tiles_m
// (padded counts), else AlongN.
//
// Usage: cutlass3_gemm M N K [--raster m|n|heuristic] [--swizzle 1|2|4|8] [--schedule coop|pingpong|streamk]
//                            [--cluster 1x1|2x1] [--decomposition heuristic|streamk|splitk|dataparallel]
//                            [--splits N] [--reduction deterministic|nondeterministic] [--iters N] [--warmup N] [--check]
//   --schedule streamk: the cooperative 128x128x64 kernel with CUTLASS's StreamKScheduler; it also
//   prints the decomposition the scheduler chose (sk_tiles, sk_units, splits, groups, workspace).
//   prints "key value" lines: problem, schedule, the requested raster/swizzle, tile, cluster, threads,
//   stages, smem_bytes, sm_count, the scheduler's resolved raster (AlongM/AlongN) and swizzle, the
//   tile grid before (tiles_m/n) and after padding (sched_tiles_m/n, sched_tiles), the launch grid
//   (grid XxYxZ, ctas), then min_us, median_us (CUDA events, one pair per launch) and tflops;
//   --check prints rel_fro_error against cuBLAS (fp32 output) and exits 1 if > 1e-2 or NaN.
//   Bad arguments exit 2. Under Nsight Compute select the kernel with -k regex:device_kernel.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/util/packed_stride.hpp>

#include "cutlass_check.cuh"  // CUTLASS_OK
#include "gemm_tile.cuh"  // CUDA_CHECK, CUBLAS_CHECK, time_launches, check_tn_gemm

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

using RasterOrderOptions = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90Params::RasterOrderOptions;
using RasterOrder = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90Params::RasterOrder;

// One CUTLASS 3 GEMM configuration. Alignment 8 halves = 16 bytes, which TMA needs; the
// callers guarantee it (M, N, K multiples of 128).
template <class TileShape, class ClusterShape, class MainloopSchedule, class EpilogueSchedule,
          class Scheduler = cutlass::gemm::PersistentScheduler>
struct Gemm3 {
  using Half = cutlass::half_t;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float,
      void, cutlass::layout::RowMajor, 8,  // no source operand: beta = 0 never reads C
      Half, cutlass::layout::RowMajor, 8, EpilogueSchedule>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Half, cutlass::layout::RowMajor, 8, Half,
      cutlass::layout::ColumnMajor, 8, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      MainloopSchedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue, Scheduler>;
  using Device = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

using Tile128 = cute::Shape<cute::_128, cute::_128, cute::_64>;
using Tile64 = cute::Shape<cute::_64, cute::_128, cute::_64>;
using Cluster1 = cute::Shape<cute::_1, cute::_1, cute::_1>;
using Cluster2 = cute::Shape<cute::_2, cute::_1, cute::_1>;
using CoopGemm = Gemm3<Tile128, Cluster1, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                       cutlass::epilogue::TmaWarpSpecializedCooperative>;
using CoopC2Gemm = Gemm3<Tile128, Cluster2, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                         cutlass::epilogue::TmaWarpSpecializedCooperative>;
using PingpongGemm = Gemm3<Tile64, Cluster1, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                           cutlass::epilogue::TmaWarpSpecialized>;
// Stream-K (PersistentTileSchedulerSm90StreamK): the cooperative kernel, whose scheduler splits the
// k-loop of the tail's tiles over programs and reduces their partials through a workspace.
using StreamKGemm = Gemm3<Tile128, Cluster1, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                          cutlass::epilogue::TmaWarpSpecializedCooperative, cutlass::gemm::StreamKScheduler>;

struct Opts {
  int M = 0, N = 0, K = 0;
  RasterOrderOptions raster = RasterOrderOptions::Heuristic;
  std::string raster_name = "heuristic", schedule = "coop", cluster = "1x1";
  std::string decomposition = "heuristic", reduction = "deterministic";  // --schedule streamk only
  int swizzle = 1, iters = 20, warmup = 3, splits = 1, sms = 0;  // sms 0: the device's count
  bool check = false;
};

static void die(const std::string& msg) {
  fprintf(stderr, "cutlass3_gemm: %s\n", msg.c_str());
  exit(2);
}


static const char* raster_str(RasterOrder r) { return r == RasterOrder::AlongN ? "AlongN" : "AlongM"; }

template <class G>
static int run(const Opts& o, const half* dA, const half* dB, half* dD) {
  using Kernel = typename G::Kernel;
  using Gemm = typename G::Device;
  using Half = cutlass::half_t;
  const int M = o.M, N = o.N, K = o.K;

  int device = 0, sm_count = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));

  const auto sA = cutlass::make_cute_packed_stride(typename Kernel::StrideA{}, cute::make_shape(M, K, 1));
  const auto sB = cutlass::make_cute_packed_stride(typename Kernel::StrideB{}, cute::make_shape(N, K, 1));
  const auto sC = cutlass::make_cute_packed_stride(typename Kernel::StrideC{}, cute::make_shape(M, N, 1));
  const auto sD = cutlass::make_cute_packed_stride(typename Kernel::StrideD{}, cute::make_shape(M, N, 1));
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                {M, N, K, 1},
                                {reinterpret_cast<const Half*>(dA), sA, reinterpret_cast<const Half*>(dB), sB},
                                {{}, nullptr, sC, reinterpret_cast<Half*>(dD), sD}};
  args.epilogue.thread.alpha = 1.f;
  args.epilogue.thread.beta = 0.f;
  // sm_count sets the persistent grid. max_active_clusters stays 0: for 1x1 clusters it is unused,
  // for 2x1 CUTLASS then sizes the grid with its GH100 heuristic (18 SMs per GPC) instead of an
  // occupancy query, which keeps the grid deterministic.
  args.hw_info.device_id = device;
  if (o.sms > 0) sm_count = o.sms;  // the persistent grid CUTLASS sizes from it
  args.hw_info.sm_count = sm_count;
  args.hw_info.max_active_clusters = 0;
  args.scheduler.raster_order = o.raster;
  args.scheduler.max_swizzle_size = o.swizzle;
  if constexpr (std::is_same_v<G, StreamKGemm>) {
    using Params = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90StreamKParams;
    using DM = Params::DecompositionMode;
    args.scheduler.splits = o.splits;
    args.scheduler.decomposition_mode = o.decomposition == "streamk"      ? DM::StreamK
                                        : o.decomposition == "splitk"     ? DM::SplitK
                                        : o.decomposition == "dataparallel" ? DM::DataParallel
                                                                          : DM::Heuristic;
    args.scheduler.reduction_mode = o.reduction == "nondeterministic" ? Params::ReductionMode::Nondeterministic
                                                                      : Params::ReductionMode::Deterministic;
  }

  Gemm gemm;
  CUTLASS_OK(gemm.can_implement(args));
  const size_t ws_bytes = Gemm::get_workspace_size(args);
  void* workspace = nullptr;
  if (ws_bytes) CUDA_CHECK(cudaMalloc(&workspace, ws_bytes));
  CUTLASS_OK(gemm.initialize(args, workspace));  // also sets the kernel's dynamic smem attribute

  // What the scheduler resolved (heuristic raster, effective swizzle, padded tile grid) and the grid
  // CUTLASS launches: the inputs tilesim's re-implementation must reproduce.
  const auto& sp = gemm.params().scheduler;
  const dim3 grid = Gemm::get_grid_shape(gemm.params());
  using TS = typename Kernel::TileShape;
  using CS = typename Kernel::ClusterShape;
  const int bm = cute::size<0>(TS{}), bn = cute::size<1>(TS{}), bk = cute::size<2>(TS{});
  printf("problem %dx%dx%d\nschedule %s\nraster_arg %s\nswizzle_arg %d\n", M, N, K, o.schedule.c_str(),
         o.raster_name.c_str(), o.swizzle);
  printf("tile %dx%dx%d\n", bm, bn, bk);
  printf("cluster %dx%dx%d\n", (int)cute::size<0>(CS{}), (int)cute::size<1>(CS{}), (int)cute::size<2>(CS{}));
  printf("threads %u\n", (unsigned)Kernel::MaxThreadsPerBlock);
  printf("stages %d\n", (int)Kernel::DispatchPolicy::Stages);
  printf("smem_bytes %d\n", (int)Kernel::SharedStorageSize);
  printf("sm_count %d\n", sm_count);
  printf("raster %s\n", raster_str(sp.raster_order_));
  printf("swizzle %d\n", 1 << sp.log_swizzle_size_);
  printf("tiles_m %d\ntiles_n %d\n", (M + bm - 1) / bm, (N + bn - 1) / bn);
  if constexpr (std::is_same_v<G, StreamKGemm>) {
    // The stream-K decomposition the scheduler chose: what tilesim's plan must reproduce.
    printf("decomposition_arg %s\nsplits_arg %d\nreduction %s\n", o.decomposition.c_str(), o.splits,
           o.reduction.c_str());
    printf("sk_tiles %u\nsk_units %u\nunits_per_problem %llu\nsplits %d\nsk_groups %llu\n", sp.sk_tiles_,
           sp.sk_units_, (unsigned long long)sp.units_per_problem_, (int)sp.divmod_splits_.divisor,
           (unsigned long long)sp.divmod_sk_groups_.divisor);
    printf("k_tiles_per_sk_unit %d\nbig_units %u\nbig_groups %u\nworkspace_bytes %zu\n",
           (int)sp.divmod_k_tiles_per_sk_unit_.divisor, sp.big_units_, sp.big_groups_, Gemm::get_workspace_size(args));
  } else {
    printf("sched_tiles_m %u\nsched_tiles_n %u\n", sp.problem_tiles_m_ * sp.cluster_shape_m_,
           sp.problem_tiles_n_ * sp.cluster_shape_n_);
    printf("sched_tiles %llu\n", (unsigned long long)sp.blocks_per_problem_);
  }
  printf("grid %ux%ux%u\n", grid.x, grid.y, grid.z);
  printf("ctas %u\n", grid.x * grid.y * grid.z);
  fflush(stdout);

  auto launch = [&]() {
    CUTLASS_OK(gemm.run());
    CUDA_CHECK(cudaGetLastError());
  };

  if (o.check) {
    CUDA_CHECK(cudaMemset(dD, 0, (size_t)M * N * sizeof(half)));  // stale results must not pass
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!tile::check_tn_gemm("cutlass3_gemm", dA, dB, dD, M, N, K)) return 1;
  }

  const std::vector<float> us = time_launches(launch, o.warmup, o.iters);
  const double median = median_of(us);
  const double tflops = 2.0 * M * N * (double)K / (median * 1e-6) / 1e12;
  printf("min_us %.2f\nmedian_us %.2f\ntflops %.1f\n", us.front(), median, tflops);
  if (workspace) CUDA_CHECK(cudaFree(workspace));
  return 0;
}

static int parse_int(const char* s, const char* what) {
  char* end = nullptr;
  const long v = strtol(s, &end, 10);
  if (!*s || *end || v < -2147483647L || v > 2147483647L) die(std::string("bad ") + what + " '" + s + "'");
  return (int)v;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: %s M N K [--raster m|n|heuristic] [--swizzle 1|2|4|8] [--schedule coop|pingpong|streamk]\n"
            "                [--cluster 1x1|2x1] [--decomposition heuristic|streamk|splitk|dataparallel]\n"
            "                [--splits N] [--reduction deterministic|nondeterministic] [--iters N] [--warmup N] [--check]\n",
            argv[0]);
    return 2;
  }
  Opts o;
  o.M = parse_int(argv[1], "M");
  o.N = parse_int(argv[2], "N");
  o.K = parse_int(argv[3], "K");
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_val = i + 1 < argc;
    if (a == "--check") o.check = true;
    else if (a == "--raster" && has_val) o.raster_name = argv[++i];
    else if (a == "--swizzle" && has_val) o.swizzle = parse_int(argv[++i], "--swizzle");
    else if (a == "--schedule" && has_val) o.schedule = argv[++i];
    else if (a == "--cluster" && has_val) o.cluster = argv[++i];
    else if (a == "--decomposition" && has_val) o.decomposition = argv[++i];
    else if (a == "--splits" && has_val) o.splits = parse_int(argv[++i], "--splits");
    else if (a == "--reduction" && has_val) o.reduction = argv[++i];
    else if (a == "--sms" && has_val) o.sms = parse_int(argv[++i], "--sms");
    else if (a == "--iters" && has_val) o.iters = parse_int(argv[++i], "--iters");
    else if (a == "--warmup" && has_val) o.warmup = parse_int(argv[++i], "--warmup");
    else die("unknown argument '" + a + "'" + (a.rfind("--", 0) == 0 && !has_val ? " (missing value)" : ""));
  }
  if (o.M <= 0 || o.N <= 0 || o.K <= 0 || o.M % 128 || o.N % 128 || o.K % 128)
    die("M, N, K must be positive multiples of 128");
  if (o.raster_name == "m") o.raster = RasterOrderOptions::AlongM;
  else if (o.raster_name == "n") o.raster = RasterOrderOptions::AlongN;
  else if (o.raster_name == "heuristic") o.raster = RasterOrderOptions::Heuristic;
  else die("--raster must be m, n or heuristic");
  // CUTLASS silently rounds other values down to a power of two <= 8; refuse them so the request
  // recorded with a measurement is the one that ran (the effective swizzle is printed as well).
  if (o.swizzle != 1 && o.swizzle != 2 && o.swizzle != 4 && o.swizzle != 8) die("--swizzle must be 1, 2, 4 or 8");
  if (o.schedule != "coop" && o.schedule != "pingpong" && o.schedule != "streamk")
    die("--schedule must be coop, pingpong or streamk");
  if (o.decomposition != "heuristic" && o.decomposition != "streamk" && o.decomposition != "splitk" &&
      o.decomposition != "dataparallel")
    die("--decomposition must be heuristic, streamk, splitk or dataparallel");
  if (o.reduction != "deterministic" && o.reduction != "nondeterministic")
    die("--reduction must be deterministic or nondeterministic");
  if (o.splits < 1) die("--splits must be >= 1");
  if (o.cluster != "1x1" && o.cluster != "2x1") die("--cluster must be 1x1 or 2x1");
  if (o.cluster == "2x1" && o.schedule != "coop") die("--cluster 2x1 is built only for --schedule coop");
  if (o.iters < 1 || o.warmup < 0) die("--iters must be >= 1 and --warmup >= 0");

  int cc_major = 0, cc_minor = 0, device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, device));
  if (cc_major != 9 || cc_minor != 0) {  // the binary holds sm_90a code only (WGMMA, TMA multicast)
    fprintf(stderr, "cutlass3_gemm: needs an sm_90 GPU (H100/H200), found sm_%d%d\n", cc_major, cc_minor);
    return 2;
  }

  tile::TnOperands ops = tile::alloc_tn_operands(o.M, o.N, o.K);
  half *dA = ops.A, *dB = ops.B, *dD = ops.D;

  int rc;
  if (o.schedule == "pingpong") rc = run<PingpongGemm>(o, dA, dB, dD);
  else if (o.schedule == "streamk") rc = run<StreamKGemm>(o, dA, dB, dD);
  else if (o.cluster == "2x1") rc = run<CoopC2Gemm>(o, dA, dB, dD);
  else rc = run<CoopGemm>(o, dA, dB, dD);

  tile::free_tn_operands(ops);
  return rc;
}
