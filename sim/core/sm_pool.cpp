#include "sim/core/sm_pool.hpp"

#include <algorithm>

namespace tilesim {

BlockCost block_cost(const ArchSpec& arch, const BlockResources& r, const Occupancy& occ) {
  BlockCost c;
  const std::uint32_t warps = ceil_div(r.threads, 32u);
  c.threads = warps * 32;
  c.registers = round_up(r.regs_per_thread * 32u, arch.sm.register_alloc_unit) * warps;
  c.shared_memory = r.smem_bytes + arch.sm.reserved_shared_memory_per_block;
  c.per_sm_limit = occ.blocks_per_sm;
  return c;
}

SmPool::SmPool(const ArchSpec& arch, std::uint32_t num_kernels)
    : arch_(arch), num_kernels_(num_kernels), sms_(arch.sm.count),
      per_kernel_(static_cast<std::size_t>(arch.sm.count) * num_kernels, 0) {}

bool SmPool::fits(std::uint32_t sm, std::uint32_t kernel, const BlockCost& c) const {
  const Sm& s = sms_[sm];
  return per_kernel_[static_cast<std::size_t>(sm) * num_kernels_ + kernel] < c.per_sm_limit &&
         s.blocks < arch_.sm.max_blocks && s.threads + c.threads <= arch_.sm.max_threads &&
         s.registers + c.registers <= arch_.sm.registers &&
         s.shared_memory + c.shared_memory <= arch_.sm.shared_memory_bytes;
}

std::int64_t SmPool::find(std::uint32_t kernel, const BlockCost& c) const {
  const auto n = static_cast<std::uint32_t>(sms_.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t sm = (next_ + i) % n;
    if (fits(sm, kernel, c)) return sm;
  }
  return -1;
}

bool SmPool::find_cluster(std::uint32_t kernel, const BlockCost& c, std::uint32_t count,
                          std::vector<std::uint32_t>& out) {
  const auto& gpcs = arch_.sm.gpcs;
  const auto n = static_cast<std::uint32_t>(gpcs.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t g = (next_gpc_ + i) % n;
    out.clear();
    for (std::uint32_t sm : gpcs[g])
      if (fits(sm, kernel, c)) out.push_back(sm);
    if (out.size() < count) continue;
    // The least occupied SMs, in the GPC's order among equals: a breadth-first spread within it.
    std::stable_sort(out.begin(), out.end(), [&](std::uint32_t a, std::uint32_t b) { return sms_[a].blocks < sms_[b].blocks; });
    out.resize(count);
    next_gpc_ = (g + 1) % n;
    return true;
  }
  return false;
}

std::uint32_t SmPool::largest_gpc() const {
  std::size_t most = 0;
  for (const auto& g : arch_.sm.gpcs) most = std::max(most, g.size());
  return static_cast<std::uint32_t>(most);
}

void SmPool::take(std::uint32_t sm, std::uint32_t kernel, const BlockCost& c) {
  Sm& s = sms_[sm];
  s.threads += c.threads;
  s.registers += c.registers;
  s.shared_memory += c.shared_memory;
  ++s.blocks;
  ++per_kernel_[static_cast<std::size_t>(sm) * num_kernels_ + kernel];
  next_ = (sm + 1) % static_cast<std::uint32_t>(sms_.size());
}

void SmPool::release(std::uint32_t sm, std::uint32_t kernel, const BlockCost& c) {
  Sm& s = sms_[sm];
  s.threads -= c.threads;
  s.registers -= c.registers;
  s.shared_memory -= c.shared_memory;
  --s.blocks;
  --per_kernel_[static_cast<std::size_t>(sm) * num_kernels_ + kernel];
}

}  // namespace tilesim
