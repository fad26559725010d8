#pragma once
// The event engine: its state, shared by simulator.cpp (the run loop, kernels, dispatch),
// engine_steps.cpp (a block's steps: loads, memory timing, MMA on the SM pipe, stores,
// semaphores) and deadlock.cpp (explaining a schedule that cannot finish). Internal to sim/core.
#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include "models/cache/l2.hpp"
#include "sim/core/step_timing.hpp"
#include "models/dram/bandwidth_server.hpp"
#include "sim/core/inflight_table.hpp"
#include "sim/core/memory_timing.hpp"
#include "sim/core/sampling.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/sm_pipe.hpp"
#include "sim/core/sm_pool.hpp"

namespace tilesim::detail {

/// Event kinds, in the order events of one instant are handled: a kernel launches, posted
/// semaphores land, a dispatched block starts (after its launch cost), data arrives, MMA steps
/// end, blocks end. Within a kind, by slot and argument, so that ties never depend on the order
/// events were pushed.
enum EventKind : std::uint32_t { kKernelLaunch, kSemPost, kBlockStart, kLoadReady, kComputeDone, kBlockDone, kKernelStart };

struct Event {
  Time t;
  EventKind kind;
  std::uint32_t slot;
  std::uint32_t arg;
  std::uint64_t seq;  // last resort: two identical events
  bool operator>(const Event& o) const {
    if (t != o.t) return t > o.t;
    if (kind != o.kind) return kind > o.kind;
    if (slot != o.slot) return slot > o.slot;
    if (arg != o.arg) return arg > o.arg;
    return seq > o.seq;
  }
};

/// A resident block's progress through its steps (software-pipelined, `stages` deep).
struct SlotState {
  std::uint32_t kernel = 0;
  std::uint32_t sm = 0;
  std::uint32_t block = kNoBlock;
  std::uint32_t position = 0;     // dispatch position within the kernel
  std::uint32_t num_steps = 0;
  const Step* steps = nullptr;        // its program (Kernel::program: the kernel's arrays, or generated)
  const TileAccess* acc = nullptr;    // what its steps' first_access index
  std::uint64_t access_id_base = 0;   // ProgramView::access_id_base
  std::uint32_t next_issue = 0;   // next step whose loads are issued
  std::uint32_t computed = 0;     // steps whose MMA finished
  bool computing = false;
  bool waiting = false;           // parked on a semaphore, holding its SM resources
  bool queued = false;            // in that semaphore's waiter list
  bool busy = false;
  bool issue_blocked = false;     // in its SM's queue for in-flight room (sm.max_inflight_bytes)
  Time start = 0;
  Time stores_done = 0;
  Time wait_start = 0;            // when it parked (it polls from then on)
  Time stall_start = -1;          // when it also ran out of issued work to compute (-1: not yet)
  Time wait = 0;                  // time stalled: parked with nothing issued left to compute
  std::uint64_t age = 0;          // dispatch sequence: the SM's pipe may serve older blocks first
  bool holding = false;           // waits for its data keeping part of its SM's pipe (mainloop waiting_holds)
};

/// Per-SM deviations for a main loop's coresident_rate_sd (engine_steps.cpp): bell-shaped, mean
/// 0, unit variance, drawn from (seed, SM), so the same at any thread count.
std::vector<double> coresident_deviations(std::uint32_t sms, std::uint64_t seed);

/// One kernel's run: its occupancy, dispatch progress and counters.
struct KernelRun {
  const Kernel* k = nullptr;
  KernelStats stats;
  BlockCost cost;
  StepTiming timing;
  double share = 1.0;              // most of an SM's pipe one block of this kernel keeps busy
  bool multicast = false;          // its blocks receive cluster partners' multicast slices
  bool cluster_placement = false;  // its clusters go whole onto one GPC (Kernel::cluster_blocks, sm.gpcs)
  double port_factor = 1.0;        // its main loop's L2 port rate over the SM's (mainloop l2_port_factor or l2_port_gbps)
  double ps_per_copy_byte = 0;     // bulk copies: their transfer time through the port (0: not bulk)
  std::uint32_t fill_chunk = 0;    // bytes its read misses fetch (L2Cache::fill_chunk_bytes) when above a sector; else 0
  Time load_use_ps = 0;            // from a stage's data at the SM to its use (mainloop load_use_ns)
  bool prefetch_after_wait = false;  // a stage's loads issue when the step stages - 1 earlier starts (mainloop prefetch)
  double coresident_sd = 0;        // its SMs' speed spread while they hold 2+ blocks (mainloop coresident_rate_sd)
  double waiting_holds = 0;        // the part of its warps' pipe share a block keeps while waiting for data
  PipeArbitration arbitration = PipeArbitration::fair;
  std::size_t next_dispatch = 0;
  std::size_t dispatch_end = 0;    // positions it dispatches: all, or a prefix run's leading part
  std::uint32_t resident = 0;
  bool launched = false, finished = false;
  bool started = false;            // past its launch overhead: its blocks may be dispatched
  std::uint64_t launch_order = 0;  // when it was launched, for the oldest-kernel-first rule
  SamplingRun sampling;            // sim.mode sampled: its period and snapshots

  bool all_dispatched() const { return next_dispatch >= dispatch_end; }
};

/// The event engine of one simulation (sim/core/simulator.cpp: the run loop, kernels and
/// dispatch; engine_steps.cpp: a block's steps, their memory and their MMA).
class Engine {
 public:
  /// `periods`: sampled mode's find_periods, computed once by simulate() (null: found here).
  Engine(const Workload& w, const ArchSpec& arch, const SimOptions& opt, const std::vector<KernelPeriod>* periods = nullptr);
  SimResult run();

 private:
  const Workload& w_;
  const ArchSpec& arch_;
  const SimOptions& opt_;
  const std::vector<KernelPeriod>* periods_;
  L2Cache l2_;
  MemoryTiming mem_;
  SmPool pool_;
  std::uint32_t sector_bytes_ = 32;
  Time launch_ps_ = 0, kernel_launch_ps_ = 0, gap_ps_ = 0, poll_ps_ = 1, check_ps_ = 0, post_ps_ = 0;
  std::uint64_t inflight_cap_ = 0;     // load bytes one SM may have in flight (0: no cap)
  std::vector<std::uint32_t> order_;    // index of each tensor holding its own bytes, by base address
  std::vector<std::uint32_t> roots_;    // per tensor, the tensor holding its bytes (storage_roots)
  std::vector<std::uint64_t> wb_seen_;  // write-backs per region already attributed
  Time offset_ps_ = 0;                  // time of the periods sampled mode skipped: added to every recorded time
  Addr flush_base_ = 0;                 // where sim.l2_start write_flushed's stream is written: past every tensor

  std::vector<KernelRun> runs_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> q_;
  std::uint64_t seq_ = 0, launches_ = 0, ages_ = 0;
  std::vector<SlotState> slots_;
  std::vector<ProgramBuffer> programs_;     // per slot: a lazy kernel's block program, generated at dispatch
  std::vector<std::uint32_t> free_slots_;
  std::vector<Time> ready_;                 // slots x max_stages: when each in-flight step's data arrives
  std::vector<std::uint64_t> stage_bytes_;  // slots x max_stages: load bytes each in-flight step holds
  std::uint32_t max_stages_ = 1;
  std::vector<SmPipe> pipes_;               // each SM's issue and tensor pipe
  // sm.l2_port_sharing: fair: each SM's load requests still in its port, which a request of
  // another block on the SM slows (share_port); last_served_ is do_accesses' latest timing.
  struct PortJob {
    std::uint32_t slot, step;
    Time port, rest, extra;  // through the port; everything else through; load use and checks after
  };
  bool fair_port_ = false;
  std::vector<std::vector<PortJob>> port_jobs_;
  MemoryTiming::Served last_served_{};
  std::vector<SmPipe::Completion> changed_;  // scratch: completions a pipe change moved
  std::vector<std::uint64_t> sm_inflight_;  // load bytes in flight per SM
  std::vector<std::vector<std::uint32_t>> sm_issue_queue_;  // slots waiting for in-flight room, per SM
  std::vector<std::uint32_t> sem_;
  std::vector<std::vector<std::uint32_t>> sem_waiters_;
  std::vector<BlockRecord> records_;
  std::vector<std::uint32_t> dispatch_order_;  // scratch of dispatch_ready
  std::vector<std::uint32_t> cluster_sms_;     // scratch of dispatch_next
  std::vector<std::uint32_t> missed_;          // scratch of do_accesses: the step's missed rectangles
  static constexpr std::uint32_t kNone = 0xffffffffu;
  // Round-robin dispatch: the kernel served last (kNone before the first). The next turn goes
  // to the waiting kernel launched after it, wrapping around; kept as a kernel, not as an index
  // into the waiting list, which changes as kernels launch and finish.
  std::uint32_t rr_last_ = kNone;
  std::uint32_t last_finished_ = kNone;  // write-backs flushed at a cold start are counted here
  // Fills in flight, per tile rectangle: a later access of the same rectangle that "hits" lines
  // whose DRAM fill has not arrived waits for it, as the L2 merges it into the pending miss.
  // Keyed by rectangle, because GEMM reuse is of whole, identical tiles (an A or B panel slice).
  InflightTable inflight_;
  // Requests per tile rectangle: until when a later read of it is merged into the last one
  // looked up (its issue + l2.request_coalescing_ns) and, for load instructions, how many
  // requests that entry carries (l2.request_coalescing_max); and when that one's data arrives.
  InflightTable merge_until_, request_ready_;
  Time coalesce_ps_ = 0;  // the request coalescer's window (0: none)
  std::uint32_t coalesce_max_ = 0;  // l2.request_coalescing_max (0: no limit)
  bool coalesce_queue_ = false;     // l2.request_coalescing_queue: the window grows by the crossbar's queue
  Time coalesce_queue_max_ps_ = 0;  // l2.request_coalescing_queue_max_ns: by at most this much (0: no bound)
  std::vector<std::uint64_t> coalesce_salt_;  // per SM: its GPC's coalescer, mixed into request keys (empty: one coalescer)
  std::vector<std::uint32_t> coalescer_of_sm_;  // per SM: its coalescer (0: the GPU's, or unlisted; else 1 + GPC)
  // l2.request_coalescing_lines: per coalescer the lines its lookups brought in (mod 2^32), and
  // per open entry that count when it opened (lrc_opened_'s counts).
  double lrc_inv_lines_ = 0;
  std::vector<std::uint32_t> lrc_lines_;
  InflightTable lrc_opened_;
  std::vector<std::uint32_t> requested_lines_;  // scratch of do_accesses: the count after each looked-up request
  double noise_half_ps_ = 0;  // half-width of a k-step's uniform time deviation (sm.step_noise_ns x sqrt 3)
  double solo_noise_half_ps_ = 0;  // the same for a block alone on its SM (sm.solo_step_noise_ns)
  double shared_noise_half_ps_ = 0;  // the same drawn from the step's last load (sm.shared_step_noise_ns)
  std::vector<double> coresident_z_;  // per SM: its speed deviation while it holds 2+ blocks (empty: no kernel has one)
  std::vector<std::uint32_t> requested_;  // scratch of do_accesses: the step's looked-up load rectangles
  std::vector<std::uint32_t> requested_count_;  // scratch of do_accesses: the requests each of those carries
  // The coalescer entry a step's last request joined (in merge_until_) or opened (its lookup).
  struct CoalesceRun {
    std::uint32_t count = 0;  // the requests it carries
    bool in_table = false;
  };

  void push(Time t, EventKind kind, std::uint32_t slot, std::uint32_t arg) {
    q_.push(Event{t, kind, slot, arg, seq_++});
  }

  // simulator.cpp
  void prepare_kernels();
  void prepare_kernel(std::uint32_t i);
  void launch(std::uint32_t kernel, Time now);
  void attribute_writebacks(std::uint32_t kernel, bool under_kernel = true);
  void start_l2();
  void start_kernel(std::uint32_t kernel, Time now);
  void dispatch_ready(Time now);
  bool dispatch_next(std::uint32_t kernel, Time now);
  void place(std::uint32_t kernel, std::uint32_t sm, Time now);
  void block_done(std::uint32_t slot, Time now);
  void finish(std::uint32_t kernel, Time now);
  SimResult collect();

  // sampling.cpp
  void at_period_boundary(std::uint32_t kernel, Time now);
  std::uint64_t skip_room(const KernelRun& kr, std::uint64_t j, const MemCounters& total, std::uint64_t measured) const;
  SkipPlan plan_period_skip(const KernelRun& kr, std::uint64_t j) const;
  SkipPlan plan_rate_skip(const KernelRun& kr, std::uint64_t j) const;

  // engine_steps.cpp
  void count(KernelRun& kr, const TileAccess& a, const L2AccessResult& r, bool write);
  std::uint64_t count_coalesced(KernelRun& kr, const TileAccess& a, std::uint64_t sectors);
  Time spread_ps(const KernelRun& kr, const TileAccess& a) const;
  std::uint64_t fill_chunk_key(const KernelRun& kr, const TileAccess& a) const;
  /// The key of request `a` from `sm` in the coalescer's tables: its rectangle's, in its GPC's
  /// coalescer (l2.request_coalescing_per_gpc).
  std::uint64_t request_key(const TileAccess& a, std::uint32_t sm) const;
  bool coalesce_request(KernelRun& kr, const TileAccess* step_acc, std::uint32_t i, std::uint32_t sm, Time now, bool bounded,
                        ByteRect& rect, CoalesceRun& run, Time& pending, std::uint64_t& merged);
  Time do_accesses(const SlotState& s, const Step& st, Time now, AccessKind kind);
  std::uint64_t load_bytes(const TileAccess* acc, const Step& st) const;
  void issue_loads(std::uint32_t slot, Time now);
  /// A launched block's first loads; under waiting_holds it holds its part of the pipe from then on.
  void start_block(std::uint32_t slot, Time now);
  /// Where slot `slot`'s step `step` keeps its ready time and bytes (ready_, stage_bytes_).
  std::size_t stage_index(std::uint32_t slot, std::uint32_t step) const {
    return static_cast<std::size_t>(slot) * max_stages_ + step % runs_[slots_[slot].kernel].k->stages;
  }
  Time share_port(std::uint32_t slot, std::uint32_t sm, std::uint32_t step, Time now, Time extra);
  void set_hold(std::uint32_t slot, bool hold, Time now);
  bool park_on_semaphore(SlotState& s, const Step& st, std::uint32_t slot, Time now);
  void load_ready(std::uint32_t slot, std::uint32_t step, Time now);
  void stop_waiting(SlotState& s, Time now);
  void try_compute(std::uint32_t slot, Time now);
  Time step_work(const SlotState& s, const KernelRun& kr, const Step& st, std::uint32_t step) const;
  void pipe_done(std::uint32_t slot, std::uint32_t version, Time now);
  void schedule_changed();
  void compute_done(std::uint32_t slot, Time now);
  void post(std::uint32_t sem, Time now);
};

/// Builds the explanation of a deadlock: a waiting block, what it waits on, and why no block
/// can ever post it. `kernels`, `slots`, `sems` describe the stuck state.
std::string explain_deadlock(const Workload& w, const std::vector<KernelRun>& kernels,
                             const std::vector<SlotState>& slots, const std::vector<std::uint32_t>& sems,
                             std::uint32_t num_sms);

/// One run of the engine at the arch's clock (simulate() adds the checks and the power cap).
SimResult run_engine(const Workload& w, const ArchSpec& arch, const SimOptions& opt,
                     const std::vector<KernelPeriod>* periods = nullptr);

}  // namespace tilesim::detail
