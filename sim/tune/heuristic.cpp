#include "sim/tune/heuristic.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "models/occupancy.hpp"
#include "sim/report/bounds.hpp"

namespace tilesim::tune {

Window dispatch_window(const Kernel& k, std::uint64_t slots) {
  // The first `slots` dispatched blocks of z-slice 0 are the first wave; the distinct tile
  // rows and columns they touch are the A and B panels that wave shares through L2.
  std::unordered_set<std::uint32_t> rows, cols;
  std::uint64_t seen = 0;
  for (std::uint32_t b : k.dispatch) {
    if (seen >= slots) break;
    if (b == kNoBlock || b >= k.blocks.size()) continue;
    rows.insert(k.blocks[b].tile_m);
    cols.insert(k.blocks[b].tile_n);
    ++seen;
  }
  return {std::max<std::uint64_t>(1, rows.size()), std::max<std::uint64_t>(1, cols.size())};
}

Estimate estimate(const Workload& w, const ArchSpec& arch) {
  Estimate e;
  const auto shapes = infer_gemm_shapes(w);
  const double clock_hz = arch.sm.clock_mhz * 1e6;
  const double dram_bps = arch.dram.bandwidth_gbps * 1e9;
  const double l2_bps = arch.l2.bandwidth_gbps * 1e9 * std::max<std::uint32_t>(1, arch.l2.partitions);
  std::uint64_t most_waves = 0;
  for (std::size_t ki = 0; ki < w.kernels.size(); ++ki) {
    const Kernel& k = w.kernels[ki];
    const std::uint64_t blocks = k.num_blocks();
    if (blocks == 0) continue;
    const Occupancy occ = compute_occupancy(arch, k.resources, k.blocks_per_sm, w.name);
    e.blocks_per_sm = occ.blocks_per_sm;
    const std::uint64_t slots = std::uint64_t(occ.blocks_per_sm) * arch.sm.count;
    const std::uint64_t waves = (blocks + slots - 1) / slots;
    e.waves += waves;
    if (waves > most_waves) {
      most_waves = waves;
      e.last_wave_utilization = double(blocks - (waves - 1) * slots) / double(slots);
    }
    // Compute: blocks sharing an SM split its MMA rate, so a full wave takes
    // blocks_per_sm x one block's work at the SM's rate; a tail wave takes as long as a full one.
    const double rate = arch.flops_per_cycle(k.compute_dtype) * clock_hz *
                        (arch.compute.mma_efficiency > 0 ? arch.compute.mma_efficiency : 1.0);
    const double block_flops = double(k.total_flops) / double(blocks);
    const double compute_ns = rate > 0 ? double(waves) * occ.blocks_per_sm * block_flops / rate * 1e9 : 0;

    double dram = 0, l2 = 0;
    if (ki < shapes.size() && shapes[ki]) {
      const GemmShape& s = *shapes[ki];
      const double in_b = s.in_elem_bits / 8.0, out_b = s.out_elem_bits / 8.0;
      const double gm = k.grid_m, gn = k.grid_n;
      const double split = std::max<double>(1, double(k.grid_z) / std::max<std::uint32_t>(1, s.batch));
      const double bm = std::ceil(double(s.m) / gm), bn = std::ceil(double(s.n) / gn);
      const double kslice = double(s.k) / split;
      // L2->SM: every block streams its A and B panels of its K slice.
      l2 = double(blocks) * (bm + bn) * kslice * in_b;
      // DRAM: each wave reads the panels its window touches once (concurrent blocks share
      // them in L2); panels are not assumed to survive between waves unless all of A and B
      // fit in half of L2, in which case they are read once.
      const Window win = dispatch_window(k, slots);
      const double compulsory = double(s.batch) * (double(s.m) + double(s.n)) * double(s.k) * in_b;
      double reads = double(waves) * (double(win.rows) * bm + double(win.cols) * bn) * kslice * in_b;
      if (compulsory <= 0.5 * double(arch.l2.bytes)) reads = compulsory;
      reads = std::clamp(reads, compulsory, std::max(compulsory, l2));
      // C: written once; split-K slices beyond the first also read and write partial sums.
      const double c = double(s.batch) * double(s.m) * double(s.n) * out_b;
      dram = reads + c * (2 * split - 1);
    } else {
      // Not a GEMM: every tensor the kernel names, once.
      for (const Tensor& t : w.tensors) dram += double(t.footprint());
      l2 = dram;
    }
    e.compute_ns += compute_ns;
    e.dram_bytes += dram;
    const double dram_ns = dram_bps > 0 ? dram / dram_bps * 1e9 : 0;
    const double l2_ns = l2_bps > 0 ? l2 / l2_bps * 1e9 : 0;
    e.dram_ns += dram_ns;
    e.l2_ns += l2_ns;
    e.time_ns += std::max({compute_ns, dram_ns, l2_ns});
  }
  return e;
}

}  // namespace tilesim::tune
