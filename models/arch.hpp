#pragma once
// An immutable, validated description of one GPU: SMs, compute rates, L2 and DRAM.
// Loaded from a preset (models/archs/NAME.yaml, embedded in the binary) or a file,
// with `arch_overrides` merged over it. The YAML tree has the shape of this struct.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/config_node.hpp"
#include "common/dtype.hpp"
#include "models/compute/mainloop.hpp"

namespace tilesim {

struct SmSpec {
  std::uint32_t count = 0;
  /// The SM clock: the clock the SMs run at when the board's power cap does not bind (the boost
  /// clock; with no `power` section, the one clock of every run).
  double clock_mhz = 0;
  std::uint32_t max_threads = 0;          ///< resident threads per SM
  std::uint32_t max_blocks = 0;           ///< resident blocks per SM
  std::uint32_t registers = 0;            ///< 32-bit registers per SM
  std::uint32_t max_registers_per_thread = 255;
  std::uint32_t register_alloc_unit = 256;  ///< registers are allocated per warp in units of this
  std::uint64_t shared_memory_bytes = 0;  ///< per SM, usable by blocks
  std::uint64_t max_shared_memory_per_block = 0;
  std::uint64_t reserved_shared_memory_per_block = 0;  ///< taken by the runtime for each block
  /// Which L2 half each SM sits next to: `interleaved` (SM s: s mod 2), `blocked` (first half of
  /// the SMs: half 0), or one digit 0/1 per SM, measured by calibration/kernels/l2_probe.cu.
  std::string partition_map = "interleaved";
  std::vector<std::uint8_t> sm_half;      ///< partition_map resolved, one entry per SM
  double block_launch_ns = 0;             ///< dispatch cost of one block (also an early-exit block's life)
  /// From a kernel's launch to its first block's dispatch: the grid's setup, which a kernel
  /// of any size pays once (an empty kernel's whole duration).
  double kernel_launch_ns = 0;
  /// The SM's port to the L2 (its crossbar link): bytes per SM clock it moves for the SM's loads,
  /// hits and misses alike; 0 = unlimited. The SMs in `l2_port_fast_sms` move
  /// `l2_port_fast_factor` times as much (measured: some SMs run L2-bound kernels a third faster
  /// than the rest, calibration/measurements/h100/production/timeline.csv.gz). Such persistent
  /// per-SM speeds are what lets blocks that share a panel drift apart over a long k-loop.
  double l2_port_bytes_per_clk = 0;
  /// The clock, MHz, the port's bytes per clock are counted at: 0 = the SM clock (the port
  /// slows with the SMs under the power cap), else a clock of its own (the crossbar's domain).
  double l2_port_clock_mhz = 0;
  /// The port's rate at SM clock `sm_mhz`, MB/s (bytes per clock x MHz).
  double l2_port_mbps(double sm_mhz) const { return l2_port_bytes_per_clk * (l2_port_clock_mhz > 0 ? l2_port_clock_mhz : sm_mhz); }
  std::vector<std::uint32_t> l2_port_fast_sms;
  double l2_port_fast_factor = 1.0;
  /// How the port serves requests of different blocks on one SM that overlap (`sm.l2_port_sharing`).
  /// `fifo`: one after the other, so the first block's data lands first and two blocks settle
  /// into alternating phases (one copies while the other computes). `fair`: interleaved
  /// (processor sharing between blocks; a block's own requests stay in order), so two blocks
  /// whose copies overlap both receive their data late and stay in phase: a trial of what two
  /// synchronous blocks cost each other on one SM (docs/validation.md, "Two blocks that wait").
  enum class PortSharing : std::uint8_t { fifo, fair };
  PortSharing l2_port_sharing = PortSharing::fifo;
  /// The most SMs a GPC holds (0: unknown). A thread-block cluster runs within one GPC, so a
  /// GPC holds only whole clusters: what persistent cluster kernels size their grid by.
  std::uint32_t max_sms_per_gpc = 0;
  /// The SMs of each GPC as the cluster scheduler sees them (empty: unknown). A cluster's blocks
  /// run on distinct SMs of one GPC, and wait until one GPC has room for all of them
  /// (measured: calibration/cluster_map_probe.sh).
  std::vector<std::vector<std::uint32_t>> gpcs;
  /// For each group of `gpcs`, the first group of the GPC it belongs to (`sm.gpcs_joined`: groups
  /// the cluster scheduler keeps apart that are one GPC to the L2's request coalescer); its own
  /// index when it is joined to none. Empty when nothing is joined.
  std::vector<std::uint32_t> gpc_of_group;
  /// How a block that is not part of a cluster picks its SM (`sm.placement`).
  /// `round_robin`: the next SM in index order after the last placement that has room.
  /// `gpc` (needs `gpcs`): the GPCs take turns, each giving an empty SM while it has one (the
  /// first SMs of its TPC pairs before the second), and once no GPC has an empty SM its
  /// least-occupied SM; what an idle H100 did with the FFN's producers (docs/validation.md,
  /// "Two measurements that locate what is left").
  /// `gpc_fill`: round-robin over the SMs in GPC order, the `gpcs` lists one after another and
  /// then the SMs none lists (without `gpcs`: index order), so consecutive blocks fill one GPC's
  /// SMs before the next GPC's: what the H100's and H200's schedulers do with a matmul's first
  /// wave (docs/validation.md, "Blocks fill a GPC, and a GPC sits next to one L2 half").
  enum class Placement : std::uint8_t { round_robin, gpc, gpc_fill };
  Placement placement = Placement::round_robin;
  /// Load bytes one SM may have in flight at once (its outstanding-request capacity); a step
  /// whose loads would exceed it waits for earlier loads to land. 0 = unlimited. With the
  /// latency it sees this caps one SM's throughput (Little's law): two DRAM-streaming blocks on
  /// one SM share it.
  std::uint64_t max_inflight_bytes = 0;
  /// The spread of one k-step's time on the SM (standard deviation, ns): each k-step's pipe
  /// work gets its own zero-mean deviation (uniform, drawn from a hash of kernel, block and
  /// step, so runs repeat), standing for what varies from step to step on the hardware: the
  /// L2 slice and DRAM bank each request meets, warp scheduling. Being independent per step,
  /// it lets blocks that share data drift apart as a random walk that their L2 hits and misses
  /// pull back, never the lasting offset a per-block factor gives (docs/architecture.md).
  double step_noise_ns = 0;
  /// The same spread for a block alone on its SM (negative: step_noise_ns). h100/h200 set 0:
  /// their lone blocks' steps vary through shared_step_noise_ns (docs/validation.md, "Shared
  /// step noise").
  double solo_step_noise_ns = -1;
  /// A second spread (standard deviation, ns), drawn from the tile a k-step loads last (B in a
  /// GEMM, V in attention) and that k-step, so every block loading that tile at that step
  /// shares it: variation in the delivery of shared data, which keeps the blocks that share a
  /// tile in step with each other while blocks sharing only their other operand drift apart,
  /// as the ends-only step stamps show (docs/validation.md, "Shared step noise"). Added to the
  /// per-block spread above, on one SM alone or not.
  double shared_step_noise_ns = 0;
  /// A semaphore check on a block's critical path: a load from L2 and a block barrier before the
  /// step's loads issue, satisfied or not (measured: 112 per-k-step checks cost a consumer 58 us).
  double sync_check_ns = 0;
  /// A post after a step's stores: a fence that waits for the stores to reach L2, then an atomic.
  double sync_post_ns = 0;
};

struct ComputeSpec {
  /// Dense MMA throughput per SM per clock, in FLOP (2 per multiply-add); 0 = unsupported.
  std::array<double, kNumDtypes> flops_per_cycle{};
  std::uint32_t mma_m = 16;       ///< MMA instruction granularity along M (64 for Hopper wgmma)
  std::uint32_t mma_n = 8;
  std::uint32_t mma_k_bytes = 32; ///< granularity along K in bytes of the A operand
  /// The main-loop kinds this arch runs, and the one a kernel gets unless its workload names one.
  std::array<MainLoopSpec, kNumMainLoops> mainloops{};
  MainLoop default_mainloop = MainLoop::mma_sync;
  /// Element operations per SM per clock on the FP32/INT lanes (the main loop's non-MMA work).
  double alu_ops_per_cycle = 128;
  AluWorkSpec alu_ops_per_element;

  const MainLoopSpec& mainloop(MainLoop k) const { return mainloops[static_cast<int>(k)]; }
  /// The efficiency a kernel of kind `k` runs at: its own `efficiency_override` when set (> 0),
  /// else this arch's figure for the kind and, where measured, for its block tile (`rows` x
  /// `cols` of output with `warps` warps; 0 when the kernel has no GEMM tile).
  double efficiency(MainLoop k, double efficiency_override, std::uint32_t rows = 0, std::uint32_t cols = 0,
                    std::uint32_t warps = 0) const {
    return efficiency_override > 0 ? efficiency_override : mainloop(k).efficiency_for(rows, cols, warps);
  }
  /// The kinds this arch runs, comma-separated (for error messages).
  std::string supported_mainloops() const;
};

struct L2Spec {
  std::uint64_t bytes = 0;        ///< total capacity, all partitions
  std::uint32_t partitions = 1;   ///< 2 on A100/H100: two halves joined by a fabric
  std::uint32_t line_bytes = 128;
  std::uint32_t sector_bytes = 32;
  /// What a read miss fetches: the aligned fill_bytes around each missed sector (measured 64 on
  /// the H100: a 32-byte read fetches its 64-byte half). A load's prefetch-size qualifier
  /// (cp.async.L2::128B: the workload's mainloop l2_prefetch) widens it. 0: one sector.
  std::uint32_t fill_bytes = 0;
  std::uint32_t ways = 16;
  std::string hash = "xor_fold";  ///< set-index hash: modulo | xor_fold | page_mix
  std::string replacement = "lru";
  bool far_copy = true;           ///< a far-half hit is also filled into the requester's near half
  /// The L2 request coalescer (Hopper's LRC, between the crossbar and the L2): a read of a tile
  /// rectangle issued within this many ns after another request for the same rectangle is
  /// merged into it: it is not looked up in the L2 and gets its data when the first does.
  /// Nsight Compute counts it as lrc__request_sectors_op_read_coalescing_achieved, and the
  /// lts__ counters exclude it. 0: no coalescer.
  double request_coalescing_ns = 0;
  /// The most requests one lookup of a load instruction carries, its own included, from this
  /// SM (a wrapped tile's repeated rows) or others; a request that finds the entry full is
  /// looked up and opens the next. Bulk copies (TMA) alike (measured: calibration/measurements/
  /// h100/lrc_share).
  /// 0: no limit.
  std::uint32_t request_coalescing_max = 0;
  /// A request stays open in the coalescer while it waits for its half's crossbar, so the
  /// window grows by that queue: in a crossbar-bound kernel more requests join it (measured:
  /// 27% of a 64x64 Triton matmul's reads merged on 4096^3, where a fixed window merges 8-13%:
  /// docs/validation.md, "The coalescer's window is its queue").
  bool request_coalescing_queue = false;
  /// The most of that queue a request waits in the coalescer: beyond it the queue backs up
  /// into the SMs, whose requests have not reached the coalescer (0: no bound).
  double request_coalescing_queue_max_ns = 0;
  /// Each GPC (sm.gpcs) has a coalescer of its own: only requests from SMs of one GPC merge
  /// (measured: two SMs of one GPC merge, two of different GPCs never, at any delay, in either
  /// L2 half: calibration/measurements/h200/lrc_delay/pairs). false, or no sm.gpcs: one for the
  /// GPU.
  bool request_coalescing_per_gpc = false;
  /// The coalescer's room, in lines (0: unbounded, the window alone decides). Every line a
  /// lookup through a coalescer brings in may replace an open entry of that coalescer: an entry
  /// still serves a request after n such lines with probability exp(-n / lines), so the window
  /// in time is long at light load and short under heavy traffic. (A trial key: no preset sets
  /// it; docs/validation.md, "A coalescer with room for so many lines".)
  double request_coalescing_lines = 0;
  double hit_latency_ns = 0;
  double far_extra_latency_ns = 0;  ///< added when data crosses the fabric
  /// Per half: sectors its tag arrays look up, from its own SMs and arriving over the fabric.
  double bandwidth_gbps = 0;
  /// Per half: sectors its crossbar carries to and from its own SMs, wherever they were looked
  /// up (0 = unlimited). A half's SMs cannot take data faster than this even when the
  /// lookups are split between the halves.
  double crossbar_bandwidth_gbps = 0;
  double fabric_bandwidth_gbps = 0;  ///< between the two halves (0 = unlimited)
  /// How long the data of a request waits on its way back to the SM, per TB/s that all SMs
  /// have requested over the last 2 us (0 = no such wait): the return path serves the SMs in
  /// turn, so the wait grows with the others' traffic long before the bandwidth limits bind
  /// (models/dram/rate_wait.hpp). Measured as one figure for the whole GPU, so one path here.
  double return_wait_ns_per_tbps = 0;
  /// The share of DRAM's current wait (its FCFS backlog and queueing wait) that a step's L2
  /// hits pay too (0 = none): hits queue at the slices behind misses waiting for DRAM (measured:
  /// calibration/measurements/h200/stage_latency, the `mix` sweep and the decode GEMM). A trial.
  double hit_wait_dram_share = 0;
  /// The share of its lines the L2 still holds dirty after a long write stream (do_bench's
  /// 256 MB flush: sim.l2_start write_flushed); the rest it has written back on its own.
  /// 1 (the default, an assumption): a plain write-back cache keeps every written line dirty.
  double write_flush_dirty_fraction = 1.0;
};

struct DramSpec {
  double bandwidth_gbps = 0;      ///< sustained read+write bandwidth
  double latency_ns = 0;          ///< unloaded latency beyond the L2 hit latency
  /// The queueing wait at half load: the latency grows by queue_latency_ns x rho / (1 - rho) with
  /// the recent utilisation rho (models/dram/dram_server.hpp). 0: a fixed latency.
  double queue_latency_ns = 0;
  /// The utilisation at which that growth stops (the controllers' queues are finite): the
  /// longest wait is queue_latency_ns x u / (1 - u).
  double queue_max_utilization = 0.9;
  /// The width of a fill's arrival spread, centred on the queue's time (uniform within half of
  /// it either side, from a hash of the requesting SM and the time): which channel, bank and row
  /// a request meets. 0: none.
  double fill_jitter_ns = 0;
  /// How much later than one line a step's misses of many lines are all in: a stage waits for
  /// its slowest line, spread over channels and banks (measured on the H200: a 16 KiB stage from
  /// DRAM 236 ns after one line at idle; calibration/measurements/h200/stage_latency/dram). A
  /// step of n lines waits (1 - 1/n) of it. 0 = none; a trial no preset sets.
  double stage_spread_ns = 0;
};

/// The board's power cap (models/power/power_clock.hpp, docs/archs.md "The SM clock under the
/// power cap"): a run whose draw at sm.clock_mhz exceeds the cap runs at the lower SM clock at
/// which it fits. The draw is the idle power plus energy per unit of work times its rate: tensor
/// FLOPs and L2 traffic in the SMs' voltage domain (their energy falls with the voltage, so with
/// the clock, as (f / f_max)^voltage_exponent), DRAM traffic in its own.
struct PowerSpec {
  double cap_w = 0;                ///< sustained board power under the cap; 0 = no power model (one clock)
  double idle_w = 0;               ///< drawn with the GPU idle
  double w_per_tflops = 0;         ///< per TFLOP/s of tensor work, at sm.clock_mhz
  double w_per_l2_tbps = 0;        ///< per TB/s of L2 lookups (sectors read and written), at sm.clock_mhz
  double w_per_dram_tbps = 0;      ///< per TB/s of DRAM reads and writes
  double voltage_exponent = 0;     ///< energy per operation scales as (f / f_max)^this
  double min_clock_mhz = 0;        ///< the clock never falls below this
  /// The controller's averaging time, ms: it lowers the clock once the draw, averaged as a
  /// first-order filter of this time constant from the idle draw, reaches the cap, so a load
  /// from an idle board runs at sm.clock_mhz for a while first (models/power/power_clock.hpp,
  /// boost_window_ms). 0: no such window (every run at the steady clock).
  double average_ms = 0;
  /// The most the board draws at any time, W: inside that window a load whose draw at
  /// sm.clock_mhz exceeds it runs at the clock where it fits (a fast limiter). 0: none.
  double peak_w = 0;

  bool enabled() const { return cap_w > 0; }
};

struct ArchSpec {
  std::string name;
  std::string description;
  SmSpec sm;
  ComputeSpec compute;
  L2Spec l2;
  DramSpec dram;
  PowerSpec power;

  double flops_per_cycle(Dtype d) const { return compute.flops_per_cycle[static_cast<int>(d)]; }
  bool supports(Dtype d) const { return flops_per_cycle(d) > 0; }
  /// Peak dense FLOP/s of the whole GPU for a dtype.
  double peak_flops(Dtype d) const { return flops_per_cycle(d) * sm.count * sm.clock_mhz * 1e6; }
};

/// Parses and validates an arch tree (errors name the node's file and path).
ArchSpec parse_arch(const ConfigNode& node);
/// Loads a preset by name or a YAML file by path, merges `overrides` (may be null) over it.
/// `origin` names the referring file in errors.
ArchSpec load_arch(const std::string& name_or_path, const YAML::Node& overrides, const std::string& origin);
/// The raw YAML of a preset, or an undefined node when there is none of that name.
YAML::Node arch_preset_yaml(const std::string& name);
std::vector<std::string> arch_preset_names();

}  // namespace tilesim
