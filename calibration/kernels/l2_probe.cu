// l2_probe: two small probes of the memory system, for tilesim's arch parameters.
//
// (a) near/far L2 latency (l2.hit_latency_ns, l2.far_extra_latency_ns, l2.far_copy,
//     sm.partition_map, dram.latency_ns). For each SM s in --sms:
//       1. a write-only kernel on every SM rewrites the 8 MiB buffer (--buf-mib), so every line is
//          L2-resident in its home half only (stores go to the home half);
//       2. ONE thread pinned to SM s (grid = one block per SM, each needing more than half an SM's
//          shared memory, so every SM holds exactly one block; only the block whose %smid is s
//          proceeds) chases pointers through --lines 128-byte lines (consecutive lines from the
//          buffer's start; visit order k -> line (k * 2481 + 17) mod lines, a full cycle) with
//          ld.global.cg (L2, not L1), timing each load with clock64: passes 0, 1, 2 back to back;
//       3. a read kernel on every SM reads the lines (would make near copies in both halves), then
//          pass 3 on SM s;
//       4. a write-only kernel over a 256 MiB scratch buffer evicts them, then pass 4 (DRAM).
//     Per pass: a latency histogram (8-cycle bins), a two-cluster split (near/far plateaus, the
//     median of each, the fraction of far lines) and the conversion to ns at the SM clock
//     measured during the pass (clock64 vs %globaltimer); cudaDevAttrClockRate is printed too.
//     Lines that SM s and SM s' both see as far / near in pass 0 give the SM-to-half map.
// (b) DRAM bandwidth: read, write and copy kernels over a 2 GiB buffer (--dram-mib), median of
//     --iters runs (after 3 warm-ups), GB/s = bytes moved / median.
//
// Usage: l2_probe [--sms auto|LIST] [--lines 4096] [--buf-mib 8] [--dram-mib 2048]
//                 [--iters 20] [--csv FILE] [--skip-nearfar] [--skip-dram]
//   --sms auto (default): the first four %smid values found, two in the middle, the last two.
//   --csv FILE: per-line latencies, one row per line, one column per (SM, pass).
#include <cuda_runtime.h>

#include "common.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

constexpr int PROBE_SMEM = 120 * 1024;  // > half of the 228 KiB per SM: one block per SM
constexpr int MAX_PASSES = 3;           // passes per probe launch (shared memory: passes x lines x 4 B)
constexpr unsigned PERM_A = 2481, PERM_B = 17;  // visit order k -> (k * A + B) mod lines (A odd)

__device__ __forceinline__ unsigned ld_cg(const unsigned* p) {
  unsigned v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Writes the whole buffer (no reads): word 0 of line perm(k) holds perm(k+1) for the first
// `lines` lines; every other word holds 0.
__global__ void write_chase_kernel(unsigned* buf, size_t words, unsigned lines) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
    unsigned v = 0;
    const size_t line = i / 32;
    if (i % 32 == 0 && line < lines) {
      // line = perm(k) = (k*A + B) mod lines; next = perm(k+1) = line + A (mod lines).
      v = (unsigned)((line + PERM_A) & (lines - 1));
    }
    buf[i] = v;
  }
}

// Every block reads word 0 of each of the first `lines` lines (ld.global.cg).
__global__ void read_lines_kernel(const unsigned* buf, unsigned lines, unsigned* sink) {
  unsigned x = 0;
  for (unsigned l = threadIdx.x; l < lines; l += blockDim.x) x ^= ld_cg(buf + (size_t)l * 32);
  if (x == 0xFFFFFFFFu) sink[0] = x;  // never (values are < lines); keeps the loads
}

// Write-only sweep of a scratch buffer (evicts the L2).
__global__ void write_kernel(uint4* p, size_t n, unsigned v) {
  const uint4 val = make_uint4(v, v, v, v);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = val;
}

// One block per SM; only thread 0 of the block on SM `target` works. lat_out[p * lines + line]
// receives the cycles of the load of `line` in pass p; info = {found, clock cycles, globaltimer ns}.
__global__ void probe_kernel(const unsigned* __restrict__ buf, unsigned lines, int passes, unsigned target,
                             unsigned* claimed, unsigned* lat_out, unsigned long long* info) {
  extern __shared__ unsigned s_lat[];  // passes x lines
  __shared__ volatile unsigned s_sink;
  if (threadIdx.x != 0) return;
  if (smid() != target) {
    // Stay resident (so that the target SM cannot receive a second block) until the target
    // block has claimed the run, or ~0.25 s if no SM has that id.
    const long long t0 = clock64();
    while (ld_relaxed(claimed) == 0 && clock64() - t0 < 500000000ll) __nanosleep(1000);
    return;
  }
  if (atomicCAS(claimed, 0u, 1u) != 0u) return;
  {  // let the other blocks see the claim and exit (~50 us), so they do not poll during the chase
    const long long t0 = clock64();
    while (clock64() - t0 < 100000) {
    }
  }
  const long long c0 = clock64();
  const unsigned long long g0 = globaltimer();
  for (int p = 0; p < passes; ++p) {
    unsigned cur = PERM_B & (lines - 1);
    for (unsigned i = 0; i < lines; ++i) {
      const long long t0 = clock64();
      const unsigned nxt = ld_cg(buf + (size_t)cur * 32);
      s_sink = nxt;  // waits for the load before the second clock read
      const long long t1 = clock64();
      s_lat[p * lines + cur] = (unsigned)(t1 - t0);
      cur = nxt;
    }
  }
  const long long c1 = clock64();
  const unsigned long long g1 = globaltimer();
  for (unsigned i = 0; i < passes * lines; ++i) lat_out[i] = s_lat[i];
  info[0] = 1;
  info[1] = (unsigned long long)(c1 - c0);
  info[2] = g1 - g0;
}

// One block per SM (same shared memory as probe_kernel): records each block's %smid. Blocks stay
// ~100 us so that all of them are resident at once (one per SM).
__global__ void smid_kernel(unsigned* out) {
  extern __shared__ unsigned s_unused[];
  if (threadIdx.x != 0) return;
  out[blockIdx.x] = smid();
  const long long t0 = clock64();
  while (clock64() - t0 < 200000) {
  }
  if (out[blockIdx.x] == 0xFFFFFFFFu) s_unused[0] = 0;  // never; references the shared memory
}

// Grid-stride read of n uint4, four independent loads in flight per thread; all bytes are used.
__global__ void dram_read_kernel(const uint4* __restrict__ p, size_t n, unsigned* sink) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  unsigned x = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
    x ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    const uint4 a = p[i];
    x ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (x == 0x9E3779B9u) sink[0] = x;  // data-dependent, so the loads stay
}

// dst[i] = src[i] for n uint4, four in flight per thread.
__global__ void dram_copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, size_t n) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

static void die(const std::string& msg) {
  fprintf(stderr, "l2_probe: %s\n", msg.c_str());
  exit(2);
}

struct Split {
  double near_cyc = 0, far_cyc = 0, frac_far = 0;
  int outliers = 0;
  bool two = false;
  std::vector<signed char> far;  // per line: 1 far, 0 near, -1 outlier
};

static double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Two plateaus by 1-D 2-means over the values below 3x the median (higher ones are outliers:
// TLB misses, interference). One plateau if the two centres are within 15%.
static Split split(const std::vector<unsigned>& lat) {
  Split s;
  std::vector<double> v(lat.begin(), lat.end());
  const double med = median(v), cut = 3 * med;
  double lo = 1e30, hi = 0;
  for (double x : v)
    if (x <= cut) lo = std::min(lo, x), hi = std::max(hi, x);
  for (int it = 0; it < 50; ++it) {
    double s0 = 0, s1 = 0;
    int n0 = 0, n1 = 0;
    for (double x : v) {
      if (x > cut) continue;
      if (std::fabs(x - lo) <= std::fabs(x - hi)) s0 += x, ++n0;
      else s1 += x, ++n1;
    }
    const double nlo = n0 ? s0 / n0 : lo, nhi = n1 ? s1 / n1 : hi;
    if (nlo == lo && nhi == hi) break;
    lo = nlo, hi = nhi;
  }
  s.far.assign(v.size(), 0);
  std::vector<double> a, b;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] > cut) {
      s.far[i] = -1;
      ++s.outliers;
    } else if (std::fabs(v[i] - lo) <= std::fabs(v[i] - hi)) {
      a.push_back(v[i]);
    } else {
      b.push_back(v[i]);
      s.far[i] = 1;
    }
  }
  s.two = !b.empty() && !a.empty() && hi > 1.15 * lo;
  if (s.two) {
    s.near_cyc = median(a);
    s.far_cyc = median(b);
    s.frac_far = (double)b.size() / (a.size() + b.size());
  } else {
    std::vector<double> all = a;
    all.insert(all.end(), b.begin(), b.end());
    s.near_cyc = median(all);
    for (auto& f : s.far)
      if (f == 1) f = 0;
  }
  return s;
}

static std::string histogram(const std::vector<unsigned>& lat) {
  std::vector<unsigned> v(lat);
  std::sort(v.begin(), v.end());
  std::string out;
  size_t i = 0;
  while (i < v.size()) {
    const unsigned bin = v[i] / 8 * 8;
    size_t j = i;
    while (j < v.size() && v[j] / 8 * 8 == bin) ++j;
    out += " " + std::to_string(bin) + ":" + std::to_string(j - i);
    i = j;
  }
  return out;
}

int main(int argc, char** argv) {
  std::vector<int> sms;  // empty: automatic choice from the SM ids found
  unsigned lines = 4096;
  size_t buf_mib = 8, dram_mib = 2048;
  int iters = 20;
  bool do_nearfar = true, do_dram = true;
  std::string csv;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--sms" && has) {
      sms.clear();
      if (!strcmp(argv[i + 1], "auto")) {
        ++i;
        continue;
      }
      std::string list = argv[++i];
      size_t p = 0;
      while (p < list.size()) {
        size_t q = list.find(',', p);
        if (q == std::string::npos) q = list.size();
        sms.push_back(atoi(list.substr(p, q - p).c_str()));
        p = q + 1;
      }
    } else if (a == "--lines" && has) lines = (unsigned)atoi(argv[++i]);
    else if (a == "--buf-mib" && has) buf_mib = (size_t)atol(argv[++i]);
    else if (a == "--dram-mib" && has) dram_mib = (size_t)atol(argv[++i]);
    else if (a == "--iters" && has) iters = atoi(argv[++i]);
    else if (a == "--csv" && has) csv = argv[++i];
    else if (a == "--skip-nearfar") do_nearfar = false;
    else if (a == "--skip-dram") do_dram = false;
    else die("unknown argument '" + a + "'");
  }
  if (lines < 64 || (lines & (lines - 1))) die("--lines must be a power of two >= 64");
  if ((size_t)lines * 128 > buf_mib << 20) die("--lines x 128 B must fit in --buf-mib");
  if ((size_t)MAX_PASSES * lines * 4 > (size_t)PROBE_SMEM) die("--lines too large for the shared-memory record");
  if (iters < 1 || dram_mib < 16) die("--iters >= 1, --dram-mib >= 16");

  int dev = 0, clock_khz = 0, nsm = 0, l2_bytes = 0, mem_khz = 0, bus_bits = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
  printf("device sms=%d clock_rate_mhz=%.0f l2_bytes=%d mem_clock_mhz=%.0f bus_bits=%d\n", nsm, clock_khz / 1e3, l2_bytes,
         mem_khz / 1e3, bus_bits);

  if (do_nearfar) {
    const size_t words = (buf_mib << 20) / 4;
    const size_t scratch_bytes = 256ull << 20;
    unsigned *buf, *claimed, *lat, *sink;
    unsigned long long* info;
    uint4* scratch;
    CUDA_CHECK(cudaMalloc(&buf, words * 4));
    CUDA_CHECK(cudaMalloc(&scratch, scratch_bytes));
    CUDA_CHECK(cudaMalloc(&claimed, 4));
    CUDA_CHECK(cudaMalloc(&sink, 4));
    CUDA_CHECK(cudaMalloc(&lat, (size_t)MAX_PASSES * lines * 4));
    CUDA_CHECK(cudaMalloc(&info, 3 * sizeof(unsigned long long)));
    CUDA_CHECK(cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, PROBE_SMEM));
    CUDA_CHECK(cudaFuncSetAttribute(smid_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, PROBE_SMEM));
    {  // the %smid values in use
      unsigned* d_ids;
      CUDA_CHECK(cudaMalloc(&d_ids, nsm * 4));
      smid_kernel<<<nsm, 32, PROBE_SMEM>>>(d_ids);
      CUDA_CHECK(cudaGetLastError());
      std::vector<unsigned> ids(nsm);
      CUDA_CHECK(cudaMemcpy(ids.data(), d_ids, nsm * 4, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaFree(d_ids));
      std::sort(ids.begin(), ids.end());
      const size_t distinct = std::unique(ids.begin(), ids.end()) - ids.begin();
      ids.resize(distinct);
      printf("smids found: %zu distinct of %d blocks, min %u max %u\n", distinct, nsm, ids.front(), ids.back());
      if (sms.empty()) {  // auto: the first four, two in the middle, the last two
        const size_t n = ids.size();
        for (size_t k : {(size_t)0, (size_t)1, (size_t)2, (size_t)3, n / 2, n / 2 + 1, n - 2, n - 1})
          if (k < n && std::find(sms.begin(), sms.end(), (int)ids[k]) == sms.end()) sms.push_back((int)ids[k]);
      }
      printf("probing sms:");
      for (int s : sms) printf(" %d", s);
      printf("\n");
    }
    const char* pass_names[5] = {"after_write", "repeat1", "repeat2", "after_all_sm_read", "after_evict_dram"};
    std::vector<std::vector<unsigned>> cols;  // per (sm, pass)
    std::vector<std::string> col_names;
    std::vector<std::vector<signed char>> far0;  // pass-0 classification per SM
    std::vector<int> found_sms;

    auto probe = [&](int sm, int passes, std::vector<std::vector<unsigned>>& out, double& mhz) -> bool {
      CUDA_CHECK(cudaMemset(claimed, 0, 4));
      CUDA_CHECK(cudaMemset(info, 0, 3 * sizeof(unsigned long long)));
      probe_kernel<<<nsm, 32, PROBE_SMEM>>>(buf, lines, passes, (unsigned)sm, claimed, lat, info);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaDeviceSynchronize());
      unsigned long long h[3];
      CUDA_CHECK(cudaMemcpy(h, info, sizeof(h), cudaMemcpyDeviceToHost));
      if (!h[0]) return false;
      mhz = h[2] ? (double)h[1] / (double)h[2] * 1e3 : 0;
      std::vector<unsigned> all((size_t)passes * lines);
      CUDA_CHECK(cudaMemcpy(all.data(), lat, all.size() * 4, cudaMemcpyDeviceToHost));
      for (int p = 0; p < passes; ++p) out.emplace_back(all.begin() + (size_t)p * lines, all.begin() + (size_t)(p + 1) * lines);
      return true;
    };

    printf("nearfar lines=%u line_bytes=128 buffer_mib=%zu visit=(k*%u+%u) mod lines; cycles include the clock64 reads "
           "and one shared store\n",
           lines, buf_mib, PERM_A, PERM_B);
    for (int sm : sms) {
      std::vector<std::vector<unsigned>> res;
      double mhz_a = 0, mhz_b = 0, mhz_c = 0;
      write_chase_kernel<<<nsm * 4, 256>>>(buf, words, lines);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaDeviceSynchronize());
      if (!probe(sm, 3, res, mhz_a)) {
        printf("sm %d: not found (no SM has this %%smid); skipped\n", sm);
        continue;
      }
      read_lines_kernel<<<nsm, 256>>>(buf, lines, sink);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaDeviceSynchronize());
      probe(sm, 1, res, mhz_b);
      write_kernel<<<nsm * 4, 256>>>(scratch, scratch_bytes / 16, 0x5a5a5a5au);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaDeviceSynchronize());
      probe(sm, 1, res, mhz_c);
      found_sms.push_back(sm);
      for (size_t p = 0; p < res.size(); ++p) {
        const double mhz = p < 3 ? mhz_a : p == 3 ? mhz_b : mhz_c;
        const Split s = split(res[p]);
        if (p == 0) far0.push_back(s.far);
        const double ns_per_cyc = mhz > 0 ? 1e3 / mhz : 0;
        if (s.two)
          printf("sm %d pass %zu %s: sm_mhz %.0f near_cyc %.0f far_cyc %.0f frac_far %.3f outliers %d | near_ns %.1f far_ns "
                 "%.1f far_extra_ns %.1f\n",
                 sm, p, pass_names[p], mhz, s.near_cyc, s.far_cyc, s.frac_far, s.outliers, s.near_cyc * ns_per_cyc,
                 s.far_cyc * ns_per_cyc, (s.far_cyc - s.near_cyc) * ns_per_cyc);
        else
          printf("sm %d pass %zu %s: sm_mhz %.0f one plateau median_cyc %.0f frac_far 0 outliers %d | median_ns %.1f\n", sm,
                 p, pass_names[p], mhz, s.near_cyc, s.outliers, s.near_cyc * ns_per_cyc);
        printf("  hist sm %d pass %zu (bin_start:count, 8-cycle bins):%s\n", sm, p, histogram(res[p]).c_str());
        cols.push_back(res[p]);
        col_names.push_back("sm" + std::to_string(sm) + "_p" + std::to_string(p));
      }
    }
    // SM-to-half map: fraction of (non-outlier) lines on which two SMs agree near/far in pass 0.
    // ~1: same L2 half; ~0: opposite halves; ~0.5: no two plateaus (map unknown).
    if (found_sms.size() > 1) {
      printf("pass-0 near/far agreement between SMs (1 = same half, 0 = opposite halves):\n      ");
      for (int s : found_sms) printf(" sm%-4d", s);
      printf("\n");
      for (size_t i = 0; i < found_sms.size(); ++i) {
        printf("sm%-4d", found_sms[i]);
        for (size_t j = 0; j < found_sms.size(); ++j) {
          int agree = 0, n = 0;
          for (unsigned l = 0; l < lines; ++l) {
            if (far0[i][l] < 0 || far0[j][l] < 0) continue;
            ++n;
            agree += far0[i][l] == far0[j][l];
          }
          printf(" %6.3f", n ? (double)agree / n : 0.0);
        }
        printf("\n");
      }
    }
    if (!csv.empty()) {
      FILE* f = fopen(csv.c_str(), "w");
      if (!f) die("cannot write " + csv);
      fprintf(f, "line,offset_bytes");
      for (auto& n : col_names) fprintf(f, ",%s", n.c_str());
      fprintf(f, "\n");
      for (unsigned l = 0; l < lines; ++l) {
        fprintf(f, "%u,%u", l, l * 128);
        for (auto& c : cols) fprintf(f, ",%u", c[l]);
        fprintf(f, "\n");
      }
      fclose(f);
      printf("per-line latencies written to %s\n", csv.c_str());
    }
    CUDA_CHECK(cudaFree(buf));
    CUDA_CHECK(cudaFree(scratch));
    CUDA_CHECK(cudaFree(claimed));
    CUDA_CHECK(cudaFree(sink));
    CUDA_CHECK(cudaFree(lat));
    CUDA_CHECK(cudaFree(info));
  }

  if (do_dram) {
    const size_t bytes = dram_mib << 20, n = bytes / 16;
    uint4* d;
    unsigned* sink;
    CUDA_CHECK(cudaMalloc(&d, bytes));
    CUDA_CHECK(cudaMalloc(&sink, 4));
    CUDA_CHECK(cudaMemset(d, 0x11, bytes));
    CUDA_CHECK(cudaDeviceSynchronize());
    const int blocks = nsm * 8, threads = 256;
    auto read_launch = [&]() {
      dram_read_kernel<<<blocks, threads>>>(d, n, sink);
      CUDA_CHECK(cudaGetLastError());
    };
    auto write_launch = [&]() {
      write_kernel<<<blocks, threads>>>(d, n, 0x22222222u);
      CUDA_CHECK(cudaGetLastError());
    };
    auto copy_launch = [&]() {
      dram_copy_kernel<<<blocks, threads>>>(d + n / 2, d, n / 2);
      CUDA_CHECK(cudaGetLastError());
    };
    const double r = median_of(time_launches(read_launch, 3, iters));
    const double w = median_of(time_launches(write_launch, 3, iters));
    const double c = median_of(time_launches(copy_launch, 3, iters));
    printf("dram bytes=%zu blocks=%d threads=%d iters=%d\n", bytes, blocks, threads, iters);
    printf("dram_read median_us %.2f gbps %.1f\n", r, bytes / (r * 1e-6) / 1e9);
    printf("dram_write median_us %.2f gbps %.1f\n", w, bytes / (w * 1e-6) / 1e9);
    printf("dram_copy median_us %.2f gbps %.1f (read + write bytes, %zu each)\n", c, bytes / (c * 1e-6) / 1e9, bytes / 2);
    CUDA_CHECK(cudaFree(d));
    CUDA_CHECK(cudaFree(sink));
  }
  return 0;
}
