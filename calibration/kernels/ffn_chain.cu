// ffn_chain: a non-gated fp16 FFN pair, GEMM0 then GEMM1, under one of tilesim's sync policies.
//
//   H[M,F] = X[M,D] * W0^T     W0 stored [F,D] row-major (tilesim `b: col`, an nn.Linear weight)
//   Y[M,D] = H[M,F] * W1^T     W1 stored [D,F] row-major
//   fp32 accumulation, H and Y fp16; no activation (tilesim's is element-wise and costs nothing).
//
// Both GEMMs use the tile of gemm_order.cu (gemm_tile.cuh): BMx128x32, 3 stages, 256 threads,
// BM = 128 or 64 (--bm); M need not be a multiple of BM. Tiles: gemm0 ceil(M/BM) x F/128
// ("producer" tiles, gn0 = F/128 per row), gemm1 ceil(M/BM) x D/128 (gn1 = D/128 per row).
//
// Modes (MODE argument), each mirroring a tilesim `sync:` policy of `workload: {kind: ffn}`:
//
//   stream    two kernels on one stream, each in row-major tile order (block b -> tile
//             (b / gn, b % gn)). sync: {kind: stream}.
//
//   rowsync   CuSync's RowSync, as tilesim models it (workloads/sync/rowsync.cpp, cusync.cpp):
//             stream 1: the producer (gemm0). Every producer block first raises a "started" flag;
//             after storing its tile it makes the stores visible (__threadfence) and adds 1 to the
//             counter of its row of tiles. Stream 2: a one-block wait kernel that spins until the
//             producer has started, then the consumer (gemm1), whose block for tile row m spins
//             (thread 0, ld.acquire + __nanosleep backoff) until counter[m] == gn0, then runs
//             without further waits. sync: {kind: rowsync}.
//             Forward progress: a consumer block holds an SM slot while it spins, so this needs
//             every producer block to be dispatched before consumer blocks can take all slots.
//             The producer is launched first, the wait kernel keeps the consumer from launching
//             before the producer has started, and the producer's stream has the higher priority
//             (the block scheduler then prefers its pending blocks; tilesim's default
//             `dispatch: oldest_kernel` assumes the same). This is what CuSync relies on; it is
//             not a CUDA guarantee, so every spin has a watchdog (below). --no-prio: equal
//             priorities.
//
//   dataflow  ONE fused kernel, grid = producer tiles + consumer tiles (block-index dataflow,
//             tilesim's sync: {kind: dataflow, after: row}). Thread 0 of each block takes a ticket
//             with atomicAdd on a global counter, so tickets follow the real dispatch order, and
//             a host-built table maps the ticket to a tile: for each row m (row-major producer
//             order), the row's gn0 producer tiles, then the row's gn1 consumer tiles
//             (--df-rows R: after each group of R rows, tilesim's `rows: R`; R >= tiles_m puts all
//             producers first). A consumer k-step waits for the one producer tile it reads
//             (per-tile flags, as tilesim's dataflow does: workloads/sync/tilesync.cpp
//             tile_waits); --df-wait row makes a consumer wait once for its whole row instead.
//             Deadlock-free by construction: a consumer waits only on producer tiles of its row,
//             all of which have smaller tickets, i.e. were taken by blocks already running, and
//             producers never wait.
//
// Counters are never reset between chains: launch e (1, 2, ...) waits for counter values
// e x (posts per launch) (epochs), so no memset sits between chains or in the timed region. The
// dataflow ticket of launch e is atomicAdd(ticket) - (e-1) x blocks.
//
// Watchdog: every spin gives up after ~2 s (tile::kWatchdogCycles SM cycles), sets an error
// flag and lets the block finish (with garbage); the host then reports "WATCHDOG" and exits 3,
// so a deadlock is a failed case, not a hung GPU.
//
// Timing: one event pair per chain (recorded on the producer's stream before the first launch,
// and after the last kernel on the consumer's stream), median over --iters chains after --warmup.
// --alone also times each kernel alone (gemm0_alone_median_us, gemm1_alone_median_us; stream and rowsync).
// Chains are enqueued back to back (the next chain's producer waits for this chain's consumer
// through an event when they are on two streams); --sync-each waits on the host for every chain
// before enqueueing the next (calibration/sync_harness_probe.sh compares the two).
//
// Usage: ffn_chain M D F stream|rowsync|dataflow [--bm 64|128] [--check] [--iters N] [--warmup N]
//                  [--alone] [--df-rows R] [--df-wait tile|row|none] [--no-prio] [--timeline FILE]
//                  [--timeline-chains N] [--sync-each]
//   --alone: each kernel of the chain timed alone (stream: the plain kernels; rowsync: the producer
//   with its posts and the consumer with its wait already satisfied).
//   --df-wait none: consumers do not wait (a timing experiment: the result is wrong, no --check).
//   --timeline FILE: per-block SM, start, wait end and end (%globaltimer) of one more chain, CSV;
//   --timeline-chains N: of N more chains, enqueued as the timed ones, with each chain's event pair.
//   --check: runs the chain 3 times with H and Y first set to NaN, compares H with cuBLAS (fp16
//   out) and Y with cuBLAS applied to that H (fp32 out); prints h_rel_fro_error and
//   rel_fro_error (of Y, the worst of the 3 runs), exits 1 above 1e-2 or NaN.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "ffn_kernels.cuh"
#include "gemm_tile.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static void die(const std::string& msg) {
  fprintf(stderr, "ffn_chain: %s\n", msg.c_str());
  exit(2);
}

enum class Mode { stream, rowsync, dataflow };

struct Setup {
  Mode mode;
  int bm, M, D, F, tiles_m, gn0, gn1;
  bool masked, prio;
  int wait_mode;           // dataflow: kWaitTile, kWaitRow or kWaitNone
  bool timeline = false;   // enqueue the TL (timeline-recording) instantiations
  unsigned df_blocks = 0;
  const int4* table = nullptr;
  cudaStream_t s1, s2;
  FfnArgs args;
};

template <int BM, bool MASK_M, bool TL>
static void set_attrs_tl() {
  const int smem = tile::Cfg<BM>::SMEM_BYTES;
  const auto attr = cudaFuncAttributeMaxDynamicSharedMemorySize;
  CUDA_CHECK(cudaFuncSetAttribute(ffn_gemm0_kernel<BM, MASK_M, false, TL>, attr, smem));
  CUDA_CHECK(cudaFuncSetAttribute(ffn_gemm0_kernel<BM, MASK_M, true, TL>, attr, smem));
  CUDA_CHECK(cudaFuncSetAttribute(ffn_gemm1_kernel<BM, MASK_M, false, TL>, attr, smem));
  CUDA_CHECK(cudaFuncSetAttribute(ffn_gemm1_kernel<BM, MASK_M, true, TL>, attr, smem));
  CUDA_CHECK(cudaFuncSetAttribute(ffn_dataflow_kernel<BM, MASK_M, kWaitRow, TL>, attr, smem));
  CUDA_CHECK(cudaFuncSetAttribute(ffn_dataflow_kernel<BM, MASK_M, kWaitTile, TL>, attr, smem));
  CUDA_CHECK(cudaFuncSetAttribute(ffn_dataflow_kernel<BM, MASK_M, kWaitNone, TL>, attr, smem));
}
template <int BM, bool MASK_M>
static void set_attrs() {
  set_attrs_tl<BM, MASK_M, false>();
  set_attrs_tl<BM, MASK_M, true>();
}

// Enqueues one chain (gemm0 then gemm1, or the fused kernel). ev0 is recorded on s1 before the
// first launch, ev1 after the last kernel on the stream that runs it (s2 for rowsync).
template <int BM, bool MASK_M, bool TL>
static void enqueue_chain(Setup& s, cudaEvent_t ev0, cudaEvent_t ev1) {
  const int smem = tile::Cfg<BM>::SMEM_BYTES;
  const unsigned p_blocks = (unsigned)(s.tiles_m * s.gn0), c_blocks = (unsigned)(s.tiles_m * s.gn1);
  ++s.args.epoch;
  CUDA_CHECK(cudaEventRecord(ev0, s.s1));
  switch (s.mode) {
    case Mode::stream:
      ffn_gemm0_kernel<BM, MASK_M, false, TL><<<p_blocks, THREADS, smem, s.s1>>>(s.args);
      CUDA_CHECK(cudaGetLastError());
      ffn_gemm1_kernel<BM, MASK_M, false, TL><<<c_blocks, THREADS, smem, s.s1>>>(s.args);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaEventRecord(ev1, s.s1));
      break;
    case Mode::rowsync:
      // Producer first (stream 1, high priority), then the wait kernel and the consumer on stream 2.
      ffn_gemm0_kernel<BM, MASK_M, true, TL><<<p_blocks, THREADS, smem, s.s1>>>(s.args);
      CUDA_CHECK(cudaGetLastError());
      cusync_wait_kernel<<<1, 32, 0, s.s2>>>(s.args);
      CUDA_CHECK(cudaGetLastError());
      ffn_gemm1_kernel<BM, MASK_M, true, TL><<<c_blocks, THREADS, smem, s.s2>>>(s.args);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaEventRecord(ev1, s.s2));
      // The next chain's producer (stream 1) must not start before this consumer has finished.
      CUDA_CHECK(cudaStreamWaitEvent(s.s1, ev1, 0));
      break;
    case Mode::dataflow:
      if (s.wait_mode == kWaitTile)
        ffn_dataflow_kernel<BM, MASK_M, kWaitTile, TL><<<s.df_blocks, THREADS, smem, s.s1>>>(s.args, s.table, s.df_blocks);
      else if (s.wait_mode == kWaitRow)
        ffn_dataflow_kernel<BM, MASK_M, kWaitRow, TL><<<s.df_blocks, THREADS, smem, s.s1>>>(s.args, s.table, s.df_blocks);
      else
        ffn_dataflow_kernel<BM, MASK_M, kWaitNone, TL><<<s.df_blocks, THREADS, smem, s.s1>>>(s.args, s.table, s.df_blocks);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaEventRecord(ev1, s.s1));
      break;
  }
}

template <bool TL>
static void enqueue_tl(Setup& s, cudaEvent_t ev0, cudaEvent_t ev1) {
  if (s.bm == 64) {
    if (s.masked) enqueue_chain<64, true, TL>(s, ev0, ev1);
    else enqueue_chain<64, false, TL>(s, ev0, ev1);
  } else {
    if (s.masked) enqueue_chain<128, true, TL>(s, ev0, ev1);
    else enqueue_chain<128, false, TL>(s, ev0, ev1);
  }
}
static void enqueue(Setup& s, cudaEvent_t ev0, cudaEvent_t ev1) {
  if (s.timeline) enqueue_tl<true>(s, ev0, ev1);
  else enqueue_tl<false>(s, ev0, ev1);
}

// One kernel of the chain alone (which = 0: gemm0, 1: gemm1) on s1: stream mode's plain kernels,
// rowsync's producer (with its posts) and consumer (its row wait already satisfied by the chains
// run before, so it measures the consumer's own work plus one satisfied check).
static void enqueue_alone(Setup& s, int which) {
  const unsigned blocks = (unsigned)(s.tiles_m * (which ? s.gn1 : s.gn0));
  const bool sync = s.mode == Mode::rowsync;
#define ALONE(BM, MK)                                                                                            \
  do {                                                                                                           \
    const int sm_ = tile::Cfg<BM>::SMEM_BYTES;                                                                   \
    if (which && sync) ffn_gemm1_kernel<BM, MK, true><<<blocks, THREADS, sm_, s.s1>>>(s.args);                   \
    else if (which) ffn_gemm1_kernel<BM, MK, false><<<blocks, THREADS, sm_, s.s1>>>(s.args);                     \
    else if (sync) ffn_gemm0_kernel<BM, MK, true><<<blocks, THREADS, sm_, s.s1>>>(s.args);                       \
    else ffn_gemm0_kernel<BM, MK, false><<<blocks, THREADS, sm_, s.s1>>>(s.args);                                \
  } while (0)
  if (s.bm == 64) {
    if (s.masked) ALONE(64, true);
    else ALONE(64, false);
  } else {
    if (s.masked) ALONE(128, true);
    else ALONE(128, false);
  }
#undef ALONE
  CUDA_CHECK(cudaGetLastError());
}

static void check_watchdog(const Setup& s, const char* phase) {
  unsigned err = 0;
  CUDA_CHECK(cudaMemcpy(&err, s.args.err, sizeof(err), cudaMemcpyDeviceToHost));
  if (err) {
    fprintf(stderr, "ffn_chain: WATCHDOG during %s: a spin loop timed out (error code %u: 1 = spin timeout, "
                    "2 = ticket out of range); the chain deadlocked or the counters are inconsistent\n",
            phase, err);
    printf("watchdog %u\n", err);
    exit(3);
  }
}

static bool g_sync_each = false;  // --sync-each: the host waits for every chain before the next

// Times `iters` chains after `warmup`, one event pair each; returns sorted microseconds.
template <class Enq>
static std::vector<float> time_chains(Enq&& enq, int warmup, int iters) {
  const int n = warmup + iters;
  std::vector<cudaEvent_t> e0(n), e1(n);
  for (int i = 0; i < n; ++i) {
    CUDA_CHECK(cudaEventCreate(&e0[i]));
    CUDA_CHECK(cudaEventCreate(&e1[i]));
  }
  for (int i = 0; i < n; ++i) {
    enq(e0[i], e1[i]);
    if (g_sync_each) CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> us(iters);
  for (int i = 0; i < iters; ++i) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0[warmup + i], e1[warmup + i]));
    us[i] = ms * 1000.f;
  }
  for (int i = 0; i < n; ++i) {
    CUDA_CHECK(cudaEventDestroy(e0[i]));
    CUDA_CHECK(cudaEventDestroy(e1[i]));
  }
  std::sort(us.begin(), us.end());
  return us;
}

// --timeline FILE: `chains` more chains (--timeline-chains, default 1) with the timeline-recording
// kernels, after the timed chains (the L2 then holds what the previous chain left, as in the
// timed chains), enqueued as the timed chains are (back to back, or one at a time under
// --sync-each). Writes one CSV row per block: chain, slot, kernel (0 producer / gemm0, 1 consumer
// / gemm1), m, n, sm, and start, wait end and end in ns from the earliest start (wait_end_ns
// empty when the block did not wait). Prints each chain's event pair ("timeline_events c ev0_us
// ev1_us", from the first chain's ev0): with several chains, where the event-timed chain's time
// goes that no block's timeline covers (the hand-off between chains).
static void write_timeline(Setup& s, const std::string& path, int chains) {
  const size_t slots = (size_t)s.tiles_m * (s.gn0 + s.gn1);
  const size_t words = slots * 4 * (size_t)chains;
  unsigned long long* d_tl;
  CUDA_CHECK(cudaMalloc(&d_tl, words * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemset(d_tl, 0, words * sizeof(unsigned long long)));
  std::vector<cudaEvent_t> e0(chains), e1(chains);
  for (int c = 0; c < chains; ++c) {
    CUDA_CHECK(cudaEventCreate(&e0[c]));
    CUDA_CHECK(cudaEventCreate(&e1[c]));
  }
  s.timeline = true;
  for (int c = 0; c < chains; ++c) {
    s.args.tl = d_tl + (size_t)c * slots * 4;  // each launch takes its chain's slots by value
    enqueue(s, e0[c], e1[c]);
    if (g_sync_each) CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  check_watchdog(s, "timeline");
  s.timeline = false;
  s.args.tl = nullptr;
  for (int c = 0; c < chains; ++c) {
    float a = 0, b = 0;
    CUDA_CHECK(cudaEventElapsedTime(&a, e0[0], e0[c]));
    CUDA_CHECK(cudaEventElapsedTime(&b, e0[0], e1[c]));
    printf("timeline_events %d %.2f %.2f\n", c, a * 1e3, b * 1e3);
  }
  for (int c = 0; c < chains; ++c) {  // after the loop: every chain is timed from the first's ev0
    CUDA_CHECK(cudaEventDestroy(e0[c]));
    CUDA_CHECK(cudaEventDestroy(e1[c]));
  }
  std::vector<unsigned long long> h(words);
  CUDA_CHECK(cudaMemcpy(h.data(), d_tl, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d_tl));
  unsigned long long t0 = ~0ull;
  for (size_t i = 0; i < slots * chains; ++i)
    if (h[4 * i]) t0 = std::min(t0, h[4 * i]);
  FILE* f = fopen(path.c_str(), "w");
  if (!f) die("cannot write " + path);
  fprintf(f, "chain,slot,kernel,m,n,sm,start_ns,wait_end_ns,end_ns\n");
  for (size_t i = 0; i < slots * chains; ++i) {
    const unsigned long long* r = &h[4 * i];
    if (!r[0]) continue;
    const unsigned long long p = r[3];
    fprintf(f, "%zu,%zu,%llu,%llu,%llu,%llu,%llu,", i / slots, i % slots, (p >> 8) & 0xff, (p >> 16) & 0xffffff,
            p >> 40, p & 0xff, r[0] - t0);
    if (r[2]) fprintf(f, "%llu", r[2] - t0);
    fprintf(f, ",%llu\n", r[1] ? r[1] - t0 : 0ull);
  }
  fclose(f);
  printf("timeline %s (%zu blocks x %d chains)\n", path.c_str(), slots, chains);
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr,
            "usage: %s M D F stream|rowsync|dataflow [--bm 64|128] [--check] [--iters N] [--warmup N] [--alone]\n"
            "          [--df-rows R] [--df-wait tile|row|none] [--no-prio] [--timeline FILE] [--timeline-chains N]\n"
            "          [--sync-each]\n",
            argv[0]);
    return 2;
  }
  Setup s{};
  s.M = atoi(argv[1]);
  s.D = atoi(argv[2]);
  s.F = atoi(argv[3]);
  const std::string mode = argv[4];
  if (mode == "stream") s.mode = Mode::stream;
  else if (mode == "rowsync") s.mode = Mode::rowsync;
  else if (mode == "dataflow") s.mode = Mode::dataflow;
  else die("MODE must be stream, rowsync or dataflow");
  bool check = false, alone = false;
  int iters = 20, warmup = 3, df_rows = 1;
  s.bm = 128;
  s.wait_mode = kWaitTile;
  s.prio = true;
  std::string timeline_path;
  int timeline_chains = 1;
  for (int i = 5; i < argc; ++i) {
    if (!strcmp(argv[i], "--check")) check = true;
    else if (!strcmp(argv[i], "--alone")) alone = true;
    else if (!strcmp(argv[i], "--no-prio")) s.prio = false;
    else if (!strcmp(argv[i], "--sync-each")) g_sync_each = true;
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--bm") && i + 1 < argc) s.bm = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--df-rows") && i + 1 < argc) df_rows = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--df-wait") && i + 1 < argc) {
      const std::string w = argv[++i];
      if (w == "tile") s.wait_mode = kWaitTile;
      else if (w == "row") s.wait_mode = kWaitRow;
      else if (w == "none") s.wait_mode = kWaitNone;
      else die("--df-wait must be tile, row or none");
    } else if (!strcmp(argv[i], "--timeline") && i + 1 < argc) timeline_path = argv[++i];
    else if (!strcmp(argv[i], "--timeline-chains") && i + 1 < argc) timeline_chains = atoi(argv[++i]);
    else die(std::string("unknown argument '") + argv[i] + "'");
  }
  if (s.bm != 64 && s.bm != 128) die("--bm must be 64 or 128");
  if (s.M <= 0 || s.D <= 0 || s.F <= 0 || s.D % 128 || s.F % 128) die("M, D, F must be positive and D, F multiples of 128");
  if (iters < 1 || warmup < 0 || df_rows < 1) die("--iters >= 1, --warmup >= 0, --df-rows >= 1");
  if (timeline_chains < 1 || timeline_chains > 64) die("--timeline-chains must be 1..64");
  if (check && s.mode == Mode::dataflow && s.wait_mode == kWaitNone) die("--df-wait none computes garbage: no --check");
  s.masked = s.M % s.bm != 0;
  s.tiles_m = (s.M + s.bm - 1) / s.bm;
  s.gn0 = s.F / BN;
  s.gn1 = s.D / BN;
  const int smem = s.bm == 128 ? tile::Cfg<128>::SMEM_BYTES : tile::Cfg<64>::SMEM_BYTES;

  // Dataflow ticket table (tilesim's after: row with `rows: df_rows`, producer order row-major).
  std::vector<int4> table;
  for (int g0 = 0; g0 < s.tiles_m; g0 += df_rows) {
    const int g1 = std::min(s.tiles_m, g0 + df_rows);
    for (int m = g0; m < g1; ++m)
      for (int n = 0; n < s.gn0; ++n) table.push_back(make_int4(0, m, n, 0));
    for (int m = g0; m < g1; ++m)
      for (int n = 0; n < s.gn1; ++n) table.push_back(make_int4(1, m, n, 0));
  }
  s.df_blocks = (unsigned)table.size();
  printf("ffn M=%d D=%d F=%d mode=%s bm=%d masked=%d tiles_m=%d gn0=%d gn1=%d producer_blocks=%d consumer_blocks=%d "
         "smem=%d",
         s.M, s.D, s.F, mode.c_str(), s.bm, (int)s.masked, s.tiles_m, s.gn0, s.gn1, s.tiles_m * s.gn0,
         s.tiles_m * s.gn1, smem);
  if (s.mode == Mode::dataflow) printf(" df_rows=%d df_wait=%s", df_rows,
                                         s.wait_mode == kWaitTile ? "tile" : s.wait_mode == kWaitRow ? "row" : "none");
  if (s.mode == Mode::rowsync) printf(" prio=%d", (int)s.prio);
  printf("\n");

  const size_t nX = (size_t)s.M * s.D, nW0 = (size_t)s.F * s.D, nH = (size_t)s.M * s.F, nW1 = (size_t)s.D * s.F,
               nY = (size_t)s.M * s.D;
  half *dX, *dW0, *dH, *dW1, *dY;
  CUDA_CHECK(cudaMalloc(&dX, nX * sizeof(half)));
  CUDA_CHECK(cudaMalloc(&dW0, nW0 * sizeof(half)));
  CUDA_CHECK(cudaMalloc(&dH, nH * sizeof(half)));
  CUDA_CHECK(cudaMalloc(&dW1, nW1 * sizeof(half)));
  CUDA_CHECK(cudaMalloc(&dY, nY * sizeof(half)));
  // Sync words: row_ctr[tiles_m], tile_flag[tiles_m * gn0], started, ticket, err.
  const size_t nsync = (size_t)s.tiles_m + (size_t)s.tiles_m * s.gn0 + 3;
  unsigned* dSync;
  CUDA_CHECK(cudaMalloc(&dSync, nsync * sizeof(unsigned)));
  CUDA_CHECK(cudaMemset(dSync, 0, nsync * sizeof(unsigned)));
  int4* dTable;
  CUDA_CHECK(cudaMalloc(&dTable, table.size() * sizeof(int4)));
  CUDA_CHECK(cudaMemcpy(dTable, table.data(), table.size() * sizeof(int4), cudaMemcpyHostToDevice));
  s.table = dTable;
  tile::fill(dX, nX, 12345);
  tile::fill(dW0, nW0, 67890);
  tile::fill(dW1, nW1, 24680);
  CUDA_CHECK(cudaMemset(dH, 0, nH * sizeof(half)));
  CUDA_CHECK(cudaMemset(dY, 0, nY * sizeof(half)));
  CUDA_CHECK(cudaDeviceSynchronize());

  s.args = FfnArgs{dX, dW0, dH, dW1, dY, s.M, s.D, s.F, dSync, dSync + s.tiles_m, dSync + s.tiles_m + (size_t)s.tiles_m * s.gn0,
                   dSync + s.tiles_m + (size_t)s.tiles_m * s.gn0 + 1, dSync + s.tiles_m + (size_t)s.tiles_m * s.gn0 + 2, 0u,
                   nullptr};

  int prio_lo = 0, prio_hi = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&prio_lo, &prio_hi));  // (least, greatest)
  CUDA_CHECK(cudaStreamCreateWithPriority(&s.s1, cudaStreamNonBlocking, s.prio ? prio_hi : prio_lo));
  CUDA_CHECK(cudaStreamCreateWithPriority(&s.s2, cudaStreamNonBlocking, prio_lo));
  set_attrs<64, false>();
  set_attrs<64, true>();
  set_attrs<128, false>();
  set_attrs<128, true>();

  cudaEvent_t ea, eb;
  CUDA_CHECK(cudaEventCreate(&ea));
  CUDA_CHECK(cudaEventCreate(&eb));

  if (check) {
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    half* dHref;
    float* dYref;
    CUDA_CHECK(cudaMalloc(&dHref, nH * sizeof(half)));
    CUDA_CHECK(cudaMalloc(&dYref, nY * sizeof(float)));
    double h_err = 0, y_err = 0;
    for (int rep = 0; rep < 3; ++rep) {
      // NaN (0xFFFF) in H and Y: a consumer that reads H before it is produced, or a tile that
      // is never stored, shows up as NaN in the error.
      CUDA_CHECK(cudaMemset(dH, 0xFF, nH * sizeof(half)));
      CUDA_CHECK(cudaMemset(dY, 0xFF, nY * sizeof(half)));
      CUDA_CHECK(cudaDeviceSynchronize());
      enqueue(s, ea, eb);
      CUDA_CHECK(cudaDeviceSynchronize());
      check_watchdog(s, "check");
      if (rep == 0) {
        tile::cublas_ref(h, dX, s.D, dW0, s.D, dHref, CUDA_R_16F, s.F, s.M, s.F, s.D);
        tile::cublas_ref(h, dHref, s.F, dW1, s.F, dYref, CUDA_R_32F, s.D, s.M, s.D, s.F);
        CUDA_CHECK(cudaDeviceSynchronize());
        h_err = tile::rel_fro_error(dH, dHref, nH);
      }
      const double e = tile::rel_fro_error(dY, dYref, nY);
      printf("check run %d: rel_fro_error %.6e\n", rep, e);
      if (y_err == y_err && !(e <= y_err)) y_err = e;  // the worst; a NaN, once seen, stays
    }
    printf("h_rel_fro_error %.6e\nrel_fro_error %.6e\n", h_err, y_err);
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaFree(dHref));
    CUDA_CHECK(cudaFree(dYref));
    if (!(h_err <= 1e-2) || !(y_err <= 1e-2)) {
      fprintf(stderr, "ffn_chain: CHECK FAILED (H %.6e, Y %.6e; > 1e-2 or NaN)\n", h_err, y_err);
      return 1;
    }
    printf("check ok\n");
  }

  const std::vector<float> us = time_chains([&](cudaEvent_t a, cudaEvent_t b) { enqueue(s, a, b); }, warmup, iters);
  check_watchdog(s, "timing");
  const double median = median_of(us);
  const double flops = 4.0 * s.M * (double)s.D * s.F;
  printf("min_us %.2f\nmedian_us %.2f\ntflops %.1f\n", us.front(), median, flops / (median * 1e-6) / 1e12);
  // The timeline chain runs before the kernels alone: rowsync's producer alone posts to the row
  // counters, after which a chain's consumers would find their rows already complete.
  if (!timeline_path.empty()) write_timeline(s, timeline_path, timeline_chains);
  if (alone) {
    for (int which = 0; which < 2; ++which) {
      const std::vector<float> a = time_chains(
          [&](cudaEvent_t e0, cudaEvent_t e1) {
            CUDA_CHECK(cudaEventRecord(e0, s.s1));
            enqueue_alone(s, which);
            CUDA_CHECK(cudaEventRecord(e1, s.s1));
          },
          warmup, iters);
      printf("gemm%d_alone_median_us %.2f\n", which, median_of(a));
    }
  }
  CUDA_CHECK(cudaEventDestroy(ea));
  CUDA_CHECK(cudaEventDestroy(eb));
  CUDA_CHECK(cudaStreamDestroy(s.s1));
  CUDA_CHECK(cudaStreamDestroy(s.s2));
  CUDA_CHECK(cudaFree(dX));
  CUDA_CHECK(cudaFree(dW0));
  CUDA_CHECK(cudaFree(dH));
  CUDA_CHECK(cudaFree(dW1));
  CUDA_CHECK(cudaFree(dY));
  CUDA_CHECK(cudaFree(dSync));
  CUDA_CHECK(cudaFree(dTable));
  return 0;
}
