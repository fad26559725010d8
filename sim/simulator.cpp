#include "sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include "common/error.hpp"
#include "models/cache/l2.hpp"
#include "models/compute/mma.hpp"
#include "models/dram/bandwidth_server.hpp"
#include "sim/inflight_table.hpp"
#include "sim/occupancy.hpp"

namespace tilesim {

namespace {

enum EventKind : std::uint32_t { kLoadReady, kComputeDone, kBlockDone, kSemPost };

struct Event {
  Time t;
  std::uint64_t seq;
  EventKind kind;
  std::uint32_t slot;
  std::uint32_t arg;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

// A resident block's progress through its steps (software-pipelined, `stages` deep).
struct SlotState {
  std::uint32_t sm = 0;
  std::uint32_t block = kNoBlock;
  std::uint32_t first_step = 0, num_steps = 0;
  std::uint32_t next_issue = 0;   // next step whose loads are issued
  std::uint32_t computed = 0;     // steps whose MMA finished
  bool computing = false;
  bool waiting = false;           // parked on a semaphore
  bool busy = false;
  Time start = 0;
  Time stores_done = 0;
};

ByteRect to_rect(const Tensor& t, const TileAccess& a) {
  const std::uint64_t bits = t.elem_bits;
  // Along the contiguous dimension (c) and the strided one (r).
  const std::uint64_t r0 = t.col_major ? a.col0 : a.row0, nr = t.col_major ? a.cols : a.rows;
  const std::uint64_t c0 = t.col_major ? a.row0 : a.col0, nc = t.col_major ? a.rows : a.cols;
  const std::uint64_t pitch = t.ld * bits / 8;
  const std::uint64_t first = c0 * bits / 8, end = ceil_div((c0 + nc) * bits, std::uint64_t{8});
  ByteRect b;
  b.start = t.base + a.batch * t.batch_stride + r0 * pitch + first;
  b.pitch = pitch;
  b.row_bytes = end - first;
  b.rows = static_cast<std::uint32_t>(nr);
  return b;
}

class Engine {
 public:
  Engine(const Workload& w, const ArchSpec& arch, const SimOptions& opt)
      : w_(w), arch_(arch), opt_(opt), l2_(arch.l2, opt.seed, arch.name),
        dram_(arch.dram.bandwidth_gbps, arch.dram.latency_ns + arch.l2.hit_latency_ns),
        fabric_(arch.l2.fabric_bandwidth_gbps, arch.l2.hit_latency_ns + arch.l2.far_extra_latency_ns) {
    for (std::uint32_t p = 0; p < arch.l2.partitions; ++p)
      l2_bw_.emplace_back(arch.l2.bandwidth_gbps, arch.l2.hit_latency_ns);
    sector_bytes_ = arch.l2.sector_bytes;
    launch_ps_ = static_cast<Time>(std::llround(arch.sm.block_launch_ns * kPsPerNs));
    sm_partition_.resize(arch.sm.count);
    for (std::uint32_t s = 0; s < arch.sm.count; ++s) {
      // interleaved: consecutive SMs (and so consecutive first-wave blocks) alternate halves;
      // blocked: the first half of the SMs sits next to partition 0.
      sm_partition_[s] = arch.l2.partitions == 1 ? 0
                         : arch.sm.partition_map == "interleaved" ? s % 2
                                                                  : (s < arch.sm.count / 2 ? 0 : 1);
    }
    // Write-backs are attributed to tensors by address: regions sorted by base.
    order_.resize(w.tensors.size());
    std::iota(order_.begin(), order_.end(), 0u);
    std::sort(order_.begin(), order_.end(), [&](auto a, auto b) { return w.tensors[a].base < w.tensors[b].base; });
    std::vector<Addr> starts;
    for (auto i : order_) starts.push_back(w.tensors[i].base);
    l2_.set_regions(starts);
  }

  SimResult run() {
    SimResult res;
    res.arch = arch_.name;
    Time t = 0;
    for (std::size_t k = 0; k < w_.kernels.size(); ++k) {
      if (!opt_.warm_l2) l2_.invalidate_all();
      res.kernels.push_back(run_kernel(w_.kernels[k], t));
      t = res.kernels.back().end;
      res.total += res.kernels.back().mem;
    }
    res.duration = t;
    return res;
  }

 private:
  const Workload& w_;
  const ArchSpec& arch_;
  const SimOptions& opt_;
  L2Cache l2_;
  BandwidthServer dram_, fabric_;
  std::vector<BandwidthServer> l2_bw_;
  std::uint32_t sector_bytes_ = 32;
  Time launch_ps_ = 0;
  std::vector<std::uint32_t> sm_partition_;
  std::vector<std::uint32_t> order_;  // tensor index by base address

  // Per-kernel state.
  const Kernel* k_ = nullptr;
  KernelStats* ks_ = nullptr;
  MmaTiming mma_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> q_;
  std::uint64_t seq_ = 0;
  std::vector<SlotState> slots_;
  std::vector<Time> ready_;  // slots x stages: when each in-flight step's data arrives
  std::vector<Time> sm_free_;
  std::vector<std::uint32_t> sem_;
  std::vector<std::vector<std::uint32_t>> sem_waiters_;
  std::size_t next_dispatch_ = 0;
  std::uint32_t done_blocks_ = 0;
  std::uint32_t stages_ = 1;
  // Fills in flight, per tile rectangle: a later access of the same rectangle that "hits" lines
  // whose DRAM fill has not arrived waits for it, as the L2 merges it into the pending miss.
  // Keyed by rectangle, because GEMM reuse is of whole, identical tiles (an A or B panel slice).
  InflightTable inflight_;

  void push(Time t, EventKind kind, std::uint32_t slot, std::uint32_t arg) { q_.push(Event{t, seq_++, kind, slot, arg}); }

  void count(const TileAccess& a, const L2AccessResult& r, bool write) {
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
    ks_->mem += c;
    ks_->tensors[a.tensor].mem += c;
  }

  static std::uint64_t rect_key(const TileAccess& a) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::uint64_t v : {std::uint64_t{a.tensor}, std::uint64_t{a.batch}, std::uint64_t{a.row0},
                            std::uint64_t{a.col0}, std::uint64_t{a.rows}, std::uint64_t{a.cols}})
      h = (h ^ v) * 0x100000001b3ull;
    return h;
  }

  // Issues the accesses of one step of `kind` from an SM; returns when they complete.
  Time do_accesses(const Step& st, std::uint32_t sm, Time now, AccessKind kind) {
    L2AccessResult sum;
    const std::uint32_t part = sm_partition_[sm];
    Time pending = now;  // latest in-flight fill that this step's hits depend on
    std::uint32_t missed[8];
    std::uint32_t n_missed = 0;
    for (std::uint32_t i = 0; i < st.num_accesses; ++i) {
      const TileAccess& a = k_->accesses[st.first_access + i];
      if (a.kind != kind) continue;
      const L2AccessResult r = l2_.access(to_rect(w_.tensors[a.tensor], a), part, kind == AccessKind::store);
      count(a, r, kind == AccessKind::store);
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
    for (std::uint32_t i = 0; i < n_missed; ++i) inflight_.raise(rect_key(k_->accesses[missed[i]]), done);
    return done;
  }

  void dispatch(std::uint32_t slot, Time now) {
    SlotState& s = slots_[slot];
    const std::uint32_t b = k_->dispatch[next_dispatch_++];
    s.block = b;
    s.busy = true;
    s.start = now;
    s.next_issue = s.computed = 0;
    s.computing = s.waiting = false;
    s.stores_done = now;
    if (b == kNoBlock) {  // early-exit block of a padded grid: occupies the slot only to launch
      s.num_steps = 0;
      push(now + launch_ps_, kBlockDone, slot, 0);
      return;
    }
    s.first_step = k_->blocks[b].first_step;
    s.num_steps = k_->blocks[b].num_steps;
    const Time t = now + launch_ps_;
    s.start = t;
    s.stores_done = t;
    if (s.num_steps == 0) {
      push(t, kBlockDone, slot, 0);
      return;
    }
    issue_loads(slot, t);
  }

  void issue_loads(std::uint32_t slot, Time now) {
    SlotState& s = slots_[slot];
    while (s.next_issue < s.num_steps && s.next_issue < s.computed + stages_) {
      const Step& st = k_->steps[s.first_step + s.next_issue];
      if (st.wait_sem != kNoSem && sem_[st.wait_sem] < st.wait_value) {
        if (!s.waiting) sem_waiters_[st.wait_sem].push_back(slot);
        s.waiting = true;
        return;
      }
      s.waiting = false;
      const Time ready = do_accesses(st, s.sm, now, AccessKind::load);
      ready_[static_cast<std::size_t>(slot) * stages_ + s.next_issue % stages_] = ready;
      push(ready, kLoadReady, slot, s.next_issue);
      ++s.next_issue;
    }
  }

  void try_compute(std::uint32_t slot, Time now) {
    SlotState& s = slots_[slot];
    const std::uint32_t i = s.computed;
    if (s.computing || i >= s.next_issue) return;
    if (ready_[static_cast<std::size_t>(slot) * stages_ + i % stages_] > now) return;
    const Step& st = k_->steps[s.first_step + i];
    const Time start = std::max(now, sm_free_[s.sm]);
    const Time end = start + mma_.duration(st.flops);
    sm_free_[s.sm] = end;
    s.computing = true;
    push(end, kComputeDone, slot, i);
  }

  void compute_done(std::uint32_t slot, std::uint32_t i, Time now) {
    SlotState& s = slots_[slot];
    s.computing = false;
    s.computed = i + 1;
    const Step& st = k_->steps[s.first_step + i];
    const Time stored = do_accesses(st, s.sm, now, AccessKind::store);
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
      slots_[slot].waiting = false;
      issue_loads(slot, now);  // re-parks itself if its value is not reached yet
      try_compute(slot, now);
    }
  }

  void block_done(std::uint32_t slot, Time now) {
    SlotState& s = slots_[slot];
    s.busy = false;
    ks_->block_busy_ps += static_cast<std::uint64_t>(now - s.start);
    ks_->end = std::max(ks_->end, now);
    if (s.block != kNoBlock) ++done_blocks_;
    if (next_dispatch_ < k_->dispatch.size()) dispatch(slot, now);
  }

  [[noreturn]] void deadlock() {
    std::string msg = "deadlock in kernel '" + k_->name + "': " + std::to_string(k_->num_blocks() - done_blocks_) +
                      " blocks can never finish";
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const SlotState& s = slots_[i];
      if (!s.busy || !s.waiting) continue;
      const Step& st = k_->steps[s.first_step + s.next_issue];
      const Block& b = k_->blocks[s.block];
      msg += "; block " + std::to_string(s.block) + " (tile " + std::to_string(b.tile_m) + "," +
             std::to_string(b.tile_n) + "," + std::to_string(b.tile_z) + ") on SM " + std::to_string(s.sm) +
             " waits at step " + std::to_string(s.next_issue) + " for semaphore " + std::to_string(st.wait_sem) +
             " to reach " + std::to_string(st.wait_value) + " (it holds " + std::to_string(sem_[st.wait_sem]) +
             "), and every block that could post it is either done, waiting too, or not dispatched because all " +
             std::to_string(slots_.size()) + " slots are held";
      break;
    }
    throw DeadlockError(msg);
  }

  KernelStats run_kernel(const Kernel& k, Time t0) {
    KernelStats ks;
    k_ = &k;
    ks_ = &ks;
    const Occupancy occ = compute_occupancy(arch_, k.resources, k.blocks_per_sm, "kernel " + k.name);
    ks.name = k.name;
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
        static_cast<double>(ks.launched_blocks - (ks.waves - 1) * wave) / static_cast<double>(wave);
    ks.start = ks.end = t0;
    ks.flops = k.total_flops;
    for (const auto& t : w_.tensors) ks.tensors.push_back(TensorStats{t.name, {}});
    const std::vector<std::uint64_t> wb_before = l2_.writeback_sectors_by_region();

    mma_ = MmaTiming(arch_, k.compute_dtype);
    if (!arch_.supports(k.compute_dtype))
      throw InputError("kernel " + k.name + ": dtype " + std::string(dtype_name(k.compute_dtype)) + " is not supported by " +
                       arch_.name);
    stages_ = k.stages;
    seq_ = 0;
    slots_.assign(static_cast<std::size_t>(arch_.sm.count) * occ.blocks_per_sm, SlotState{});
    ready_.assign(slots_.size() * stages_, 0);
    sm_free_.assign(arch_.sm.count, t0);
    sem_.assign(w_.num_semaphores, 0);
    sem_waiters_.assign(w_.num_semaphores, {});
    next_dispatch_ = 0;
    done_blocks_ = 0;
    if (!opt_.warm_l2) inflight_.clear();
    // First wave breadth-first: one block on every SM, then a second on every SM, ...
    // (the hardware's round-robin spread; docs/architecture.md).
    for (std::uint32_t r = 0; r < occ.blocks_per_sm; ++r)
      for (std::uint32_t sm = 0; sm < arch_.sm.count; ++sm) {
        const std::uint32_t slot = sm * occ.blocks_per_sm + r;
        slots_[slot].sm = sm;
        if (next_dispatch_ < k.dispatch.size()) dispatch(slot, t0);
      }
    while (!q_.empty()) {
      const Event e = q_.top();
      q_.pop();
      switch (e.kind) {
        case kLoadReady: try_compute(e.slot, e.t); break;
        case kComputeDone: compute_done(e.slot, e.arg, e.t); break;
        case kBlockDone: block_done(e.slot, e.t); break;
        case kSemPost: post(e.arg, e.t); break;
      }
    }
    if (done_blocks_ != k.num_blocks()) deadlock();

    if (opt_.writeback_at_end) l2_.flush_dirty();
    const auto& wb = l2_.writeback_sectors_by_region();
    for (std::size_t r = 0; r < order_.size(); ++r) {
      const std::uint64_t bytes = (wb[r] - (r < wb_before.size() ? wb_before[r] : 0)) * sector_bytes_;
      ks.tensors[order_[r]].mem.dram_write_bytes += bytes;
      ks.mem.dram_write_bytes += bytes;
    }
    const double peak = arch_.peak_flops(k.compute_dtype);
    ks.compute_bound_time = static_cast<Time>(static_cast<double>(ks.flops) / peak * 1e12);
    ks.memory_bound_time = static_cast<Time>(static_cast<double>(ks.mem.dram_read_bytes + ks.mem.dram_write_bytes) /
                                             (arch_.dram.bandwidth_gbps * 1e9) * 1e12);
    return ks;
  }
};

}  // namespace

SimResult simulate(const Workload& w, const ArchSpec& arch, const SimOptions& opt) {
  Engine e(w, arch, opt);
  SimResult r = e.run();
  r.experiment = w.name;
  return r;
}

}  // namespace tilesim
