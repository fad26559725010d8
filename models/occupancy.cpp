#include "models/occupancy.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/types.hpp"

namespace tilesim {

Occupancy compute_occupancy(const ArchSpec& arch, const BlockResources& r, std::uint32_t requested,
                            const std::string& origin) {
  const SmSpec& sm = arch.sm;
  if (r.threads == 0 || r.threads > 1024)
    throw InputError(origin + ": threads per block must be in [1, 1024], got " + std::to_string(r.threads));
  if (r.regs_per_thread > sm.max_registers_per_thread)
    throw InputError(origin + ": " + std::to_string(r.regs_per_thread) + " registers per thread exceed " + arch.name +
                     "'s limit of " + std::to_string(sm.max_registers_per_thread));
  if (r.smem_bytes > sm.max_shared_memory_per_block)
    throw InputError(origin + ": shared memory per block " + std::to_string(r.smem_bytes) + " bytes exceeds " +
                     arch.name + "'s limit of " + std::to_string(sm.max_shared_memory_per_block) + " bytes");
  Occupancy o;
  const std::uint32_t warps = ceil_div(r.threads, 32u);
  o.by_threads = sm.max_threads / (warps * 32);
  // Registers are allocated per warp, rounded up to the allocation unit.
  const std::uint32_t regs_per_warp = round_up(r.regs_per_thread * 32u, sm.register_alloc_unit);
  o.by_registers = regs_per_warp ? sm.registers / (regs_per_warp * warps) : sm.max_blocks;
  const std::uint64_t smem = r.smem_bytes + sm.reserved_shared_memory_per_block;
  o.by_shared_memory = smem ? static_cast<std::uint32_t>(sm.shared_memory_bytes / smem) : sm.max_blocks;
  o.by_blocks = sm.max_blocks;
  o.blocks_per_sm = o.by_blocks;
  o.limit = "blocks";
  // Report the first binding limit in a fixed order so the name is deterministic on ties.
  const std::pair<std::uint32_t, const char*> limits[] = {
      {o.by_shared_memory, "shared_memory"}, {o.by_registers, "registers"}, {o.by_threads, "threads"}};
  for (const auto& [v, name] : limits) {
    if (v < o.blocks_per_sm) {
      o.blocks_per_sm = v;
      o.limit = name;
    }
  }
  if (o.blocks_per_sm == 0)
    throw InputError(origin + ": a block does not fit on one " + arch.name + " SM (limited by " + o.limit + ")");
  if (requested > 0) {
    if (requested > o.blocks_per_sm)
      throw InputError(origin + ": blocks_per_sm " + std::to_string(requested) + " exceeds the " +
                       std::to_string(o.blocks_per_sm) + " that " + o.limit + " allows on " + arch.name);
    o.blocks_per_sm = requested;
    o.limit = "set";
  }
  return o;
}

}  // namespace tilesim
