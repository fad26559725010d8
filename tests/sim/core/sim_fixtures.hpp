#pragma once
// Small hand-made arches and workloads whose timings can be worked out on paper.
#include <string>
#include <vector>

#include "models/arch.hpp"
#include "workloads/kernel.hpp"

namespace tilesim::test {

/// One SM at 1 GHz doing 1000 fp16 FLOP per cycle (1 FLOP per ps); an 8-set, 4-way,
/// 128-byte-line L2 with 256 GB/s (0.5 ns per line) and 100 ns hit latency; DRAM at 128 GB/s
/// (1 ns per line) and 200 ns beyond the L2 latency. Blocks launch instantly.
inline ArchSpec toy_arch(std::uint32_t sms = 1) {
  const std::string yaml = R"(
name: toy
sm: {count: )" + std::to_string(sms) + R"(, clock_mhz: 1000, max_threads: 2048, max_blocks: 32, registers: 65536,
     shared_memory_bytes: 233472, max_shared_memory_per_block: 232448, block_launch_ns: 0}
compute: {flops_per_cycle: {fp16: 1000}, mainloop: mma_sync,
          mainloops: {mma_sync: {efficiency: 1.0, saturating_warps: 1, arbitration: fair}}}
l2: {bytes: 4096, partitions: 1, line_bytes: 128, sector_bytes: 32, ways: 4, hash: modulo, replacement: lru,
     hit_latency_ns: 100, bandwidth_gbps: 256}
dram: {bandwidth_gbps: 128, latency_ns: 200}
)";
  return parse_arch(ConfigNode(YAML::Load(yaml), "toy.yaml", ""));
}

/// A 1-row fp16 tensor of `cols` elements at a 2 MiB-aligned address.
inline Tensor row_tensor(const std::string& name, std::uint32_t cols, Addr base) {
  Tensor t;
  t.name = name;
  t.base = base;
  t.rows = 1;
  t.cols = cols;
  t.elem_bits = 16;
  t.ld = cols;
  t.batch_stride = cols * 2;
  return t;
}

/// Appends a block whose steps each load one 128-byte line (`cols` 64 fp16 from col0) and compute.
inline void add_block(Kernel& k, const std::vector<std::uint32_t>& load_cols, std::uint64_t flops) {
  Block b;
  b.first_step = static_cast<std::uint32_t>(k.steps.size());
  for (std::uint32_t c : load_cols) {
    Step s;
    s.first_access = static_cast<std::uint32_t>(k.accesses.size());
    k.accesses.push_back({0, 0, 0, c, 1, 64, AccessKind::load});
    s.num_accesses = 1;
    s.flops = flops;
    k.steps.push_back(s);
  }
  b.num_steps = static_cast<std::uint32_t>(k.steps.size()) - b.first_step;
  b.tile_n = static_cast<std::uint32_t>(k.blocks.size());
  k.blocks.push_back(b);
}
inline void add_block(Kernel& k, std::initializer_list<std::uint32_t> load_cols, std::uint64_t flops) {
  add_block(k, std::vector<std::uint32_t>(load_cols), flops);
}

inline Kernel toy_kernel(std::uint32_t stages) {
  Kernel k;
  k.name = "toy";
  k.stages = stages;
  k.resources = {128, 32, 0};
  k.blocks_per_sm = 1;
  return k;
}

/// A workload of kernel `k` over one row tensor of `tensor_cols` fp16 elements, its blocks
/// dispatched in index order.
inline Workload one_kernel(Kernel k, std::uint32_t tensor_cols = 1024, std::uint32_t semaphores = 0) {
  Workload w;
  w.num_semaphores = semaphores;
  w.name = "toy";
  w.tensors.push_back(row_tensor("T", tensor_cols, Addr{1} << 30));
  k.grid_n = k.num_blocks();
  for (std::uint32_t b = 0; b < k.num_blocks(); ++b) k.dispatch.push_back(b);
  w.kernels.push_back(std::move(k));
  validate_workload(w, "test");
  return w;
}

}  // namespace tilesim::test
