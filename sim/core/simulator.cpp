// The event engine's run loop, kernels, launches and block dispatch (a block's steps are in
// engine_steps.cpp).
#include "sim/core/simulator.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "models/occupancy.hpp"
#include "sim/core/engine.hpp"
#include "workloads/dependency_graph.hpp"

namespace tilesim {

namespace detail {

namespace {
Time ps_of(double ns) { return static_cast<Time>(std::llround(ns * kPsPerNs)); }
// do_bench's flush: a 256 MiB buffer written before each timed repetition (triton.testing).
constexpr std::uint64_t kFlushBytes = std::uint64_t{256} << 20;
constexpr Addr kFlushAlign = Addr{1} << 20;
}  // namespace

Engine::Engine(const Workload& w, const ArchSpec& arch, const SimOptions& opt, const std::vector<KernelPeriod>* periods)
    : w_(w), arch_(arch), opt_(opt), periods_(periods), l2_(arch.l2, opt.seed, arch.name), mem_(arch, opt.seed),
      pool_(arch, static_cast<std::uint32_t>(w.kernels.size())) {
  sector_bytes_ = arch.l2.sector_bytes;
  launch_ps_ = ps_of(arch.sm.block_launch_ns);
  kernel_launch_ps_ = ps_of(arch.sm.kernel_launch_ns);
  gap_ps_ = ps_of(opt.launch_gap_ns);
  poll_ps_ = std::max<Time>(1, ps_of(opt.poll_interval_ns));
  check_ps_ = ps_of(arch.sm.sync_check_ns);
  post_ps_ = ps_of(arch.sm.sync_post_ns);
  inflight_cap_ = arch.sm.max_inflight_bytes;
  coalesce_ps_ = ps_of(arch.l2.request_coalescing_ns);
  coalesce_max_ = arch.l2.request_coalescing_max;
  coalesce_queue_ = arch.l2.request_coalescing_queue;
  coalesce_queue_max_ps_ = ps_of(arch.l2.request_coalescing_queue_max_ns);
  // Each SM's coalescer: 1 + its GPC's first group of sm.gpcs (groups sm.gpcs_joined makes one
  // GPC share it; without joins each group is its own) under request_coalescing_per_gpc, else 0
  // (one for the GPU, and the SMs no group lists). A GPC's salt in request keys is hashed from it.
  coalescer_of_sm_.assign(arch.sm.count, 0);
  if (arch.l2.request_coalescing_per_gpc && !arch.sm.gpcs.empty()) {
    coalesce_salt_.assign(arch.sm.count, 0);
    for (std::size_t g = 0; g < arch.sm.gpcs.size(); ++g) {
      const std::uint32_t gpc = static_cast<std::uint32_t>(g < arch.sm.gpc_of_group.size() ? arch.sm.gpc_of_group[g] : g);
      for (std::uint32_t s : arch.sm.gpcs[g]) {
        coalescer_of_sm_[s] = 1 + gpc;
        coalesce_salt_[s] = splitmix64(0xC0A1E5CEull + gpc);
      }
    }
  }
  if (arch.l2.request_coalescing_lines > 0) {
    lrc_inv_lines_ = 1.0 / arch.l2.request_coalescing_lines;
    lrc_lines_.assign(arch.sm.gpcs.size() + 1, 0);  // one count per coalescer
  }
  noise_half_ps_ = arch.sm.step_noise_ns * kPsPerNs * std::sqrt(3.0);
  solo_noise_half_ps_ = arch.sm.solo_step_noise_ns < 0 ? noise_half_ps_ : arch.sm.solo_step_noise_ns * kPsPerNs * std::sqrt(3.0);
  shared_noise_half_ps_ = arch.sm.shared_step_noise_ns * kPsPerNs * std::sqrt(3.0);
  // Write-backs are attributed to tensors by address: regions sorted by base, one per tensor
  // that holds its own bytes (a view's write-backs are its parent's).
  roots_ = storage_roots(w.tensors);
  for (std::uint32_t t = 0; t < roots_.size(); ++t)
    if (roots_[t] == t) order_.push_back(t);
  std::sort(order_.begin(), order_.end(), [&](auto a, auto b) { return w.tensors[a].base < w.tensors[b].base; });
  std::vector<Addr> starts;
  for (auto i : order_) starts.push_back(w.tensors[i].base);
  // The flush stream of sim.l2_start lies past every tensor, as a region of its own (after the
  // tensors' regions, so their indices stay those of order_).
  for (const Tensor& t : w.tensors) flush_base_ = std::max(flush_base_, t.base + t.footprint());
  flush_base_ = (flush_base_ + kFlushAlign - 1) / kFlushAlign * kFlushAlign;
  if (opt.l2_start == SimOptions::L2Start::write_flushed &&
      (flush_base_ + kFlushBytes) >> std::countr_zero(arch.l2.line_bytes) > 0xffffffffull)
    throw InputError("sim.l2_start: write_flushed: the workload's tensors leave no room below the L2 model's " +
                     std::to_string((std::uint64_t{1} << 32) * arch.l2.line_bytes >> 30) +
                     " GiB of addresses for the 256 MiB flush stream");
  starts.push_back(flush_base_);
  l2_.set_regions(starts);
  wb_seen_.assign(order_.size() + 2, 0);
  sem_.assign(semaphores_used(w), 0);
  sem_waiters_.assign(sem_.size(), {});
  pipes_.assign(arch.sm.count, SmPipe{});
  sm_inflight_.assign(arch.sm.count, 0);
  sm_issue_queue_.assign(arch.sm.count, {});
  fair_port_ = arch.sm.l2_port_sharing == SmSpec::PortSharing::fair;
  if (fair_port_) port_jobs_.assign(arch.sm.count, {});
  for (const Kernel& k : w.kernels) max_stages_ = std::max(max_stages_, k.stages);
}

SimResult Engine::run() {
  prepare_kernels();
  if (opt_.cold_l2 == SimOptions::ColdL2::per_workload) start_l2();
  // The first kernel of every stream launches at time 0, in kernel order.
  std::vector<bool> stream_seen;
  for (std::uint32_t k = 0; k < runs_.size(); ++k) {
    const std::uint32_t s = runs_[k].k->stream;
    if (s >= stream_seen.size()) stream_seen.resize(s + 1, false);
    if (!stream_seen[s]) push(0, kKernelLaunch, 0, k);
    stream_seen[s] = true;
  }
  while (!q_.empty()) {
    const Event e = q_.top();
    q_.pop();
    switch (e.kind) {
      case kBlockStart: start_block(e.slot, e.t); break;
      case kLoadReady: load_ready(e.slot, e.arg, e.t); break;
      case kComputeDone: pipe_done(e.slot, e.arg, e.t); break;
      case kBlockDone: block_done(e.slot, e.t); break;
      case kSemPost: post(e.arg, e.t); break;
      case kKernelLaunch: launch(e.arg, e.t); break;
      case kKernelStart: start_kernel(e.arg, e.t); break;
    }
  }
  for (const KernelRun& kr : runs_)
    if (!kr.finished)
      throw DeadlockError("workload '" + w_.name + "': " + explain_deadlock(w_, runs_, slots_, sem_, arch_.sm.count));
  return collect();
}

SimResult Engine::collect() {
  SimResult res;
  res.arch = arch_.name;
  res.num_sms = arch_.sm.count;
  Time first = runs_.empty() ? 0 : runs_[0].stats.start, last = 0;
  for (KernelRun& kr : runs_) {
    first = std::min(first, kr.stats.start);
    last = std::max(last, kr.stats.end);
    res.total += kr.stats.mem;
    res.kernels.push_back(std::move(kr.stats));
  }
  res.duration = last - first;
  res.sampled_mode = opt_.mode == SimOptions::Mode::sampled;
  res.blocks = std::move(records_);
  if (opt_.observer) opt_.observer->on_end(last, l2_);
  return res;
}

void Engine::prepare_kernels() {
  runs_.resize(w_.kernels.size());
  for (std::uint32_t i = 0; i < runs_.size(); ++i) prepare_kernel(i);
}

void Engine::prepare_kernel(std::uint32_t i) {
  KernelRun& kr = runs_[i];
  const Kernel& k = w_.kernels[i];
  kr.k = &k;
  const Occupancy occ = compute_occupancy(arch_, k.resources, k.blocks_per_sm, "kernel " + k.name);
  if (!arch_.supports(k.compute_dtype))
    throw InputError("kernel " + k.name + ": dtype " + std::string(dtype_name(k.compute_dtype)) +
                     " is not supported by " + arch_.name);
  const MainLoop kind = k.mainloop.value_or(arch_.compute.default_mainloop);
  const MainLoopSpec& ml = arch_.compute.mainloop(kind);
  if (!ml.supported)
    throw InputError("kernel " + k.name + ": main loop " + std::string(mainloop_name(kind)) + " is not supported by " +
                     arch_.name + " (its kinds: " + arch_.compute.supported_mainloops() + ")");
  kr.cost = block_cost(arch_, k.resources, occ);
  kr.timing = StepTiming(arch_, k);
  kr.share = kernel_block_share(arch_, k);
  kr.arbitration = ml.arbitration;
  const double sm_port_mbps = arch_.sm.l2_port_mbps(arch_.sm.clock_mhz);
  kr.port_factor = ml.port_factor(sm_port_mbps);
  kr.load_use_ps = ps_of(ml.load_use_ns);
  kr.prefetch_after_wait = ml.prefetch_after_wait;
  kr.coresident_sd = ml.coresident_rate_sd;
  kr.waiting_holds = ml.waiting_holds;
  if (kr.coresident_sd > 0 && coresident_z_.empty()) coresident_z_ = coresident_deviations(arch_.sm.count, opt_.seed);
  // MB/s of the port: bytes per clock x MHz; picoseconds per byte = 1e6 / (MB/s).
  const double port_mbps = sm_port_mbps * kr.port_factor;
  kr.ps_per_copy_byte = ml.bulk_copies && port_mbps > 0 ? 1e6 / port_mbps : 0;
  const std::uint32_t chunk = l2_.fill_chunk_bytes(k.l2_prefetch_bytes);
  kr.fill_chunk = chunk > arch_.l2.sector_bytes ? chunk : 0;
  kr.multicast = !k.lazy() && std::any_of(k.accesses.begin(), k.accesses.end(),
                             [](const TileAccess& a) { return a.kind == AccessKind::multicast; });
  kr.cluster_placement = k.cluster_blocks > 1 && !arch_.sm.gpcs.empty();
  // A cluster runs on distinct SMs of one GPC: one larger than every GPC would never start.
  if (const std::uint32_t largest = pool_.largest_gpc(); kr.cluster_placement && k.cluster_blocks > largest)
    throw InputError("kernel " + k.name + ": a cluster of " + std::to_string(k.cluster_blocks) +
                     " blocks does not fit on one GPC of " + arch_.name + " (at most " + std::to_string(largest) +
                     " SMs, sm.gpcs); its blocks run on distinct SMs of one GPC");
  KernelStats& ks = kr.stats;
  ks.name = k.name;
  ks.stream = k.stream;
  ks.grid_m = k.grid_m;
  ks.grid_n = k.grid_n;
  ks.grid_z = k.grid_z;
  ks.blocks = k.num_blocks();
  ks.launched_blocks = static_cast<std::uint32_t>(k.dispatch.size());
  ks.blocks_per_sm = occ.blocks_per_sm;
  ks.occupancy_limit = occ.limit;
  ks.flops = k.total_flops;
  kr.dispatch_end = k.dispatch.size();
  if (opt_.dispatch_fraction < 1.0) {  // a prefix run: its leading positions, their share of the work
    kr.dispatch_end = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::ceil(opt_.dispatch_fraction * static_cast<double>(k.dispatch.size()))));
    kr.dispatch_end = std::min(kr.dispatch_end, k.dispatch.size());
    ks.flops = static_cast<std::uint64_t>(static_cast<double>(k.total_flops) * static_cast<double>(kr.dispatch_end) /
                                          static_cast<double>(std::max<std::size_t>(1, k.dispatch.size())));
  }
  if (opt_.mode == SimOptions::Mode::sampled) {
    SamplingRun& sr = kr.sampling;
    sr.window = static_cast<std::uint64_t>(occ.blocks_per_sm) * arch_.sm.count;
    if (opt_.observer) sr.found.why_not = "an observer (explore, an L2 stream export) watches every block";
    else sr.found = periods_ ? (*periods_)[i] : find_period(w_, i, sr.window);
    if (sr.found.period) sr.span = static_cast<std::uint32_t>((sr.window + sr.found.period - 1) / sr.found.period);
    ks.sampling.why_whole = sr.found.why_not;
    ks.sampling.period_blocks = sr.found.period;  // found, whether or not anything is skipped
    ks.sampling.by_rates = sr.found.statistical;
  }
  for (std::size_t t = 0; t < w_.tensors.size(); ++t) ks.tensors.push_back(TensorStats{w_.tensors[t].name, {}, roots_[t]});
  // The compute bound is the rate this kernel's main loop can reach, not the datasheet peak:
  // its efficiency, and its fixed cost per k-step spread over the SMs.
  const double rate = arch_.peak_flops(k.compute_dtype) * kr.timing.efficiency();
  const double overhead_s = static_cast<double>(k.mma_steps()) * ml.step_overhead_cycles / (arch_.sm.clock_mhz * 1e6) / arch_.sm.count;
  ks.compute_bound_time = static_cast<Time>((static_cast<double>(ks.flops) / rate + overhead_s) * 1e12);
}

void Engine::launch(std::uint32_t kernel, Time now) {
  KernelRun& kr = runs_[kernel];
  kr.launched = true;
  kr.launch_order = launches_++;
  kr.stats.start = kr.stats.end = now + offset_ps_;
  if (opt_.cold_l2 == SimOptions::ColdL2::per_kernel) {
    // Empty the L2 only when no other kernel is running (emptying it under a running kernel
    // would discard that kernel's data), and write dirty data back first, counted for the
    // kernel that finished last.
    bool other_running = false;
    for (std::uint32_t o = 0; o < runs_.size(); ++o)
      other_running = other_running || (o != kernel && runs_[o].launched && !runs_[o].finished);
    if (!other_running) {
      if (opt_.observer) opt_.observer->on_l2_reset(now, true);
      if (l2_.flush_dirty() && last_finished_ != kNone) attribute_writebacks(last_finished_, false);
      l2_.invalidate_all();
      inflight_.clear();
      start_l2();
    }
  }
  // The grid's setup (sm.kernel_launch_ns) delays its first block.
  if (kernel_launch_ps_ > 0) push(now + kernel_launch_ps_, kKernelStart, 0, kernel);
  else start_kernel(kernel, now);
}

void Engine::start_kernel(std::uint32_t kernel, Time now) {
  KernelRun& kr = runs_[kernel];
  kr.started = true;
  if (kr.k->dispatch.empty()) finish(kernel, now);
  else dispatch_ready(now);
}

// The L2's state at a start (sim.l2_start): empty as it is, or what do_bench's flush leaves.
// The flush stream's own write-backs are not any kernel's.
void Engine::start_l2() {
  if (opt_.l2_start != SimOptions::L2Start::write_flushed) return;
  l2_.write_flush(flush_base_, kFlushBytes, arch_.l2.write_flush_dirty_fraction);
  wb_seen_[order_.size()] = l2_.writeback_sectors_by_region()[order_.size()];
}

// Attributes write-backs since the last call to `kernel` and its tensors (by address region);
// the flush stream's dirty lines written back under the kernel apart (start_writeback_bytes),
// unless `under_kernel` is false (the write-back when the GPU goes idle delays nothing).
void Engine::attribute_writebacks(std::uint32_t kernel, bool under_kernel) {
  const auto& wb = l2_.writeback_sectors_by_region();
  KernelStats& ks = runs_[kernel].stats;
  for (std::size_t r = 0; r < order_.size(); ++r) {
    const std::uint64_t bytes = (wb[r] - wb_seen_[r]) * sector_bytes_;
    wb_seen_[r] = wb[r];
    ks.tensors[order_[r]].mem.dram_write_bytes += bytes;
    ks.mem.dram_write_bytes += bytes;
  }
  const std::size_t f = order_.size();
  if (under_kernel) ks.start_writeback_bytes += (wb[f] - wb_seen_[f]) * sector_bytes_;
  wb_seen_[f] = wb[f];
}

// Places blocks of launched kernels on SMs with room, by the dispatch rule.
void Engine::dispatch_ready(Time now) {
  std::vector<std::uint32_t>& order = dispatch_order_;
  order.clear();
  for (std::uint32_t k = 0; k < runs_.size(); ++k)
    if (runs_[k].started && !runs_[k].all_dispatched()) order.push_back(k);
  if (order.empty()) return;
  std::sort(order.begin(), order.end(),
            [&](std::uint32_t a, std::uint32_t b) { return runs_[a].launch_order < runs_[b].launch_order; });
  if (opt_.dispatch == SimOptions::Dispatch::oldest_kernel) {
    for (std::uint32_t k : order)
      while (!runs_[k].all_dispatched() && dispatch_next(k, now)) {
      }
    return;
  }
  // Round robin: one block per kernel in turn, until no kernel's next block fits.
  bool placed = true;
  while (placed) {
    placed = false;
    // The turn starts at the first waiting kernel launched after the one served last.
    std::size_t first = 0;
    if (rr_last_ != kNone)
      while (first < order.size() && runs_[order[first]].launch_order <= runs_[rr_last_].launch_order) ++first;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::uint32_t k = order[(first + i) % order.size()];
      if (runs_[k].all_dispatched() || !dispatch_next(k, now)) continue;
      rr_last_ = k;
      placed = true;
      break;
    }
  }
}

// Places the kernel's next block, or its next cluster whole on one GPC; false when it does not fit.
bool Engine::dispatch_next(std::uint32_t kernel, Time now) {
  KernelRun& kr = runs_[kernel];
  if (kr.cluster_placement) {
    const auto count = static_cast<std::uint32_t>(
        std::min<std::size_t>(kr.k->cluster_blocks, kr.dispatch_end - kr.next_dispatch));
    if (!pool_.find_cluster(kernel, kr.cost, count, cluster_sms_)) return false;
    for (std::uint32_t sm : cluster_sms_) place(kernel, sm, now);
    return true;
  }
  const std::int64_t sm = pool_.find(kernel, kr.cost);
  if (sm < 0) return false;
  place(kernel, static_cast<std::uint32_t>(sm), now);
  return true;
}

void Engine::place(std::uint32_t kernel, std::uint32_t sm, Time now) {
  KernelRun& kr = runs_[kernel];
  pool_.take(sm, kernel, kr.cost);
  ++kr.resident;
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
    programs_.emplace_back();
    ready_.resize(slots_.size() * max_stages_, 0);
    stage_bytes_.resize(slots_.size() * max_stages_, 0);
  }
  SlotState& s = slots_[slot];
  s = SlotState{};
  s.kernel = kernel;
  s.sm = sm;
  if (kr.sampling.found.period && !kr.sampling.done && kr.next_dispatch % kr.sampling.found.period == 0)
    at_period_boundary(kernel, now);
  s.position = static_cast<std::uint32_t>(kr.next_dispatch);
  s.block = kr.k->dispatch[kr.next_dispatch++];
  s.busy = true;
  s.age = ages_++;
  s.start = s.stores_done = now;
  if (opt_.dispatched_blocks) opt_.dispatched_blocks->fetch_add(1, std::memory_order_relaxed);
  if (s.block == kNoBlock) {  // early-exit block of a padded grid: occupies the SM only to launch
    push(now + launch_ps_, kBlockDone, slot, 0);
    return;
  }
  if (opt_.observer) opt_.observer->on_dispatch(kernel, s.block, s.position, sm, now, l2_);
  const ProgramView program = kr.k->program(s.block, programs_[slot]);
  s.steps = program.steps;
  s.acc = program.accesses;
  s.access_id_base = program.access_id_base;
  s.num_steps = program.num_steps;
  const Time t = now + launch_ps_;
  s.start = s.stores_done = t;
  if (s.num_steps == 0) {
    push(t, kBlockDone, slot, 0);
    return;
  }
  // Its first loads issue when it has launched, not before: a semaphore it finds unmet parks it
  // from then on (a wait measured from an earlier time would be negative).
  if (t == now) start_block(slot, t);
  else push(t, kBlockStart, slot, 0);
}

void Engine::block_done(std::uint32_t slot, Time now) {
  SlotState& s = slots_[slot];
  KernelRun& kr = runs_[s.kernel];
  s.busy = false;
  if (s.holding) set_hold(slot, false, now);
  pool_.release(s.sm, s.kernel, kr.cost);
  --kr.resident;
  kr.stats.end = std::max(kr.stats.end, now + offset_ps_);
  records_.push_back(BlockRecord{s.kernel, s.block, s.position, s.sm, s.start + offset_ps_, now + offset_ps_, s.wait});
  free_slots_.push_back(slot);
  if (kr.all_dispatched() && kr.resident == 0) finish(s.kernel, now);
  dispatch_ready(now);
}

void Engine::finish(std::uint32_t kernel, Time now) {
  KernelRun& kr = runs_[kernel];
  kr.finished = true;
  last_finished_ = kernel;
  kr.stats.end = std::max(kr.stats.end, now + offset_ps_);
  // Dirty data is written back when the GPU goes idle (a kernel ends and none runs), and is
  // counted as that kernel's DRAM writes; it does not delay anything.
  bool any_running = false;
  for (const KernelRun& o : runs_) any_running = any_running || (o.launched && !o.finished);
  if (opt_.writeback_at_end && !any_running) {
    if (opt_.observer) opt_.observer->on_l2_reset(now, false);
    attribute_writebacks(kernel);
    l2_.flush_dirty();
    attribute_writebacks(kernel, false);
  }
  KernelStats& ks = kr.stats;
  ks.memory_bound_time = static_cast<Time>(static_cast<double>(ks.mem.dram_read_bytes + ks.mem.dram_write_bytes) /
                                           (arch_.dram.bandwidth_gbps * 1e9) * 1e12);
  // The next kernel of the same stream launches after the gap.
  for (std::uint32_t n = kernel + 1; n < runs_.size(); ++n)
    if (runs_[n].k->stream == kr.k->stream) {
      push(now + gap_ps_, kKernelLaunch, 0, n);
      break;
    }
}

}  // namespace detail

namespace {
struct DispatchEntry {
  NamedPolicy named;
  SimOptions::Dispatch rule;
};
const std::vector<DispatchEntry>& dispatch_table() {
  static const std::vector<DispatchEntry> t{
      {{"oldest_kernel", "the kernel launched first fills free slots first (the hardware's observed rule)"},
       SimOptions::Dispatch::oldest_kernel},
      {{"round_robin", "kernels with blocks waiting place one block each in turn"}, SimOptions::Dispatch::round_robin}};
  return t;
}
}  // namespace

std::vector<NamedPolicy> dispatch_rules() {
  std::vector<NamedPolicy> out;
  for (const DispatchEntry& e : dispatch_table()) out.push_back(e.named);
  return out;
}
std::vector<std::string> dispatch_names() {
  std::vector<std::string> out;
  for (const DispatchEntry& e : dispatch_table()) out.push_back(e.named.name);
  return out;
}
SimOptions::Dispatch dispatch_rule(const std::string& name) {
  for (const DispatchEntry& e : dispatch_table())
    if (e.named.name == name) return e.rule;
  throw std::logic_error("dispatch_rule: unlisted name '" + name + "'");
}

void check_runnable(const Workload& w, const ArchSpec& arch) {
  // The dependencies must be acyclic, and a kernel whose blocks wait on each other must be
  // able to make progress with the slots it can have on this arch.
  check_dependencies_acyclic(w);
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k) {
    const Occupancy occ = compute_occupancy(arch, w.kernels[k].resources, w.kernels[k].blocks_per_sm,
                                            "kernel " + w.kernels[k].name);
    check_progress(w, k, static_cast<std::uint64_t>(occ.blocks_per_sm) * arch.sm.count);
  }
}

namespace detail {

SimResult run_engine(const Workload& w, const ArchSpec& arch, const SimOptions& opt,
                     const std::vector<KernelPeriod>* periods) {
  Engine e(w, arch, opt, periods);
  SimResult r = e.run();
  r.experiment = w.name;
  r.sm_clock_mhz = arch.sm.clock_mhz;
  return r;
}

}  // namespace detail

}  // namespace tilesim
