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
      per_kernel_(static_cast<std::size_t>(arch.sm.count) * num_kernels, 0) {
  constexpr std::uint32_t kUnlisted = ~0u;
  // The round-robin's sequence: SM index order, or (gpc_fill) each GPC's SMs as listed, GPC
  // after GPC, then the SMs no GPC lists.
  position_.assign(arch.sm.count, kUnlisted);
  const auto append = [&](std::uint32_t sm) {
    if (position_[sm] != kUnlisted) return;
    position_[sm] = static_cast<std::uint32_t>(sequence_.size());
    sequence_.push_back(sm);
  };
  if (arch.sm.placement == SmSpec::Placement::gpc_fill)
    for (const auto& g : arch.sm.gpcs)
      for (std::uint32_t sm : g) append(sm);
  for (std::uint32_t sm = 0; sm < arch.sm.count; ++sm) append(sm);
  if (arch.sm.placement != SmSpec::Placement::gpc) return;
  gpc_of_.assign(arch.sm.count, kUnlisted);
  for (std::size_t g = 0; g < arch.sm.gpcs.size(); ++g) {
    std::vector<std::uint32_t> o;
    for (std::size_t i = 0; i < arch.sm.gpcs[g].size(); i += 2) o.push_back(arch.sm.gpcs[g][i]);
    for (std::size_t i = 1; i < arch.sm.gpcs[g].size(); i += 2) o.push_back(arch.sm.gpcs[g][i]);
    for (std::uint32_t sm : o) gpc_of_[sm] = static_cast<std::uint32_t>(g);
    order_.push_back(o);
  }
  // An SM no GPC lists is a group of its own: it still takes blocks.
  for (std::uint32_t sm = 0; sm < arch.sm.count; ++sm)
    if (gpc_of_[sm] == kUnlisted) {
      gpc_of_[sm] = static_cast<std::uint32_t>(order_.size());
      order_.push_back({sm});
    }
}

bool SmPool::fits(std::uint32_t sm, std::uint32_t kernel, const BlockCost& c) const {
  const Sm& s = sms_[sm];
  return per_kernel_[static_cast<std::size_t>(sm) * num_kernels_ + kernel] < c.per_sm_limit &&
         s.blocks < arch_.sm.max_blocks && s.threads + c.threads <= arch_.sm.max_threads &&
         s.registers + c.registers <= arch_.sm.registers &&
         s.shared_memory + c.shared_memory <= arch_.sm.shared_memory_bytes;
}

std::int64_t SmPool::find(std::uint32_t kernel, const BlockCost& c) const {
  if (arch_.sm.placement == SmSpec::Placement::gpc) return find_by_gpc(kernel, c);
  const auto n = static_cast<std::uint32_t>(sms_.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t sm = sequence_[(next_ + i) % n];
    if (fits(sm, kernel, c)) return sm;
  }
  return -1;
}

// The GPCs take turns from the one after the last placement: an empty SM while any GPC has
// one (in the GPC's order: the first SMs of its TPC pairs, then the second), then the GPC's
// least occupied SM. An idle H100 gave 112 blocks one SM each, 13-14 per 16- and 18-SM GPC,
// leaving the second SMs of their last TPCs free (calibration/measurements/h100/sync/handoff).
std::int64_t SmPool::find_by_gpc(std::uint32_t kernel, const BlockCost& c) const {
  const auto n = static_cast<std::uint32_t>(order_.size());
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t sm : order_[(next_gpc_ + i) % n])
      if (sms_[sm].blocks == 0 && fits(sm, kernel, c)) return sm;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::int64_t best = -1;
    for (std::uint32_t sm : order_[(next_gpc_ + i) % n])
      if (fits(sm, kernel, c) && (best < 0 || sms_[sm].blocks < sms_[static_cast<std::uint32_t>(best)].blocks)) best = sm;
    if (best >= 0) return best;
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
  next_ = (position_[sm] + 1) % static_cast<std::uint32_t>(sms_.size());
  if (!order_.empty()) next_gpc_ = (gpc_of_[sm] + 1) % static_cast<std::uint32_t>(order_.size());
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
