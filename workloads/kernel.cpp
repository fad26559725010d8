#include "workloads/kernel.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "common/error.hpp"

namespace tilesim {

namespace {
[[noreturn]] void bad(const std::string& origin, const std::string& what) { throw InputError(origin + ": " + what); }
}  // namespace

namespace {

// Memory the kernel reports as available to a new allocation (Linux /proc/meminfo
// MemAvailable); 0 when it cannot be read, which disables the check.
std::uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

void check_workload_memory(const std::string& what, std::uint64_t blocks, std::uint64_t steps, std::uint64_t accesses,
                           const std::string& advice, const std::string& key, bool generated) {
  // A lazy kernel (generated programs) holds only its blocks and dispatch order.
  const double need = 32.0 * blocks + (generated ? 0.0 : 32.0 * static_cast<double>(steps) + 32.0 * static_cast<double>(accesses));
  const std::uint64_t avail = available_memory_bytes();
  if (avail == 0 || need <= 0.8 * static_cast<double>(avail)) return;
  const std::string size = steps ? std::to_string(blocks) + " blocks and " + std::to_string(steps) + " k-steps" +
                                       (generated ? " (programs generated as they run)" : "")
                                 : std::to_string(blocks) + " tiles";
  throw InputError(key + ": " + what + " has " + size + ", about " + gib(need) + " of arrays, more than the " +
                   gib(0.8 * static_cast<double>(avail)) + " this machine can spare now (80% of MemAvailable); " +
                   advice);
}

std::uint32_t semaphores_used(const Workload& w) {
  std::uint32_t used = 0;
  for (const Kernel& k : w.kernels)
    for (const Step& s : k.steps) {
      if (s.wait_sem != kNoSem) used = std::max(used, s.wait_sem + 1);
      if (s.post_sem != kNoSem) used = std::max(used, s.post_sem + 1);
    }
  return used;
}

namespace {

// The structural checks of a kernel that holds its programs: every block's steps, every step's
// accesses and semaphores, every access's rectangle inside its tensor.
void validate_programs(const Workload& w, const Kernel& K, const std::string& origin, const std::string& kn) {
  for (std::size_t b = 0; b < K.blocks.size(); ++b) {
    const Block& B = K.blocks[b];
    if (static_cast<std::uint64_t>(B.first_step) + B.num_steps > K.steps.size())
      bad(origin, kn + ": block " + std::to_string(b) + " steps out of range");
  }
  for (std::size_t s = 0; s < K.steps.size(); ++s) {
    const Step& S = K.steps[s];
    if (static_cast<std::uint64_t>(S.first_access) + S.num_accesses > K.accesses.size())
      bad(origin, kn + ": step " + std::to_string(s) + " accesses out of range");
    if ((S.wait_sem != kNoSem && S.wait_sem >= w.num_semaphores) ||
        (S.post_sem != kNoSem && S.post_sem >= w.num_semaphores))
      bad(origin, kn + ": step " + std::to_string(s) + " names a semaphore out of range");
  }
  for (std::size_t a = 0; a < K.accesses.size(); ++a) {
    const TileAccess& A = K.accesses[a];
    // Messages are built only on failure: this loop runs over a million accesses.
    if (A.tensor >= w.tensors.size()) bad(origin, kn + ": access " + std::to_string(a) + ": tensor index out of range");
    const Tensor& x = w.tensors[A.tensor];
    if (A.batch >= x.batch || A.rows == 0 || A.cols == 0 ||
        static_cast<std::uint64_t>(A.row0) + A.rows > x.rows ||
        static_cast<std::uint64_t>(A.col0) + A.cols > x.cols)
      bad(origin, kn + ": access " + std::to_string(a) + ": rectangle outside tensor " + x.name);
  }
}

}  // namespace

void validate_workload(const Workload& w, const std::string& origin) {
  for (std::size_t t = 0; t < w.tensors.size(); ++t) {
    const Tensor& x = w.tensors[t];
    const std::string name = "tensor " + std::to_string(t) + " (" + x.name + ")";
    if (x.rows == 0 || x.cols == 0 || x.batch == 0) bad(origin, name + ": zero extent");
    if (x.elem_bits == 0 || x.elem_bits > 64) bad(origin, name + ": element size must be 1..64 bits");
    if (x.ld < (x.col_major ? x.rows : x.cols)) bad(origin, name + ": leading dimension smaller than the tensor");
    // Batches are whole slabs apart, or side by side within each row (a view of heads). In
    // 128 bits: a corrupt trace's strides would wrap 64.
    using Wide = unsigned __int128;
    if (x.interleaved() && (x.col_major || Wide{x.batch_stride} * 8 < Wide{x.cols} * x.elem_bits ||
                            Wide{x.batch_stride} * (x.batch - 1) * 8 + Wide{x.cols} * x.elem_bits >
                                Wide{x.ld} * x.elem_bits))
      bad(origin, name + ": batches overlap");
    // The L2 model keys lines by a 32-bit line index: device addresses stay below 512 GiB.
    // (Compared without adding, which wraps for a base near 2^64.)
    constexpr Addr kSpace = Addr{1} << 39;
    if (x.base > kSpace || x.footprint() > kSpace - x.base)
      bad(origin, name + ": extends past the 512 GiB simulated address space");
  }
  for (std::size_t k = 0; k < w.kernels.size(); ++k) {
    const Kernel& K = w.kernels[k];
    const std::string kn = "kernel " + std::to_string(k) + " (" + K.name + ")";
    if (K.blocks.empty()) bad(origin, kn + ": no blocks");
    if (K.stages == 0) bad(origin, kn + ": stages must be at least 1");
    if (static_cast<std::uint64_t>(K.grid_m) * K.grid_n * K.grid_z != K.blocks.size())
      bad(origin, kn + ": grid " + std::to_string(K.grid_m) + "x" + std::to_string(K.grid_n) + "x" +
                      std::to_string(K.grid_z) + " does not match " + std::to_string(K.blocks.size()) + " blocks");
    // A lazy kernel's programs are generated (workloads/gemm.cpp), not read: only its grid and
    // dispatch are checked here.
    if (!K.lazy()) validate_programs(w, K, origin, kn);
    std::vector<bool> seen(K.blocks.size(), false);
    std::size_t count = 0;
    for (std::uint32_t b : K.dispatch) {
      if (b == kNoBlock) continue;
      if (b >= K.blocks.size() || seen[b]) bad(origin, kn + ": dispatch order is not a permutation of the blocks");
      seen[b] = true;
      ++count;
    }
    if (count != K.blocks.size()) bad(origin, kn + ": dispatch order misses some blocks");
  }
}

Tensor column_view(const Tensor& parent, const std::string& name, std::uint32_t col0, std::uint32_t cols,
                   std::uint32_t heads) {
  Tensor v = parent;
  v.name = name;
  v.cols = cols;
  v.batch = heads;
  v.base = parent.base + std::uint64_t{col0} * parent.elem_bits / 8;
  v.batch_stride = std::uint64_t{cols} * parent.elem_bits / 8;
  return v;
}

namespace {

// One past the last byte of a tensor's elements (footprint() counts a strided tensor's last row
// whole, which would reach past the parent of a view of its first columns).
Addr end_of(const Tensor& t) {
  const std::uint64_t lines = t.col_major ? t.cols : t.rows, line = t.col_major ? t.rows : t.cols;
  return t.base + t.batch_stride * (t.batch - 1) + (lines - 1) * (t.ld * t.elem_bits / 8) + (line * t.elem_bits + 7) / 8;
}

}  // namespace

std::vector<std::uint32_t> storage_roots(const std::vector<Tensor>& tensors) {
  const auto n = static_cast<std::uint32_t>(tensors.size());
  std::vector<std::uint32_t> root(n);
  for (std::uint32_t t = 0; t < n; ++t) {
    root[t] = t;
    // Only a tensor that cannot be a whole allocation is a view: its rows are narrower than
    // their pitch, or its batches interleave. (Hand-built workloads put dense tensors at one
    // address; those stay apart.)
    const Tensor& x = tensors[t];
    if (!x.interleaved() && x.ld <= (x.col_major ? x.rows : x.cols)) continue;
    const Addr lo = x.base, hi = end_of(x);
    for (std::uint32_t u = 0; u < n; ++u) {
      const Tensor& c = tensors[root[t]];
      const Addr ulo = tensors[u].base, uhi = end_of(tensors[u]);
      if (u == root[t] || ulo > lo || uhi < hi) continue;
      const std::uint64_t size = uhi - ulo, best = end_of(c) - c.base;
      if (size > best || (size == best && u < root[t])) root[t] = u;
    }
  }
  return root;
}

}  // namespace tilesim
