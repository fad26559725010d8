#pragma once
// The event-driven SM/L2/DRAM simulator: replays a Workload's kernels (in stream order) on an
// arch and returns plain counters. Deterministic: events are ordered by (time, sequence).
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/named_policy.hpp"
#include "models/arch.hpp"
#include "sim/core/stats.hpp"
#include "workloads/kernel.hpp"

namespace tilesim {

class L2Cache;
struct TileAccess;
struct L2AccessResult;
struct ByteRect;

/// Watches a run from inside (the explorer, sim/tools/explore/): told of every block dispatch and
/// every L2 request, with the L2 to probe. The calls cost a null check when no observer is
/// set. An observer must not change what it is shown.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  /// Block `block` of `kernel` (its `position`-th dispatch) is placed on `sm` at `t`, before it
  /// issues anything.
  virtual void on_dispatch(std::uint32_t kernel, std::uint32_t block, std::uint32_t position, std::uint32_t sm,
                           Time t, const L2Cache& l2) = 0;
  /// A request of block `block` of `kernel` (kNoBlock: a semaphore poll) and what the L2 did.
  virtual void on_access(std::uint32_t kernel, std::uint32_t block, const TileAccess& access,
                         const L2AccessResult& result) = 0;
  /// The run is over (every kernel finished, dirty data already written back) at `t`.
  virtual void on_end(Time t, const L2Cache& l2) = 0;
  /// The L2 is about to look up `rect` for an SM next to `partition` (reads and writes, in the
  /// order the L2 sees them; what the request coalescer merged never arrives). `kernel`'s
  /// block on `sm` asks at `t`. For an export of the request stream (sim/report/l2_stream.hpp).
  virtual void on_l2_request(std::uint32_t kernel, std::uint32_t sm, Time t, const ByteRect& rect,
                             std::uint32_t partition, bool write) {}
  /// The L2 writes back every dirty sector (`invalidate` false) or also empties itself (true).
  virtual void on_l2_reset(Time t, bool invalidate) {}
};

struct SimOptions {
  /// When the L2 starts empty: once, at the start of the workload (a real run, where a
  /// consumer kernel finds its producer's output in L2), or at each kernel's launch while no
  /// other kernel runs (as Nsight Compute measures kernels one at a time).
  enum class ColdL2 { per_workload, per_kernel };

  /// Which kernel's blocks the dispatcher places first when several kernels have blocks
  /// waiting: the one launched first (what the hardware's block scheduler is observed to do),
  /// or one block each in turn.
  enum class Dispatch { oldest_kernel, round_robin };

  /// What the L2 holds when it starts (at the workload's start, or at each kernel's launch with
  /// ColdL2::per_kernel): nothing, or what a long write stream leaves: Triton's do_bench writes
  /// 256 MB before each timed repetition, and the L2 still holds l2.write_flush_dirty_fraction of
  /// its lines dirty when the kernel starts; the kernel's misses write them back.
  enum class L2Start { empty, write_flushed };

  /// exact: every block simulated (the reference). sampled: a kernel whose dispatch sequence
  /// repeats skips its steady middle periods (sim/core/sampling.hpp, docs/architecture.md).
  enum class Mode { exact, sampled };

  ColdL2 cold_l2 = ColdL2::per_workload;
  Mode mode = Mode::exact;
  /// Sampled mode: two spans of periods are steady when their time, L2 read hits and DRAM
  /// bytes differ by at most this fraction.
  double sampling_tolerance = 0.02;
  L2Start l2_start = L2Start::empty;
  Dispatch dispatch = Dispatch::oldest_kernel;
  bool writeback_at_end = true;  ///< write dirty sectors back when the GPU goes idle, counted as the last kernel's DRAM writes
  double launch_gap_ns = 0;      ///< between a kernel's end and the launch of the next kernel on its stream
  double poll_interval_ns = 200; ///< a waiting block reads its semaphore's sector this often
  std::uint64_t seed = 1;        ///< for the random replacement policy
  /// What the run's duration stands for (`sim.timing`), where the arch has a power cap: the
  /// clock the cap settles at under sustained load (steady, the default), or the median timed
  /// launch of a harness run back to back from an idle board, whose launches run at the boost
  /// clock until the power controller's average reaches the cap (models/power/power_clock.hpp):
  /// `launches` timed after `warmup` untimed ones, or Triton's do_bench (a runtime estimate of
  /// 5 launches, then warmup_ms of untimed and rep_ms of timed launches). Each timed launch
  /// (and each of do_bench's estimates) follows a write of flush_bytes.
  struct Timing {
    enum class Kind { steady, launches, do_bench };
    Kind kind = Kind::steady;
    int warmup = 0;
    int launches = 0;
    double warmup_ms = 25, rep_ms = 100;
    double flush_bytes = 0;
  } timing;
  SimObserver* observer = nullptr;  ///< not part of a run's configuration: watches only
  /// Not part of a run's configuration either: incremented at each dispatch (progress bars).
  std::atomic<std::uint64_t>* dispatched_blocks = nullptr;
  /// Internal to the power-clock search (sim/core/power_clock.cpp): a prefix run dispatches only
  /// this leading fraction of each kernel's positions, to estimate the clock cheaply.
  double dispatch_fraction = 1.0;
};

/// The dispatch rules by name (`sim.dispatch`, `replay --dispatch`), each with what it does;
/// the first is the default.
std::vector<NamedPolicy> dispatch_rules();
std::vector<std::string> dispatch_names();
/// The rule of a name dispatch_names() lists.
SimOptions::Dispatch dispatch_rule(const std::string& name);

/// The checks simulate() makes before running: the dependencies are acyclic, and every kernel
/// fits the arch and can make progress with the slots it can have. Throws as simulate() does.
void check_runnable(const Workload& w, const ArchSpec& arch);

/// Simulates `w` on `arch`. Throws InputError when a kernel cannot run on the arch (occupancy)
/// and DeadlockError when blocks wait on semaphores that can never be posted.
SimResult simulate(const Workload& w, const ArchSpec& arch, const SimOptions& opt);

}  // namespace tilesim
