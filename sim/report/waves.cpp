#include "sim/report/waves.hpp"

#include <algorithm>
#include <cmath>

namespace tilesim {

namespace {

Time overlap(Time a0, Time a1, Time b0, Time b1) { return std::max<Time>(0, std::min(a1, b1) - std::max(a0, b0)); }

/// Fills `kw.waves`, utilization and tail_lost for one kernel's records (any order).
void fill_waves(KernelWaves& kw, std::vector<const BlockRecord*>& recs, std::uint64_t capacity) {
  kw.capacity = capacity;
  if (recs.empty() || capacity == 0) return;
  std::sort(recs.begin(), recs.end(), [](const BlockRecord* a, const BlockRecord* b) { return a->position < b->position; });
  for (const BlockRecord* b : recs) {
    const auto index = static_cast<std::uint32_t>(b->position / capacity);
    if (kw.waves.empty() || kw.waves.back().index != index) kw.waves.push_back({index, b->start, b->end, 0});
    WaveInfo& w = kw.waves.back();
    w.start = std::min(w.start, b->start);
    w.end = std::max(w.end, b->end);
    ++w.blocks;
  }
  const WaveInfo& last = kw.waves.back();
  kw.last_wave_utilization = static_cast<double>(last.blocks) / static_cast<double>(capacity);
  const double idle_share = 1.0 - std::min(1.0, kw.last_wave_utilization);
  kw.tail_lost = static_cast<Time>(std::llround(static_cast<double>(last.end - last.start) * idle_share));
}

}  // namespace

LaunchWaves launch_waves(const KernelStats& k, std::uint32_t num_sms) {
  const std::uint64_t wave = static_cast<std::uint64_t>(k.blocks_per_sm) * num_sms;
  if (wave == 0) return {};
  LaunchWaves w;
  w.waves = static_cast<std::uint32_t>((k.launched_blocks + wave - 1) / wave);
  if (w.waves)
    w.last_wave_utilization = static_cast<double>(k.launched_blocks - (w.waves - 1) * wave) / static_cast<double>(wave);
  return w;
}

double kernel_tflops(const KernelStats& k) {
  const Time d = k.duration();
  return d > 0 ? static_cast<double>(k.flops) / (static_cast<double>(d) * 1e-12) / 1e12 : 0.0;
}

const char* kernel_bound(const KernelStats& k) {
  return k.memory_bound_time > k.compute_bound_time ? "memory" : "compute";
}

std::vector<KernelWaves> compute_waves(const SimResult& r) {
  const std::size_t nk = r.kernels.size();
  std::vector<KernelWaves> out(nk);
  std::vector<std::vector<const BlockRecord*>> by_kernel(nk);
  for (const BlockRecord& b : r.blocks)
    if (b.kernel < nk) by_kernel[b.kernel].push_back(&b);
  for (std::size_t k = 0; k < nk; ++k)
    fill_waves(out[k], by_kernel[k], static_cast<std::uint64_t>(r.kernels[k].blocks_per_sm) * r.num_sms);

  // Tail overlap. A block holds 1/blocks_per_sm of its SM (the share of the resource that binds
  // occupancy), so SM-time is comparable between kernels of different occupancy. Inside the
  // last wave's window, idle = num_sms x window - this kernel's block time (all its waves: the
  // previous wave's stragglers still hold SMs early in the window), and filled = the block time
  // of every other kernel in the window, capped at idle.
  for (std::size_t k = 0; k < nk; ++k) {
    KernelWaves& kw = out[k];
    if (kw.waves.empty()) continue;
    const Time w0 = kw.waves.back().start, w1 = kw.waves.back().end;
    if (w1 <= w0) continue;
    double own = 0, other = 0;
    for (const BlockRecord& b : r.blocks) {
      if (b.kernel >= nk || r.kernels[b.kernel].blocks_per_sm == 0) continue;
      const double share = static_cast<double>(overlap(b.start, b.end, w0, w1)) / r.kernels[b.kernel].blocks_per_sm;
      (b.kernel == k ? own : other) += share;
    }
    const double idle = std::max(0.0, static_cast<double>(r.num_sms) * static_cast<double>(w1 - w0) - own);
    kw.tail_idle_sm_ps = static_cast<Time>(std::llround(idle));
    kw.tail_filled_fraction = idle > 0 ? std::min(other, idle) / idle : 0.0;
  }
  return out;
}

}  // namespace tilesim
