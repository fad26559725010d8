#pragma once
// Workload generators, registered by `workload.kind` (gemm now; ffn, attention, stream later).
// A generator validates its YAML node against the arch and emits tensors, kernels and their
// dispatch orders (using the experiment's `order:` policy).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/config_node.hpp"
#include "common/registry.hpp"
#include "models/arch.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

/// What a generator is given: its own node and the policy nodes that shape it, each passed
/// explicitly (a generator never reads the experiment's other keys).
struct WorkloadContext {
  const ConfigNode& workload;       ///< the `workload:` node
  std::optional<ConfigNode> order;  ///< the experiment's `order:` node (absent: row order)
  std::optional<ConfigNode> sync;   ///< its `sync:` node (absent: stream order)
  const ArchSpec& arch;
  std::string base_dir;             ///< folder of the experiment file, for relative paths
};

using WorkloadBuilder = std::function<Workload(const WorkloadContext&)>;

/// Reads `blocks_per_sm` (0: computed) and checks that a block of `resources` fits on an SM of
/// `arch` that many times, so an impossible figure is an error naming its key and file:
/// `blocks_per_sm` when it was given, else `fallback_key` (what made the block too big).
std::uint32_t parse_blocks_per_sm(const ConfigNode& n, const ArchSpec& arch, const BlockResources& resources,
                                  const std::string& kernel, const std::string& fallback_key);
/// One program per resident slot of a kernel of these resources: SMs x blocks per SM.
std::uint32_t resident_programs(const ArchSpec& arch, const BlockResources& resources, std::uint32_t blocks_per_sm,
                                const std::string& kernel);
/// `persistent: P | auto` (absent: 0, one block per tile): the number of programs of a
/// persistent kernel; `auto` is resident_programs.
std::uint32_t parse_persistent(const ConfigNode& n, const ArchSpec& arch, const BlockResources& resources,
                               std::uint32_t blocks_per_sm, const std::string& kernel);
/// A kernel's main loop as a workload names it: `mainloop: KIND` or `mainloop: {kind: KIND,
/// efficiency: E}` (E overrides the arch's figure for the kind). Absent: the arch's default kind.
/// The kind must be one the arch runs; errors name the key.
struct MainLoopChoice {
  std::optional<MainLoop> kind;
  double efficiency = 0;  ///< 0: the arch's
  bool serialized = false;  ///< `serialized: true`: each wgmma waited for before the next
  bool single_fragments = false;  ///< `fragments: single`: a warp loads no fragments ahead (mma_sync)
  /// `l2_prefetch: 64 | 128`: the loads' prefetch size (cp.async.L2::128B: CUTLASS 2, CuTe's SM80
  /// copies): a miss fetches that much around the sector; 0: the L2's own fill (l2.fill_bytes).
  std::uint32_t l2_prefetch = 0;
};
MainLoopChoice parse_mainloop(const ConfigNode& n, const ArchSpec& arch);
/// The experiment's `order:` node, or `{kind: row}` when it has none.
ConfigNode order_node_or_row(const WorkloadContext& ctx);
/// For workloads whose kernels simply run in stream order (no producer/consumer pair): a
/// `sync:` may only say `{kind: stream}`.
void require_stream_sync(const WorkloadContext& ctx);

/// Registers a generator by name, with a line saying what it builds; called from a static
/// initialiser in the generator's file. A name registered twice stops the program.
bool register_workload(const std::string& kind, std::string description, WorkloadBuilder builder);
/// Builds the workload named by `workload.kind`; every error names its YAML path.
Workload build_workload(const WorkloadContext& ctx);
std::vector<std::string> workload_kinds();
std::vector<NamedPolicy> workload_kinds_described();

class DeviceAllocator;
/// Adds a tensor of `batch` contiguous [rows x cols] slabs (`col_major`: columns contiguous)
/// of `elem_bits`-bit elements, placed by `alloc`; returns its index in w.tensors. `ld` is the
/// leading dimension in elements, 0 for dense (rows or columns back to back).
std::uint32_t add_matrix(Workload& w, DeviceAllocator& alloc, const std::string& name, std::uint32_t rows,
                         std::uint32_t cols, std::uint16_t elem_bits, bool col_major = false, std::uint32_t batch = 1,
                         std::uint64_t ld = 0);

/// Places tensors in device memory: each allocation 2 MiB aligned (as large cudaMalloc
/// allocations are), after the previous one, so tensors never alias.
class DeviceAllocator {
 public:
  Addr allocate(std::uint64_t bytes);

 private:
  Addr next_ = Addr{1} << 30;
};

}  // namespace tilesim
