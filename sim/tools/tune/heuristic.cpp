#include "sim/tools/tune/heuristic.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <utility>
#include <vector>

#include "models/occupancy.hpp"
#include "models/power/power_clock.hpp"
#include "sim/core/step_timing.hpp"
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

namespace {

/// One kernel's part of the estimate, before kernels are combined.
struct KernelCost {
  double compute_ns = 0;        ///< whole waves (the tail wave as long as a full one)
  double compute_frac_ns = 0;   ///< the same work spread over fractional waves (no tail)
  double dram = 0, l2 = 0;
};

/// The tensors each kernel reads and writes.
struct KernelTensors {
  std::vector<bool> reads, writes;
};

KernelTensors tensors_of(const Kernel& k, std::size_t tensors) {
  KernelTensors t{std::vector<bool>(tensors), std::vector<bool>(tensors)};
  for_each_access(k, [&](const TileAccess& a) { (a.kind == AccessKind::load ? t.reads : t.writes)[a.tensor] = true; });
  return t;
}

/// One wave's compute time: blocks sharing an SM split its MMA rate, so a full wave takes
/// blocks_per_sm x one block's work at the SM's rate, unless a lone block's pipeline latency
/// is longer.
double wave_time_ns(const Kernel& k, const ArchSpec& arch, const Occupancy& occ, std::uint64_t blocks, double clock_hz) {
  const MainLoop kind = k.mainloop.value_or(arch.compute.default_mainloop);
  const double rate = arch.flops_per_cycle(k.compute_dtype) * clock_hz * kernel_efficiency(arch, k);
  const double block_flops = double(k.total_flops) / double(blocks);
  // The kind's fixed cost per k-step (what makes small tiles slower), as the simulator charges it.
  const MainLoopSpec& ml = arch.compute.mainloop(kind);
  const double overhead_ns = double(k.mma_steps()) / double(blocks) * ml.step_overhead_cycles / clock_hz * 1e9;
  const double block_ns = rate > 0 ? block_flops / rate * 1e9 + overhead_ns : 0;
  // A block's pipeline waits a round trip (L2 latency and the main loop's load-to-use time)
  // per `stages` k-steps (`stages - 1` when the loop copies only after its wait: mainloop
  // `prefetch`): co-resident blocks hide it from each other, a lone block does not.
  const double steps = double(k.mma_steps()) / double(blocks);
  const double round_trip_ns = ml.load_use_ns + arch.l2.hit_latency_ns;
  const std::uint32_t in_flight = ml.prefetch_after_wait && k.stages > 1 ? k.stages - 1 : std::max<std::uint32_t>(1, k.stages);
  const double latency_ns = steps > 0 ? (steps * round_trip_ns + block_ns) / in_flight : 0;
  return std::max(occ.blocks_per_sm * block_ns, latency_ns);
}

/// A GEMM kernel's DRAM and L2->SM bytes, from its shape and its first wave's window.
void gemm_traffic(const Kernel& k, const GemmShape& s, const ArchSpec& arch, std::uint64_t blocks,
                  std::uint64_t slots, std::uint64_t waves, KernelCost& cost) {
  const double in_b = s.in_elem_bits / 8.0, out_b = s.out_elem_bits / 8.0;
  const double gm = k.grid_m, gn = k.grid_n;
  const double split = std::max<double>(1, double(k.grid_z) / std::max<std::uint32_t>(1, s.batch));
  const double bm = std::ceil(double(s.m) / gm), bn = std::ceil(double(s.n) / gn);
  const double kslice = double(s.k) / split;
  // L2->SM: every block streams its A and B panels of its K slice.
  const double l2 = double(blocks) * (bm + bn) * kslice * in_b;
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
  cost.dram = reads + c * (2 * split - 1);
  cost.l2 = l2;
}

/// Not a GEMM: every tensor the kernel reads or writes, once, from DRAM and through L2.
void tensor_traffic(const Workload& w, const Kernel& k, KernelCost& cost) {
  double dram = 0;
  const KernelTensors t = tensors_of(k, w.tensors.size());
  for (std::size_t ti = 0; ti < w.tensors.size(); ++ti)
    if (t.reads[ti] || t.writes[ti]) dram += double(w.tensors[ti].footprint());
  cost.dram = dram;
  cost.l2 = dram;
}

/// Each kernel's cost on its own; the waves, occupancy and tail utilisation go into `e`.
std::vector<KernelCost> kernel_costs(const Workload& w, const ArchSpec& arch, Estimate& e) {
  std::vector<KernelCost> costs(w.kernels.size());
  const auto shapes = infer_gemm_shapes(w);
  const double clock_hz = arch.sm.clock_mhz * 1e6;
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
    // A tail wave takes as long as a full one; compute_frac_ns spreads the same work over
    // fractional waves, for a kernel whose tail the next kernel's blocks fill.
    const double wave_ns = wave_time_ns(k, arch, occ, blocks, clock_hz);
    costs[ki].compute_ns = double(waves) * wave_ns;
    costs[ki].compute_frac_ns = double(blocks) / double(slots) * wave_ns;
    if (ki < shapes.size() && shapes[ki]) gemm_traffic(k, *shapes[ki], arch, blocks, slots, waves, costs[ki]);
    else tensor_traffic(w, k, costs[ki]);
  }
  return costs;
}

/// Adds the kernels' costs to `e` group by group.
///
/// A workload on several streams (a chain under rowsync, tilesync or CuSync: the consumer,
/// and its launch-wait kernel, on a second stream) runs its kernels concurrently: one group.
/// A group is limited by its summed compute, DRAM or L2 time, not by the sum of each kernel's
/// limit, because one kernel's memory phase overlaps another's MMAs; only its last kernel's
/// tail wave is lost (earlier tails are filled by the next kernel's blocks); and a tensor a
/// kernel of the group wrote is read back from L2, row by row soon after it was produced, not
/// from DRAM. On one stream (plain stream order) each kernel is its own group, so a single
/// kernel is scored as before.
void add_kernel_groups(const Workload& w, const std::vector<KernelCost>& costs, const ArchSpec& arch, Estimate& e) {
  const double dram_bps = arch.dram.bandwidth_gbps * 1e9;
  // Every tile sector passes its half's lookups and, where the arch has one, its crossbar.
  const double half_gbps = arch.l2.crossbar_bandwidth_gbps > 0
                               ? std::min(arch.l2.bandwidth_gbps, arch.l2.crossbar_bandwidth_gbps)
                               : arch.l2.bandwidth_gbps;
  const double l2_bps = half_gbps * 1e9 * std::max<std::uint32_t>(1, arch.l2.partitions);
  const auto time_of = [&](double dram, double l2) {
    return std::pair{dram_bps > 0 ? dram / dram_bps * 1e9 : 0, l2_bps > 0 ? l2 / l2_bps * 1e9 : 0};
  };
  bool streams = false;
  for (const Kernel& k : w.kernels) streams = streams || k.stream != w.kernels.front().stream;
  for (std::size_t first = 0; first < w.kernels.size();) {
    const std::size_t end = streams ? w.kernels.size() : first + 1;
    std::vector<bool> written(w.tensors.size());
    double compute = 0, dram = 0, l2 = 0;
    for (std::size_t ki = first; ki < end; ++ki) {
      double reads_back = 0;
      if (end - first > 1) {  // a kernel alone reads nothing back (its accesses need no scan)
        const KernelTensors t = tensors_of(w.kernels[ki], w.tensors.size());
        for (std::size_t ti = 0; ti < w.tensors.size(); ++ti) {
          if (t.reads[ti] && written[ti]) reads_back += double(w.tensors[ti].footprint());
          if (t.writes[ti]) written[ti] = true;
        }
      }
      const KernelCost& c = costs[ki];
      compute += ki + 1 == end ? c.compute_ns : c.compute_frac_ns;
      dram += std::max(0.0, c.dram - reads_back);
      l2 += c.l2;
    }
    const auto [dram_ns, l2_ns] = time_of(dram, l2);
    e.compute_ns += compute;
    e.dram_bytes += dram;
    e.dram_ns += dram_ns;
    e.l2_bytes += l2;
    e.l2_ns += l2_ns;
    e.time_ns += std::max({compute, dram_ns, l2_ns});
    first = end;
  }
}

Estimate estimate_at_clock(const Workload& w, const ArchSpec& arch) {
  Estimate e;
  const std::vector<KernelCost> costs = kernel_costs(w, arch, e);
  add_kernel_groups(w, costs, arch, e);
  return e;
}

}  // namespace

Estimate estimate(const Workload& w, const ArchSpec& arch) {
  if (!arch.power.enabled()) return estimate_at_clock(w, arch);
  // Under a power cap the estimate takes the clock its own rates would draw the cap at, as
  // simulate() does with simulated rates (models/power/power_clock.hpp): each estimate is
  // cheap, so the same search runs on estimates.
  double flops = 0;
  for (const Kernel& k : w.kernels) flops += double(k.total_flops);
  return run_at_capped_clock(
             arch, [&](const ArchSpec& at) { return estimate_at_clock(w, at); },
             [&](const Estimate& e, const ArchSpec& at) {
               // the tiles' L2 traffic; an estimate that takes no time draws nothing
               return power_load(at.sm.clock_mhz, e.time_ns * 1e-9, flops, e.l2_bytes, e.dram_bytes);
             })
      .result;
}

}  // namespace tilesim::tune
