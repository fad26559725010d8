// What do two latency-bound blocks on one SM cost each other? (docs/validation.md, "Two blocks
// that wait": Triton's persistent matmul with two synchronous programs per SM runs each 1.22x
// slower than alone, the FFN chain's paired mma.sync consumers 1.26x, where the simulator's pair
// overlaps almost perfectly.)
// Each block runs a synchronous loop, as a kernel with one stage does: copy `bytes` into shared
// memory (cp.async.cg, 16 B a thread), wait for all of it, then `mmas` mma.sync m16n8k16 per warp
// on fragments read from what arrived, and again. The grid is `per_sm` blocks per SM (the dynamic
// shared memory lets at most two share an SM); each block stamps %globaltimer at its loop's start
// and end, with its SM.
//   --mode l2:   every block reads an 8 MiB buffer the warm-up left in the L2 (at its own offset)
//   --mode dram: every block reads its own slice of a buffer far larger than the L2
//   --row-bytes R: l2 mode reading a tile's rectangle instead: rows of R bytes (a power of two), 8 KiB apart in a
//                matrix of 1024 rows (as a GEMM's tile reads A or B), the next rows each step;
//                the mode prints as l2tileR
//   --share G:   l2 mode with blocks G at a time (by index) reading the same place at the same
//                step, as the tiles that share a panel do; the mode prints as l2shareG
//   --stages S:  S buffers, the copy of step s + S - 1 issued before step s waits (S - 1 steps in
//                flight while one computes, as a pipelined main loop); the mode prints as l2stagesS
//   --l2-mib M:  l2 mode's buffer size in MiB (default 8; the mode prints as l2Mmib)
//   --ldg 1:     loads into registers (ld.global.cg) stored to shared memory instead of cp.async
//                (one stage; the mode prints as l2ldg / dramldg)
//   --active N:  only the blocks on SMs 0..N-1 work (the others return at once): few SMs keep the
//                L2 and DRAM unloaded, so what a pair contends for is its SM's
//   --partner P: 0 every block alike; 1 the second block of an SM copies but computes nothing;
//                2 it computes but copies nothing (which of the two resources the pair contends for)
//   --stamps FILE: thread 0 of every block stamps each step's data being in and its end; FILE gets
//                the last repetition's (block, sm, role, step, data_ns, t_ns, start_ns), for the
//                phases of a pair (calibration/sync_pair_phase_probe.sh)
// Prints one CSV row per repetition: mode,active,bytes,mmas,threads,per_sm,partner,rep, lone_ns (median
// loop time of blocks alone on their SM), first_ns and second_ns (of the first and second block
// to arrive on an SM that ran two; 0 if none), pairs (SMs that ran two blocks).
//   nvcc -O3 -arch=sm_90 -o sync_pair calibration/kernels/sync_pair.cu
//   ./sync_pair --mode l2 --bytes 32768 --mmas 16 --threads 256 --per-sm 2 --steps 256
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

#include "common.cuh"

namespace {

constexpr int kSmemBytes = 100 * 1024;  // two fit in an SM's 228 KiB, three do not
// Tile mode's buffer: 1024 rows of 8 KiB (a 4096-wide fp16 matrix), the L2 buffer's 8 MiB.
constexpr unsigned kRows = 1024, kPitchChunks = 8192 / 16;

__device__ __forceinline__ void copy16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Step s's copy into buffer s % stages, as one commit group; with `ldg`, loads into registers
// (ld.global.cg, four in flight a thread) stored to shared memory instead (the step waits for them).
__device__ __forceinline__ void issue_step(int4* smem, const int4* buf, unsigned long long base, unsigned long long span,
                                           int chunks, int stages, int s, bool ldg) {
  int4* dst = smem + s % stages * chunks;
  const int4* src = buf + (base + static_cast<unsigned long long>(s) * chunks) % span;
  if (ldg) {
    const int n = blockDim.x;
    for (int i = threadIdx.x; i < chunks; i += 4 * n) {
      int4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        if (i + u * n < chunks) v[u] = __ldcg(&src[i + u * n]);
#pragma unroll
      for (int u = 0; u < 4; ++u)
        if (i + u * n < chunks) dst[i + u * n] = v[u];
    }
    return;
  }
  for (int i = threadIdx.x; i < chunks; i += blockDim.x) copy16(&dst[i], &src[i]);
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most `pending` of this thread's copy groups are still in flight.
__device__ __forceinline__ void wait_all_but(int pending) {
  switch (pending) {
    case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
  }
}

__global__ void sync_loop(const int4* __restrict__ buf, unsigned long long span, unsigned long long slice, bool own,
                          int steps, int chunks, int stages, bool ldg, int row_chunks, int share, int mmas,
                          int partner, int active,
                          unsigned* arrivals,
                          unsigned long long* out, float* sink, unsigned long long* stamps, int stamp_steps) {
  // Shared memory holds the copies alone, 128-byte aligned: a static variable beside it shifted the
  // dynamic buffer off the line, and cp.async then read every sector twice (sync_pair_ncu.sh).
  extern __shared__ __align__(128) int4 smem[];
  unsigned& role = reinterpret_cast<unsigned*>(smem)[kSmemBytes / 4 - 1];  // past every stage's buffer
  if (static_cast<int>(smid()) >= active) return;  // only SMs 0..active-1 work
  // The block's place on its SM: the second to arrive there is the partner.
  if (threadIdx.x == 0) role = atomicAdd(&arrivals[smid()], 1u);
  __syncthreads();
  const unsigned my_role = role;
  const bool second = my_role > 0;
  const bool copies = !(second && partner == 2);
  const int my_mmas = second && partner == 1 ? 0 : mmas;
  // Whole steps' chunks, so no copy wraps around the buffer and the loop needs no division.
  const unsigned long long base =
      own ? blockIdx.x * slice : (blockIdx.x / share * 7919ull) % (span / chunks) * chunks;
  // Tile mode: the block's rectangle starts at a column of its own (block mod the tiles a row
  // holds) and a row spread over the buffer.
  const unsigned tile_col0 = row_chunks ? blockIdx.x % (kPitchChunks / row_chunks) * row_chunks : 0;
  const unsigned tile_row0 = (blockIdx.x * 7919u) & (kRows - 1);
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float acc[4][4] = {};
  __syncthreads();
  const unsigned long long t0 = globaltimer();
  for (int s = 0; s < steps; ++s) {
    if (copies && row_chunks) {
      // A tile's rectangle: rows of row_chunks x 16 B, kPitchChunks apart, the next rows each step.
      // row_chunks is a power of two: shifts, not divisions, so the copies are not ALU-bound.
      const unsigned shift = __ffs(row_chunks) - 1;
      const unsigned first_row = tile_row0 + s * (chunks >> shift);
      for (int i = threadIdx.x; i < chunks; i += blockDim.x) {
        const unsigned row = (first_row + (i >> shift)) & (kRows - 1);
        copy16(&smem[i], &buf[row * kPitchChunks + tile_col0 + (i & (row_chunks - 1))]);
      }
      asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
    } else if (copies) {
      // `stages` buffers: the copy of step s + stages - 1 goes out before step s waits for its
      // own (the buffer it fills was computed on in step s - 1); one stage is the synchronous loop.
      if (s == 0)
        for (int p = 0; p + 1 < stages && p < steps; ++p) issue_step(smem, buf, base, span, chunks, stages, p, ldg);
      if (s + stages - 1 < steps) issue_step(smem, buf, base, span, chunks, stages, s + stages - 1, ldg);
      else if (!ldg) asm volatile("cp.async.commit_group;" ::: "memory");  // an empty group keeps the count
      if (!ldg) wait_all_but(stages - 1);
    }
    __syncthreads();
    // --stamps: when the step's data is in (the wait and the barrier behind it are through).
    if (stamps && threadIdx.x == 0 && s < stamp_steps)
      stamps[(static_cast<unsigned long long>(blockIdx.x) * stamp_steps + s) * 2] = globaltimer();
    if (my_mmas) {
      // Fragments from what arrived, so no MMA can start before the copy is in.
      const unsigned* w = reinterpret_cast<const unsigned*>(smem + (row_chunks ? 0 : s % stages * chunks)) +
                          ((warp * 32 + lane) * 4) % (chunks * 4);
      const unsigned a[4] = {w[0], w[1], w[2], w[3]};
      const unsigned b[2] = {w[1], w[2]};
      for (int m = 0; m < my_mmas; m += 4) {
        mma16816(acc[0], a, b);
        mma16816(acc[1], a, b);
        mma16816(acc[2], a, b);
        mma16816(acc[3], a, b);
      }
    }
    __syncthreads();
    // --stamps: each step's end, for the phase of a pair's two blocks (two stores a step).
    if (stamps && threadIdx.x == 0 && s < stamp_steps)
      stamps[(static_cast<unsigned long long>(blockIdx.x) * stamp_steps + s) * 2 + 1] = globaltimer();
  }
  const unsigned long long t1 = globaltimer();
  float sum = 0;
  for (auto& r : acc)
    for (float v : r) sum += v;
  if (sum == 12345.f) sink[0] = sum;  // keeps the MMAs
  if (threadIdx.x == 0) {
    out[4 * blockIdx.x] = smid();
    out[4 * blockIdx.x + 1] = my_role;
    out[4 * blockIdx.x + 2] = t0;
    out[4 * blockIdx.x + 3] = t1;
  }
}

unsigned long long median(std::vector<unsigned long long> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = "l2";
  int bytes = 32768, mmas = 16, threads = 256, per_sm = 1, steps = 256, partner = 0, reps = 5, active = 1 << 20,
      row_bytes = 0, share = 1, stages = 1, l2_mib = 8;
  bool ldg = false;
  const char* stamps_path = nullptr;  // --stamps FILE: every block's step ends of the last repetition
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--mode")) mode = argv[i + 1];
    else if (!strcmp(argv[i], "--bytes")) bytes = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--mmas")) mmas = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--per-sm")) per_sm = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--partner")) partner = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--active")) active = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--row-bytes")) row_bytes = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--share")) share = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--stages")) stages = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--l2-mib")) l2_mib = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--ldg")) ldg = atoi(argv[i + 1]) != 0;
    else if (!strcmp(argv[i], "--stamps")) stamps_path = argv[i + 1];
    else { fprintf(stderr, "unknown argument %s\n", argv[i]); return 2; }
  }
  if (row_bytes && (strcmp(mode, "l2") || row_bytes < 16 || (row_bytes & (row_bytes - 1)) || row_bytes > 8192 ||
                    bytes % row_bytes)) {
    fprintf(stderr, "--row-bytes: l2 mode, a power of two from 16 to 8192 dividing --bytes\n");
    return 2;
  }
  if (stages < 1 || stages > 4 || (stages > 1 && row_bytes) || static_cast<long>(stages) * bytes > kSmemBytes - 16) {
    fprintf(stderr, "--stages: 1 to 4, contiguous reads, stages x bytes at most %d\n", kSmemBytes);
    return 2;
  }
  if (ldg && (stages > 1 || row_bytes)) {
    fprintf(stderr, "--ldg 1: one stage, contiguous reads\n");
    return 2;
  }
  if (l2_mib < 1 || l2_mib > 40 || (l2_mib != 8 && (strcmp(mode, "l2") || row_bytes))) {
    fprintf(stderr, "--l2-mib: 1 to 40, l2 mode with contiguous reads\n");
    return 2;
  }
  if (share < 1 || (share > 1 && strcmp(mode, "l2"))) {
    fprintf(stderr, "--share: l2 mode, at least 1\n");
    return 2;
  }
  if (bytes < 16 || bytes > kSmemBytes || bytes % 16 || mmas % 4 || per_sm < 1 || per_sm > 2) {
    fprintf(stderr, "bytes: 16..%d, a multiple of 16; mmas: a multiple of 4; per-sm 1 or 2\n", kSmemBytes);
    return 2;
  }
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int grid = sms * per_sm, chunks = bytes / 16;
  const bool own = !strcmp(mode, "dram");
  const unsigned long long slice = own ? static_cast<unsigned long long>(steps) * chunks : 0;
  // The L2 buffer: --l2-mib (8 by default), rounded down to whole steps.
  const unsigned long long span = own ? slice * grid : (static_cast<unsigned long long>(l2_mib) << 20) / 16 / chunks * chunks;
  int4* buf;
  CUDA_CHECK(cudaMalloc(&buf, span * 16));
  CUDA_CHECK(cudaMemset(buf, 1, span * 16));
  unsigned long long* out;
  float* sink;
  CUDA_CHECK(cudaMalloc(&out, 4ull * grid * sizeof(unsigned long long)));
  unsigned* arrivals;
  CUDA_CHECK(cudaMalloc(&arrivals, 1024 * sizeof(unsigned)));
  CUDA_CHECK(cudaMalloc(&sink, sizeof(float)));
  unsigned long long* stamps = nullptr;
  if (stamps_path) CUDA_CHECK(cudaMalloc(&stamps, 2ull * grid * steps * sizeof(unsigned long long)));
  CUDA_CHECK(cudaFuncSetAttribute(sync_loop, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  std::vector<unsigned long long> h(4ull * grid);
  for (int rep = -2; rep < reps; ++rep) {
    CUDA_CHECK(cudaMemset(arrivals, 0, 1024 * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(out, 0xff, h.size() * sizeof(h[0])));  // blocks that return stamp nothing
    sync_loop<<<grid, threads, kSmemBytes>>>(buf, span, slice, own, steps, chunks, stages, ldg, row_bytes / 16, share,
                                             mmas, partner,
                                             active, arrivals, out, sink, stamps, steps);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    if (rep < 0) continue;  // warm-up: the L2 buffer is resident afterwards
    CUDA_CHECK(cudaMemcpy(h.data(), out, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
    std::vector<unsigned long long> first, second, lone;
    std::vector<int> on_sm(sms, 0);
    const unsigned long long working = std::min(active, sms);  // stamps of blocks that returned are all ones
    for (int b = 0; b < grid; ++b)
      if (h[4 * b] < working) ++on_sm[h[4 * b]];
    for (int b = 0; b < grid; ++b) {
      if (h[4 * b] >= working) continue;
      const unsigned long long ns = h[4 * b + 3] - h[4 * b + 2];
      if (on_sm[h[4 * b] % sms] == 1) lone.push_back(ns);
      else (h[4 * b + 1] == 0 ? first : second).push_back(ns);
    }
    int pairs = 0;
    for (int c : on_sm) pairs += c == 2;
    char name[32];
    if (row_bytes) snprintf(name, sizeof name, "%stile%d", mode, row_bytes);
    else if (share > 1) snprintf(name, sizeof name, "%sshare%d", mode, share);
    else if (stages > 1) snprintf(name, sizeof name, "%sstages%d", mode, stages);
    else if (l2_mib != 8) snprintf(name, sizeof name, "%s%dmib", mode, l2_mib);
    else if (ldg) snprintf(name, sizeof name, "%sldg", mode);
    else snprintf(name, sizeof name, "%s", mode);
    printf("%s,%d,%d,%d,%d,%d,%d,%d,%llu,%llu,%llu,%d\n", name, std::min(active, sms), bytes, mmas, threads, per_sm,
           partner, rep, median(lone),
           median(first), median(second), pairs);
  }
  if (stamps_path) {
    // The last repetition's stamps: block, SM, role (0: first on its SM), step, and ns since the
    // block's loop began to the step's data being in (data_ns) and to its end (t_ns).
    std::vector<unsigned long long> st(2ull * grid * steps);
    CUDA_CHECK(cudaMemcpy(st.data(), stamps, st.size() * sizeof(st[0]), cudaMemcpyDeviceToHost));
    FILE* f = fopen(stamps_path, "w");
    if (!f) { fprintf(stderr, "%s: cannot write\n", stamps_path); return 2; }
    fprintf(f, "block,sm,role,step,data_ns,t_ns,start_ns\n");
    for (int b = 0; b < grid; ++b) {
      if (h[4 * b] >= static_cast<unsigned long long>(std::min(active, sms))) continue;
      for (int s = 0; s < steps; ++s) {
        const size_t i = (static_cast<size_t>(b) * steps + s) * 2;
        fprintf(f, "%d,%llu,%llu,%d,%llu,%llu,%llu\n", b, h[4 * b], h[4 * b + 1], s, st[i] - h[4 * b + 2],
                st[i + 1] - h[4 * b + 2], h[4 * b + 2]);
      }
    }
    fclose(f);
    CUDA_CHECK(cudaFree(stamps));
  }
  CUDA_CHECK(cudaFree(buf));
  CUDA_CHECK(cudaFree(out));
  CUDA_CHECK(cudaFree(sink));
  CUDA_CHECK(cudaFree(arrivals));
  return 0;
}
