#include "sim/core/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include "common/error.hpp"
#include "sim/core/engine.hpp"
#include "sim/core/tile_rect.hpp"
#include "models/occupancy.hpp"
#include "workloads/dependency_graph.hpp"

namespace tilesim {

using namespace detail;

namespace {

class Engine {
 public:
  Engine(const Workload& w, const ArchSpec& arch, const SimOptions& opt)
      : w_(w), arch_(arch), opt_(opt), l2_(arch.l2, opt.seed, arch.name),
        dram_(arch.dram.bandwidth_gbps, arch.dram.latency_ns + arch.l2.hit_latency_ns),
        fabric_(arch.l2.fabric_bandwidth_gbps, arch.l2.hit_latency_ns + arch.l2.far_extra_latency_ns),
        pool_(arch, static_cast<std::uint32_t>(w.kernels.size())) {
    for (std::uint32_t p = 0; p < arch.l2.partitions; ++p)
      l2_bw_.emplace_back(arch.l2.bandwidth_gbps, arch.l2.hit_latency_ns);
    sector_bytes_ = arch.l2.sector_bytes;
    launch_ps_ = static_cast<Time>(std::llround(arch.sm.block_launch_ns * kPsPerNs));
    gap_ps_ = static_cast<Time>(std::llround(opt.launch_gap_ns * kPsPerNs));
    poll_ps_ = std::max<Time>(1, static_cast<Time>(std::llround(opt.poll_interval_ns * kPsPerNs)));
    sm_partition_.resize(arch.sm.count);
    for (std::uint32_t s = 0; s < arch.sm.count; ++s) {
      sm_partition_[s] = arch.l2.partitions == 1 ? 0 : arch.sm.sm_half[s];
    }
    // Write-backs are attributed to tensors by address: regions sorted by base.
    order_.resize(w.tensors.size());
    std::iota(order_.begin(), order_.end(), 0u);
    std::sort(order_.begin(), order_.end(), [&](auto a, auto b) { return w.tensors[a].base < w.tensors[b].base; });
    std::vector<Addr> starts;
    for (auto i : order_) starts.push_back(w.tensors[i].base);
    l2_.set_regions(starts);
    wb_seen_.assign(order_.size() + 1, 0);
    sem_.assign(semaphores_used(w), 0);
    sem_waiters_.assign(sem_.size(), {});
    sm_free_.assign(arch.sm.count, 0);
    for (const Kernel& k : w.kernels) max_stages_ = std::max(max_stages_, k.stages);
  }

  SimResult run() {
    SimResult res;
    res.arch = arch_.name;
    res.num_sms = arch_.sm.count;
    prepare_kernels();
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
        case kLoadReady: try_compute(e.slot, e.t); break;
        case kComputeDone: compute_done(e.slot, e.arg, e.t); break;
        case kBlockDone: block_done(e.slot, e.t); break;
        case kSemPost: post(e.arg, e.t); break;
        case kKernelLaunch: launch(e.arg, e.t); break;
      }
    }
    for (const KernelRun& kr : runs_)
      if (!kr.finished)
        throw DeadlockError("workload '" + w_.name + "': " +
                            explain_deadlock(w_, runs_, slots_, sem_, arch_.sm.count));
    Time first = runs_.empty() ? 0 : runs_[0].stats.start, last = 0;
    for (KernelRun& kr : runs_) {
      first = std::min(first, kr.stats.start);
      last = std::max(last, kr.stats.end);
      res.total += kr.stats.mem;
      res.kernels.push_back(std::move(kr.stats));
    }
    res.duration = last - first;
    res.blocks = std::move(records_);
    if (opt_.observer) opt_.observer->on_end(last, l2_);
    return res;
  }

 private:
  const Workload& w_;
  const ArchSpec& arch_;
  const SimOptions& opt_;
  L2Cache l2_;
  BandwidthServer dram_, fabric_;
  std::vector<BandwidthServer> l2_bw_;
  SmPool pool_;
  std::uint32_t sector_bytes_ = 32;
  Time launch_ps_ = 0, gap_ps_ = 0, poll_ps_ = 1;
  std::vector<std::uint32_t> sm_partition_;
  std::vector<std::uint32_t> order_;  // tensor index by base address
  std::vector<std::uint64_t> wb_seen_;  // write-backs per region already attributed

  std::vector<KernelRun> runs_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> q_;
  std::uint64_t seq_ = 0, launches_ = 0;
  std::vector<SlotState> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<Time> ready_;  // slots x max_stages: when each in-flight step's data arrives
  std::uint32_t max_stages_ = 1;
  std::vector<Time> sm_free_;  // each SM's tensor pipe
  std::vector<std::uint32_t> sem_;
  std::vector<std::vector<std::uint32_t>> sem_waiters_;
  std::vector<BlockRecord> records_;
  std::uint32_t rr_kernel_ = 0;  // round-robin dispatch: the kernel to offer the next block
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::uint32_t last_finished_ = kNone;  // write-backs flushed at a cold start are counted here
  // Fills in flight, per tile rectangle: a later access of the same rectangle that "hits" lines
  // whose DRAM fill has not arrived waits for it, as the L2 merges it into the pending miss.
  // Keyed by rectangle, because GEMM reuse is of whole, identical tiles (an A or B panel slice).
  InflightTable inflight_;

  void push(Time t, EventKind kind, std::uint32_t slot, std::uint32_t arg) { q_.push(Event{t, seq_++, kind, slot, arg}); }

  void prepare_kernels() {
    runs_.resize(w_.kernels.size());
    for (std::uint32_t i = 0; i < runs_.size(); ++i) {
      KernelRun& kr = runs_[i];
      const Kernel& k = w_.kernels[i];
      kr.k = &k;
      const Occupancy occ = compute_occupancy(arch_, k.resources, k.blocks_per_sm, "kernel " + k.name);
      if (!arch_.supports(k.compute_dtype))
        throw InputError("kernel " + k.name + ": dtype " + std::string(dtype_name(k.compute_dtype)) +
                         " is not supported by " + arch_.name);
      kr.cost = block_cost(arch_, k.resources, occ);
      kr.mma = MmaTiming(arch_, k.compute_dtype);
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
      const std::uint64_t wave = static_cast<std::uint64_t>(occ.blocks_per_sm) * arch_.sm.count;
      ks.waves = static_cast<std::uint32_t>(ceil_div<std::uint64_t>(ks.launched_blocks, wave));
      ks.last_wave_utilization =
          ks.waves ? static_cast<double>(ks.launched_blocks - (ks.waves - 1) * wave) / static_cast<double>(wave) : 0.0;
      ks.flops = k.total_flops;
      for (const auto& t : w_.tensors) ks.tensors.push_back(TensorStats{t.name, {}});
      const double peak = arch_.peak_flops(k.compute_dtype);
      ks.compute_bound_time = static_cast<Time>(static_cast<double>(ks.flops) / peak * 1e12);
    }
  }

  void launch(std::uint32_t kernel, Time now) {
    KernelRun& kr = runs_[kernel];
    kr.launched = true;
    kr.launch_order = launches_++;
    kr.stats.start = kr.stats.end = now;
    if (opt_.cold_l2 == SimOptions::ColdL2::per_kernel) {
      // Empty the L2 only when no other kernel is running (emptying it under a running kernel
      // would discard that kernel's data), and write dirty data back first, counted for the
      // kernel that finished last.
      bool other_running = false;
      for (std::uint32_t o = 0; o < runs_.size(); ++o)
        other_running = other_running || (o != kernel && runs_[o].launched && !runs_[o].finished);
      if (!other_running) {
        if (l2_.flush_dirty() && last_finished_ != kNone) attribute_writebacks(last_finished_);
        l2_.invalidate_all();
        inflight_.clear();
      }
    }
    if (kr.k->dispatch.empty()) finish(kernel, now);
    else dispatch_ready(now);
  }

  // Attributes write-backs since the last call to `kernel` and its tensors (by address region).
  void attribute_writebacks(std::uint32_t kernel) {
    const auto& wb = l2_.writeback_sectors_by_region();
    KernelStats& ks = runs_[kernel].stats;
    for (std::size_t r = 0; r < order_.size(); ++r) {
      const std::uint64_t bytes = (wb[r] - wb_seen_[r]) * sector_bytes_;
      wb_seen_[r] = wb[r];
      ks.tensors[order_[r]].mem.dram_write_bytes += bytes;
      ks.mem.dram_write_bytes += bytes;
    }
  }

  void count(KernelRun& kr, const TileAccess& a, const L2AccessResult& r, bool write) {
    MemCounters c;
    if (write) {
      c.write_sectors = r.sectors;
      c.write_hit_sectors = r.hit_sectors;
    } else {
      c.read_sectors = r.sectors;
      c.read_hit_sectors = r.hit_sectors;
    }
    c.near_copy_hit_sectors = r.near_copy_hit_sectors;
    c.fabric_sectors = r.fabric_sectors;
    c.dram_read_bytes = r.dram_read_sectors * sector_bytes_;
    kr.stats.mem += c;
    kr.stats.tensors[a.tensor].mem += c;
  }

  static std::uint64_t rect_key(const TileAccess& a) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::uint64_t v : {std::uint64_t{a.tensor}, std::uint64_t{a.batch}, std::uint64_t{a.row0},
                            std::uint64_t{a.col0}, std::uint64_t{a.rows}, std::uint64_t{a.cols}})
      h = (h ^ v) * 0x100000001b3ull;
    return h;
  }

  // Issues the accesses of one step of `kind` from an SM; returns when they complete.
  Time do_accesses(std::uint32_t kernel, std::uint32_t block, const Step& st, std::uint32_t sm, Time now, AccessKind kind) {
    KernelRun& kr = runs_[kernel];
    L2AccessResult sum;
    const std::uint32_t part = sm_partition_[sm];
    Time pending = now;  // latest in-flight fill that this step's hits depend on
    std::uint32_t missed[8];
    std::uint32_t n_missed = 0;
    for (std::uint32_t i = 0; i < st.num_accesses; ++i) {
      const TileAccess& a = kr.k->accesses[st.first_access + i];
      if (a.kind != kind) continue;
      const L2AccessResult r = l2_.access(to_rect(w_.tensors[a.tensor], a), part, kind == AccessKind::store);
      count(kr, a, r, kind == AccessKind::store);
      if (opt_.observer) opt_.observer->on_access(kernel, block, a, r);
      if (r.dram_write_sectors) attribute_writebacks(kernel);
      sum += r;
      if (kind == AccessKind::load) {
        if (r.hit_sectors) pending = std::max(pending, inflight_.find(rect_key(a), pending));
        if (r.dram_read_sectors && n_missed < 8) missed[n_missed++] = st.first_access + i;
      }
    }
    if (sum.sectors == 0) return now;
    Time done = pending;
    for (std::size_t p = 0; p < l2_bw_.size(); ++p)
      done = std::max(done, l2_bw_[p].serve(now, sum.partition_sectors[p] * sector_bytes_));
    if (sum.fabric_sectors) done = std::max(done, fabric_.serve(now, sum.fabric_sectors * sector_bytes_));
    const std::uint64_t dram_bytes = (sum.dram_read_sectors + sum.dram_write_sectors) * sector_bytes_;
    if (dram_bytes) done = std::max(done, dram_.serve(now, dram_bytes));
    for (std::uint32_t i = 0; i < n_missed; ++i) inflight_.raise(rect_key(kr.k->accesses[missed[i]]), done);
    return done;
  }

  // Places blocks of launched kernels on SMs with room, by the dispatch rule.
  void dispatch_ready(Time now) {
    std::vector<std::uint32_t> order;
    for (std::uint32_t k = 0; k < runs_.size(); ++k)
      if (runs_[k].launched && !runs_[k].all_dispatched()) order.push_back(k);
    if (order.empty()) return;
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return runs_[a].launch_order < runs_[b].launch_order; });
    if (opt_.dispatch == SimOptions::Dispatch::oldest_kernel) {
      for (std::uint32_t k : order)
        while (!runs_[k].all_dispatched()) {
          const std::int64_t sm = pool_.find(k, runs_[k].cost);
          if (sm < 0) break;
          place(k, static_cast<std::uint32_t>(sm), now);
        }
      return;
    }
    // Round robin: one block per kernel in turn, until no kernel's next block fits.
    bool placed = true;
    while (placed) {
      placed = false;
      for (std::size_t i = 0; i < order.size(); ++i) {
        const std::uint32_t k = order[(rr_kernel_ + i) % order.size()];
        if (runs_[k].all_dispatched()) continue;
        const std::int64_t sm = pool_.find(k, runs_[k].cost);
        if (sm < 0) continue;
        place(k, static_cast<std::uint32_t>(sm), now);
        rr_kernel_ = static_cast<std::uint32_t>((rr_kernel_ + i + 1) % order.size());
        placed = true;
        break;
      }
    }
  }

  // A factor in [1 - j, 1 + j] from a hash of (kernel, block): the same block gets the same
  // factor in every run, at any thread count and dispatch order.
  double block_time_scale(std::uint32_t kernel, std::uint32_t block) const {
    const double j = arch_.sm.block_time_jitter;
    if (j == 0) return 1.0;
    std::uint64_t h = (std::uint64_t{kernel} << 32 | block) + 0x9E3779B97F4A7C15ull;  // splitmix64
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
    return 1.0 + j * (2.0 * u - 1.0);
  }

  void place(std::uint32_t kernel, std::uint32_t sm, Time now) {
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
      ready_.resize(slots_.size() * max_stages_, 0);
    }
    SlotState& s = slots_[slot];
    s = SlotState{};
    s.kernel = kernel;
    s.sm = sm;
    s.position = static_cast<std::uint32_t>(kr.next_dispatch);
    s.block = kr.k->dispatch[kr.next_dispatch++];
    s.busy = true;
    s.start = s.stores_done = now;
    if (s.block == kNoBlock) {  // early-exit block of a padded grid: occupies the SM only to launch
      push(now + launch_ps_, kBlockDone, slot, 0);
      return;
    }
    if (opt_.observer) opt_.observer->on_dispatch(kernel, s.block, s.position, sm, now, l2_);
    s.time_scale = block_time_scale(kernel, s.block);
    s.first_step = kr.k->blocks[s.block].first_step;
    s.num_steps = kr.k->blocks[s.block].num_steps;
    const Time t = now + launch_ps_;
    s.start = s.stores_done = t;
    if (s.num_steps == 0) {
      push(t, kBlockDone, slot, 0);
      return;
    }
    issue_loads(slot, t);
  }

  void issue_loads(std::uint32_t slot, Time now) {
    SlotState& s = slots_[slot];
    const KernelRun& kr = runs_[s.kernel];
    const std::uint32_t stages = kr.k->stages;
    while (s.next_issue < s.num_steps && s.next_issue < s.computed + stages) {
      const Step& st = kr.k->steps[s.first_step + s.next_issue];
      if (st.wait_sem != kNoSem && sem_[st.wait_sem] < st.wait_value) {
        if (!s.queued) sem_waiters_[st.wait_sem].push_back(slot);
        s.queued = true;
        if (!s.waiting) s.wait_start = now;
        s.waiting = true;
        // A parked block still computes the steps it issued before; it stalls once they are done.
        if (s.stall_start < 0 && !s.computing && s.computed == s.next_issue) s.stall_start = now;
        return;
      }
      if (s.waiting) stop_waiting(s, now);
      const Time ready = do_accesses(s.kernel, s.block, st, s.sm, now, AccessKind::load);
      ready_[static_cast<std::size_t>(slot) * max_stages_ + s.next_issue % stages] = ready;
      push(ready, kLoadReady, slot, s.next_issue);
      ++s.next_issue;
    }
  }

  // A waiting block spins: it holds its SM's resources and reads its semaphore every poll
  // interval (counted separately from the tiles' traffic).
  void stop_waiting(SlotState& s, Time now) {
    const Time polled = now - s.wait_start;
    const Time stalled = s.stall_start >= 0 ? now - s.stall_start : 0;
    s.wait += stalled;
    s.waiting = false;
    s.stall_start = -1;
    KernelStats& ks = runs_[s.kernel].stats;
    ks.wait_ps += static_cast<std::uint64_t>(stalled);
    // It read the semaphore at least once, and every poll interval while parked.
    ks.poll_sectors += static_cast<std::uint64_t>(std::max<Time>(1, ceil_div<Time>(polled, poll_ps_)));
  }

  void try_compute(std::uint32_t slot, Time now) {
    SlotState& s = slots_[slot];
    const KernelRun& kr = runs_[s.kernel];
    const std::uint32_t i = s.computed;
    if (s.computing || i >= s.next_issue) return;
    if (ready_[static_cast<std::size_t>(slot) * max_stages_ + i % kr.k->stages] > now) return;
    const Step& st = kr.k->steps[s.first_step + i];
    const Time start = std::max(now, sm_free_[s.sm]);
    Time busy = kr.mma.duration(st.flops);
    if (s.time_scale != 1.0) busy = static_cast<Time>(std::llround(static_cast<double>(busy) * s.time_scale));
    const Time end = start + busy;
    sm_free_[s.sm] = end;
    s.computing = true;
    push(end, kComputeDone, slot, i);
  }

  void compute_done(std::uint32_t slot, std::uint32_t i, Time now) {
    SlotState& s = slots_[slot];
    s.computing = false;
    s.computed = i + 1;
    const Step& st = runs_[s.kernel].k->steps[s.first_step + i];
    const Time stored = do_accesses(s.kernel, s.block, st, s.sm, now, AccessKind::store);
    s.stores_done = std::max(s.stores_done, stored);
    if (st.post_sem != kNoSem) push(stored, kSemPost, slot, st.post_sem);
    issue_loads(slot, now);
    try_compute(slot, now);
    if (s.computed == s.num_steps) push(std::max(now, s.stores_done), kBlockDone, slot, 0);
  }

  void post(std::uint32_t sem, Time now) {
    ++sem_[sem];
    auto waiters = std::move(sem_waiters_[sem]);
    sem_waiters_[sem].clear();
    for (std::uint32_t slot : waiters) {
      slots_[slot].queued = false;
      issue_loads(slot, now);  // re-parks itself if its value is not reached yet
      try_compute(slot, now);
    }
  }

  void block_done(std::uint32_t slot, Time now) {
    SlotState& s = slots_[slot];
    KernelRun& kr = runs_[s.kernel];
    s.busy = false;
    pool_.release(s.sm, s.kernel, kr.cost);
    --kr.resident;
    kr.stats.end = std::max(kr.stats.end, now);
    records_.push_back(BlockRecord{s.kernel, s.block, s.position, s.sm, s.start, now, s.wait});
    free_slots_.push_back(slot);
    if (kr.all_dispatched() && kr.resident == 0) finish(s.kernel, now);
    dispatch_ready(now);
  }

  void finish(std::uint32_t kernel, Time now) {
    KernelRun& kr = runs_[kernel];
    kr.finished = true;
    last_finished_ = kernel;
    kr.stats.end = std::max(kr.stats.end, now);
    // Dirty data is written back when the GPU goes idle (a kernel ends and none runs), and is
    // counted as that kernel's DRAM writes; it does not delay anything.
    bool any_running = false;
    for (const KernelRun& o : runs_) any_running = any_running || (o.launched && !o.finished);
    if (opt_.writeback_at_end && !any_running) {
      l2_.flush_dirty();
      attribute_writebacks(kernel);
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
};

}  // namespace

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

SimResult simulate(const Workload& w, const ArchSpec& arch, const SimOptions& opt) {
  check_runnable(w, arch);
  Engine e(w, arch, opt);
  SimResult r = e.run();
  r.experiment = w.name;
  return r;
}

}  // namespace tilesim
