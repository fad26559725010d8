#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <cmath>

#include "common/error.hpp"
#include "sim/core/simulator.hpp"
#include "sim/report/waves.hpp"
#include "sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::test;
using Catch::Matchers::Contains;


TEST_CASE("worked example: a miss, then a hit, one stage", "[sim]") {
  // Step 0 misses its line: L2 slice 0.5 ns + 100 ns, DRAM 1 ns + 300 ns -> data at 301 ns;
  // MMA 10000 FLOP = 10 ns -> 311 ns. With one stage, step 1 issues only then; it hits:
  // 311 + 0.5 + 100 = 411.5 ns, MMA until 421.5 ns. Duration 421.5 ns, 8 sectors read, 4 hit.
  Kernel k = toy_kernel(1);
  add_block(k, {0, 0}, 10000);
  const SimResult r = simulate(one_kernel(k), toy_arch(), SimOptions{});
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].duration() == 421500);
  CHECK(r.kernels[0].mem.read_sectors == 8);
  CHECK(r.kernels[0].mem.read_hit_sectors == 4);
  CHECK(r.kernels[0].mem.dram_read_bytes == 128);
}

TEST_CASE("worked example: a measured tile ceiling slows that tile's MMA only", "[sim]") {
  // As the miss-then-hit example (421.5 ns), but the arch measured blocks of 64 x 64 with 4
  // warps at half the peak: each 10 ns MMA takes 20 ns, 441.5 ns in all. A kernel of another
  // tile (or none) keeps the kind's efficiency.
  Kernel k = toy_kernel(1);
  add_block(k, {0, 0}, 10000);
  k.mma_tile_rows = 64;
  k.mma_tile_cols = 64;
  ArchSpec arch = toy_arch();
  arch.compute.mainloops[static_cast<int>(MainLoop::mma_sync)].tile_efficiency.push_back({64, 64, 4, 0.5});
  CHECK(simulate(one_kernel(k), arch, SimOptions{}).kernels[0].duration() == 441500);
  k.mma_tile_cols = 128;
  CHECK(simulate(one_kernel(k), arch, SimOptions{}).kernels[0].duration() == 421500);
  k.mma_tile_cols = 64;
  k.mainloop_efficiency = 1.0;  // the workload's own figure wins
  CHECK(simulate(one_kernel(k), arch, SimOptions{}).kernels[0].duration() == 421500);
}

TEST_CASE("worked example: a kernel's launch delays its first block by sm.kernel_launch_ns", "[sim]") {
  // The miss-then-hit example (421.5 ns) after a 1 us grid setup: 1421.5 ns from the launch.
  // Two such kernels on one stream each pay it: the second launches when the first ends.
  Kernel k = toy_kernel(1);
  add_block(k, {0, 0}, 10000);
  ArchSpec arch = toy_arch();
  arch.sm.kernel_launch_ns = 1000;
  const Workload w = one_kernel(k);
  const SimResult r = simulate(w, arch, SimOptions{});
  CHECK(r.kernels[0].duration() == 1421500);
  CHECK(r.blocks.at(0).start == 1000000);
  Workload two = w;
  two.kernels.push_back(two.kernels[0]);
  two.kernels[1].name = "toy2";
  validate_workload(two, "test");
  const SimResult t = simulate(two, arch, SimOptions{});
  CHECK(t.kernels[1].start == t.kernels[0].end);
  // The second finds both lines in L2: two 100.5 ns hits and two 10 ns MMAs after its setup.
  CHECK(t.kernels[1].duration() == 1000000 + 2 * 110500);
}

TEST_CASE("worked example: two stages overlap the second load with the first", "[sim]") {
  // Both steps issue at 0. Step 1 hits the line step 0 is still fetching, so it waits for that
  // fill (301 ns) instead of taking the 100.5 ns hit path. MMAs run 301-311 and 311-321 ns.
  Kernel k = toy_kernel(2);
  add_block(k, {0, 0}, 10000);
  const SimResult r = simulate(one_kernel(k), toy_arch(), SimOptions{});
  CHECK(r.kernels[0].duration() == 321000);
}

TEST_CASE("worked example: DRAM contention queues misses", "[sim]") {
  // Two steps missing different lines, both issued at 0 (2 stages): the DRAM server sends the
  // first line in 0-1 ns and the second in 1-2 ns, so data arrives at 301 and 302 ns. MMAs of
  // 1 ns each: 301-302, then 302-303. Duration 303 ns, 256 DRAM bytes.
  Kernel k = toy_kernel(2);
  add_block(k, {0, 64}, 1000);
  const SimResult r = simulate(one_kernel(k), toy_arch(), SimOptions{});
  CHECK(r.kernels[0].duration() == 303000);
  CHECK(r.kernels[0].mem.dram_read_bytes == 256);
}

TEST_CASE("blocks wait for a free slot", "[sim]") {
  // One SM with one slot: the second block starts when the first ends. Each block: one miss
  // (301 ns) and a 10 ns MMA. The second block's line is new: 311 + 301 + 10 = 622 ns.
  Kernel k = toy_kernel(1);
  add_block(k, {0}, 10000);
  add_block(k, {64}, 10000);
  const SimResult r = simulate(one_kernel(k), toy_arch(), SimOptions{});
  CHECK(r.kernels[0].duration() == 622000);
  CHECK(launch_waves(r.kernels[0], r.num_sms).waves == 2);
}

TEST_CASE("worked example: a kernel after do_bench's flush writes back the dirty line it evicts", "[sim]") {
  // sim.l2_start write_flushed: the toy L2 (32 lines) ends the 256 MiB write full of the
  // stream's lines, all dirty at the default write_flush_dirty_fraction of 1. The block's miss
  // evicts one: DRAM moves the 128 B read and the 128 B write-back, 2 ns instead of 1, so the
  // data is there at 302 ns (not 301) and the 10 ns MMA ends at 312 ns. The write-back is the
  // flush's, not the workload's: start_writeback_bytes, not dram_write_bytes; the 31 dirty
  // lines written back when the GPU goes idle delay nothing and count for no kernel.
  Kernel k = toy_kernel(1);
  add_block(k, {0}, 10000);
  const Workload w = one_kernel(k);
  SimOptions flushed;
  flushed.l2_start = SimOptions::L2Start::write_flushed;
  const SimResult r = simulate(w, toy_arch(), flushed);
  CHECK(r.kernels[0].duration() == 312000);
  CHECK(r.kernels[0].start_writeback_bytes == 128);
  CHECK(r.kernels[0].mem.dram_write_bytes == 0);
  CHECK(r.kernels[0].mem.dram_read_bytes == 128);
  // With none of its lines left dirty, the flushed L2 is as fast as an empty one: 311 ns.
  ArchSpec clean = toy_arch();
  clean.l2.write_flush_dirty_fraction = 0;
  const SimResult c = simulate(w, clean, flushed);
  CHECK(c.kernels[0].duration() == 311000);
  CHECK(c.kernels[0].start_writeback_bytes == 0);
  // Per kernel (Nsight Compute's condition), every launch starts from the flushed L2 again.
  Workload two = w;
  two.kernels.push_back(two.kernels[0]);
  two.kernels[1].name = "toy2";
  validate_workload(two, "test");
  flushed.cold_l2 = SimOptions::ColdL2::per_kernel;
  const SimResult p = simulate(two, toy_arch(), flushed);
  CHECK(p.kernels[0].start_writeback_bytes == 128);
  CHECK(p.kernels[1].start_writeback_bytes == 128);
}

TEST_CASE("stores are written back at the kernel's end", "[sim]") {
  Kernel k = toy_kernel(1);
  add_block(k, {0}, 1000);
  k.accesses.push_back({0, 0, 0, 128, 1, 64, AccessKind::store});
  k.steps.back().num_accesses = 2;
  const Workload w = one_kernel(k);
  SimResult r = simulate(w, toy_arch(), SimOptions{});
  CHECK(r.kernels[0].mem.write_sectors == 4);
  CHECK(r.kernels[0].mem.dram_write_bytes == 128);
  SimOptions keep;
  keep.writeback_at_end = false;
  r = simulate(w, toy_arch(), keep);
  CHECK(r.kernels[0].mem.dram_write_bytes == 0);
}

TEST_CASE("semaphores order blocks, an impossible wait is a deadlock", "[sim]") {
  // Block 0 waits for semaphore 0, which block 1 posts after its step.
  Kernel k = toy_kernel(1);
  add_block(k, {0}, 1000);
  add_block(k, {64}, 1000);
  k.steps[0].wait_sem = 0;
  k.steps[0].wait_value = 1;
  k.steps[1].post_sem = 0;
  k.blocks_per_sm = 2;  // both resident: block 0 spins until block 1 posts
  Workload w = one_kernel(k, 1024, 1);
  const SimResult r = simulate(w, toy_arch(), SimOptions{});
  REQUIRE(r.blocks.size() == 2);
  const BlockRecord& waiter = r.blocks[0].block == 0 ? r.blocks[0] : r.blocks[1];
  const BlockRecord& poster = r.blocks[0].block == 0 ? r.blocks[1] : r.blocks[0];
  // The order: block 0 cannot finish before block 1 has posted, it spent time waiting, and
  // block 1 did not.
  CHECK(waiter.block == 0);
  CHECK(poster.block == 1);
  CHECK(waiter.end > poster.start);
  CHECK(waiter.wait > 0);
  CHECK(poster.wait == 0);
  // Without the wait, block 0 finishes no later than block 1 (same work, dispatched first).
  Workload free = w;
  free.kernels[0].steps[0].wait_sem = kNoSem;
  const SimResult f = simulate(free, toy_arch(), SimOptions{});
  REQUIRE(f.blocks.size() == 2);
  const Time free_end0 = f.blocks[0].block == 0 ? f.blocks[0].end : f.blocks[1].end;
  CHECK(waiter.end > free_end0);
  // With one slot, block 0 holds it forever while block 1 is never dispatched: the check
  // before simulating replays the dispatch order against the slots and says so.
  w.kernels[0].blocks_per_sm = 1;
  REQUIRE_THROWS_AS(simulate(w, toy_arch(), SimOptions{}), DeadlockError);
  REQUIRE_THROWS_WITH(simulate(w, toy_arch(), SimOptions{}),
                      Contains("cannot make progress with 1 resident blocks") && Contains("block 0") &&
                          Contains("semaphore 0"));
}

TEST_CASE("a cycle of waits is found before simulating", "[sim]") {
  // Block 0 waits for semaphore 0, which block 1 posts; block 1 waits for 1, which block 0 posts.
  Kernel k = toy_kernel(1);
  add_block(k, {0}, 1000);
  add_block(k, {64}, 1000);
  k.steps[0].wait_sem = 0;
  k.steps[0].wait_value = 1;
  k.steps[0].post_sem = 1;
  k.steps[1].wait_sem = 1;
  k.steps[1].wait_value = 1;
  k.steps[1].post_sem = 0;
  k.blocks_per_sm = 2;
  REQUIRE_THROWS_WITH(simulate(one_kernel(k, 1024, 2), toy_arch(), SimOptions{}),
                      Contains("cyclic dependencies") && Contains("cycle of 2 blocks"));
}

TEST_CASE("a deadlock across streams is caught while simulating", "[sim]") {
  // Kernel 0 (stream 0) launches first and fills the only slot with a block waiting for a
  // semaphore that kernel 1 (stream 1) posts; kernel 1's block can never get a slot. The check
  // before simulating assumes other kernels' posts come, so the engine must find this itself.
  Kernel waiter = toy_kernel(1);
  add_block(waiter, {0}, 1000);
  waiter.steps[0].wait_sem = 0;
  waiter.steps[0].wait_value = 1;
  Kernel poster = toy_kernel(1);
  poster.name = "poster";
  poster.stream = 1;
  add_block(poster, {64}, 1000);
  poster.steps[0].post_sem = 0;
  Workload w;
  w.name = "two streams";
  w.num_semaphores = 1;
  w.tensors.push_back(row_tensor("T", 1024, Addr{1} << 30));
  for (Kernel* k : {&waiter, &poster}) {
    k->grid_n = 1;
    k->dispatch = {0};
  }
  w.kernels = {waiter, poster};
  ArchSpec one_slot = toy_arch();
  one_slot.sm.max_blocks = 1;  // the SM holds one block of any kernel
  REQUIRE_THROWS_WITH(simulate(w, one_slot, SimOptions{}),
                      Contains("block 0 of kernel 'toy'") && Contains("posted by block 0 of kernel 'poster'") &&
                          Contains("not dispatched"));
  // Given two slots, both run and the waiter finishes after the poster's post.
  const SimResult r = simulate(w, toy_arch(), SimOptions{});
  CHECK(r.kernels[0].wait_ps > 0);
  CHECK(r.kernels[0].end > r.kernels[1].end - 1);
}

TEST_CASE("a dtype the arch lacks is refused", "[sim]") {
  Kernel k = toy_kernel(1);
  add_block(k, {0}, 1000);
  k.compute_dtype = Dtype::fp8;
  REQUIRE_THROWS_WITH(simulate(one_kernel(k), toy_arch(), SimOptions{}), Contains("fp8 is not supported"));
}

TEST_CASE("the checks before simulating follow step order: post-then-wait blocks are fine", "[sim]") {
  // Two slots. Block 0 posts semaphore 0 at step 0, then waits for semaphore 1 at step 1;
  // block 1 waits for 0; block 2 posts 1. Dispatched 0, 1, 2: block 0's early post lets block 1
  // finish, which frees a slot for block 2, whose post lets block 0 finish. A block-level check
  // (posts counted only when a block finishes) would wrongly call this a deadlock.
  Kernel k = toy_kernel(1);
  add_block(k, {0, 64}, 1000);
  add_block(k, {128}, 1000);
  add_block(k, {192}, 1000);
  k.steps[0].post_sem = 0;
  k.steps[1].wait_sem = 1;
  k.steps[1].wait_value = 1;
  k.steps[2].wait_sem = 0;
  k.steps[2].wait_value = 1;
  k.steps[3].post_sem = 1;
  k.blocks_per_sm = 2;
  const SimResult r = simulate(one_kernel(k, 1024, 2), toy_arch(), SimOptions{});
  CHECK(r.kernels[0].blocks == 3);
  CHECK(r.blocks.size() == 3);
}

namespace {

// One block of 400 compute-bound steps (8 stages; each step re-reads one line, a hit after the
// first) of 1e6 FLOP: 1 us of MMA per step on the toy arch.
Kernel compute_bound_block() {
  Kernel k = toy_kernel(8);
  Block b;
  for (std::uint32_t i = 0; i < 400; ++i) {
    Step s;
    s.first_access = static_cast<std::uint32_t>(k.accesses.size());
    k.accesses.push_back({0, 0, 0, 0, 1, 64, AccessKind::load});
    s.num_accesses = 1;
    s.flops = 1000000;
    k.steps.push_back(s);
  }
  b.num_steps = 400;
  k.blocks.push_back(b);
  return k;
}

}  // namespace

TEST_CASE("step noise: each k-step moves by its own deviation, the same in every run, zero on average", "[sim]") {
  // One block of 400 compute-bound steps (8 stages: each step's line, a hit after the first, is
  // there long before its MMA starts) at 1000 FLOP/clk and 1 GHz: 1e6 FLOP = 1 us of MMA per
  // step. With sm.step_noise_ns 20 each step's MMA moves by a uniform deviation of standard
  // deviation 20 ns, so the block's sum moves by about 20 x sqrt(400) = 400 ns around 400 us:
  // within 0.5% of the noise-free run, yet different from it; and the same draws every run.
  const Kernel k = compute_bound_block();
  ArchSpec quiet = toy_arch();
  ArchSpec noisy = toy_arch();
  noisy.sm.step_noise_ns = 20;
  const Time t0 = simulate(one_kernel(k), quiet, SimOptions{}).kernels[0].duration();
  const Time t1 = simulate(one_kernel(k), noisy, SimOptions{}).kernels[0].duration();
  const Time t2 = simulate(one_kernel(k), noisy, SimOptions{}).kernels[0].duration();
  CHECK(t1 == t2);
  CHECK(std::abs(static_cast<double>(t1 - t0)) < 0.005 * static_cast<double>(t0));
  CHECK(std::abs(static_cast<double>(t1 - t0)) > 10 * kPsPerNs);  // it did move
}

TEST_CASE("step noise: a block alone on its SM takes sm.solo_step_noise_ns instead", "[sim]") {
  // The 400-step block of the test above, alone on its SM: with solo_step_noise_ns 0 it runs
  // exactly as without noise, whatever step_noise_ns says; unset, it takes step_noise_ns.
  const Kernel k = compute_bound_block();
  ArchSpec noisy = toy_arch();
  noisy.sm.step_noise_ns = 20;
  ArchSpec solo_quiet = noisy;
  solo_quiet.sm.solo_step_noise_ns = 0;
  const Time t0 = simulate(one_kernel(k), toy_arch(), SimOptions{}).kernels[0].duration();
  CHECK(simulate(one_kernel(k), solo_quiet, SimOptions{}).kernels[0].duration() == t0);
  CHECK(simulate(one_kernel(k), noisy, SimOptions{}).kernels[0].duration() != t0);
}

namespace {

// Three blocks of 400 compute-bound steps (1 us of MMA each), one per SM. Each step loads its
// block's own tile, then a second tile, loaded last: blocks 0 and 1 load the same second tile at
// each step, block 2 its own.
Workload shared_tile_blocks() {
  Kernel k = toy_kernel(8);
  for (std::uint32_t b = 0; b < 3; ++b) {
    Block blk;
    blk.first_step = static_cast<std::uint32_t>(k.steps.size());
    for (std::uint32_t i = 0; i < 400; ++i) {
      Step s;
      s.first_access = static_cast<std::uint32_t>(k.accesses.size());
      k.accesses.push_back({0, 0, 0, (b * 400 + i % 8) * 64, 1, 64, AccessKind::load});
      k.accesses.push_back({0, 0, 0, ((b == 2 ? 2000 : 1000) + i % 16) * 64, 1, 64, AccessKind::load});
      s.num_accesses = 2;
      s.flops = 1000000;
      k.steps.push_back(s);
    }
    blk.num_steps = 400;
    k.blocks.push_back(blk);
  }
  return one_kernel(k, 1 << 20);
}

}  // namespace

TEST_CASE("shared step noise: blocks that load the same tile last share its deviation", "[sim]") {
  // sm.shared_step_noise_ns 20 draws each step's deviation from the tile it loads last: blocks 0
  // and 1 move alike (they end within the few ns their first loads' arrival differs by), block
  // 2 by its own draws. Per-block noise of the same spread moves blocks 0 and 1 apart.
  const auto ends = [](const ArchSpec& arch) {
    const SimResult r = simulate(shared_tile_blocks(), arch, SimOptions{});
    std::array<double, 3> e{};
    for (const BlockRecord& b : r.blocks) e.at(b.block) = static_cast<double>(b.end) / kPsPerNs;
    return e;
  };
  const auto quiet = ends(toy_arch(3));
  ArchSpec shared = toy_arch(3);
  shared.sm.shared_step_noise_ns = 20;
  const auto s = ends(shared);
  CHECK(std::abs(s[0] - s[1]) < std::abs(quiet[0] - quiet[1]) + 5);
  CHECK(std::abs(s[0] - s[2]) > std::abs(quiet[0] - quiet[2]) + 20);
  CHECK(std::abs(s[0] - quiet[0]) > 20);  // it did move
  ArchSpec own = toy_arch(3);
  own.sm.step_noise_ns = 20;
  const auto o = ends(own);
  CHECK(std::abs(o[0] - o[1]) > std::abs(quiet[0] - quiet[1]) + 20);
}

TEST_CASE("dispatch rule: oldest kernel first, or one block of each waiting kernel in turn", "[sim]") {
  // Two kernels on two streams, four one-step blocks each, on one SM that a block of either
  // fills (shared memory): the blocks run one at a time, so their start times give the order.
  Kernel a = toy_kernel(1), b = toy_kernel(1);
  a.name = "a";
  b.name = "b";
  a.resources.smem_bytes = b.resources.smem_bytes = 200000;  // of the SM's 233472: one block at a time
  for (int i = 0; i < 4; ++i) {
    add_block(a, {static_cast<std::uint32_t>(64 * i)}, 1000);
    add_block(b, {static_cast<std::uint32_t>(64 * i)}, 1000);
  }
  Workload w = one_kernel(a);
  b.stream = 1;
  b.grid_n = b.num_blocks();
  for (std::uint32_t i = 0; i < b.num_blocks(); ++i) b.dispatch.push_back(i);
  w.kernels.push_back(b);
  const auto order = [&](SimOptions::Dispatch rule) {
    SimOptions o;
    o.dispatch = rule;
    const SimResult r = simulate(w, toy_arch(1), o);
    std::vector<std::pair<Time, std::uint32_t>> starts;
    for (const BlockRecord& rec : r.blocks) starts.emplace_back(rec.start, rec.kernel);
    std::sort(starts.begin(), starts.end());
    std::string s;
    for (const auto& [t, k] : starts) s += k ? 'b' : 'a';
    return s;
  };
  // The hardware's rule as observed: the first-launched kernel's blocks take free slots first.
  CHECK(order(SimOptions::Dispatch::oldest_kernel) == "aaaabbbb");
  // round_robin: a block of each waiting kernel in turn.
  CHECK(order(SimOptions::Dispatch::round_robin) == "abababab");
}

namespace {

// The toy arch under a power cap: 1 W idle, 18 W per TFLOP/s, a 10 W cap.
ArchSpec capped_toy_arch() {
  ArchSpec a = toy_arch();
  a.power.cap_w = 10;
  a.power.idle_w = 1;
  a.power.w_per_tflops = 18;
  a.power.min_clock_mhz = 100;
  return a;
}

// One block of eight compute-bound steps: 1 TFLOP/s at the toy's 1000 MHz, 19 W under
// capped_toy_arch().
Workload one_tflops_workload() {
  Kernel k = toy_kernel(2);
  add_block(k, {0, 0, 0, 0, 0, 0, 0, 0}, 2000000);
  k.total_flops = 8 * 2000000;
  return one_kernel(k);
}

}  // namespace

TEST_CASE("power cap: a run that would draw more than the cap runs at a lower clock", "[sim][power]") {
  // One toy SM, compute-bound: 1 TFLOP/s at its 1000 MHz draws 1 + 18 = 19 W against a 10 W
  // cap, so the clock falls to where the draw is 10 W (about half, less the time the steps
  // wait on memory, which does not scale with the clock).
  const Workload w = one_tflops_workload();
  const SimResult fixed = simulate(w, toy_arch(), SimOptions{});
  CHECK(fixed.sm_clock_mhz == 1000);
  CHECK(fixed.power_w == 0);
  ArchSpec capped = capped_toy_arch();
  const SimResult r = simulate(w, capped, SimOptions{});
  CHECK(r.sm_clock_mhz < 600);
  CHECK(r.sm_clock_mhz > 450);
  CHECK(r.power_w == Approx(10).epsilon(0.02));
  CHECK(r.duration > fixed.duration * 1.6);
  // Bit for bit the same on a second run.
  const SimResult again = simulate(w, capped, SimOptions{});
  CHECK(again.duration == r.duration);
  CHECK(again.sm_clock_mhz == r.sm_clock_mhz);
}

TEST_CASE("power cap under sim.timing: a harness from idle times the boost clock until the window closes", "[sim][power]") {
  // The compute-bound toy run of the test above: 19 W at its 1000 MHz boost against a 10 W cap,
  // about 16 us a launch at the boost clock.
  const Workload w = one_tflops_workload();
  ArchSpec capped = capped_toy_arch();
  const SimResult steady = simulate(w, capped, SimOptions{});
  CHECK(steady.boost_launches == -1);
  // An averaging time of 1 ms: the window is ln(18 / 9) ms, about 0.69 ms, some 40 launches.
  capped.power.average_ms = 1;
  SimOptions harness;
  harness.timing.kind = SimOptions::Timing::Kind::launches;
  harness.timing.warmup = 3;
  harness.timing.launches = 20;
  const SimResult fast = simulate(w, capped, harness);
  CHECK(fast.sm_clock_mhz == 1000);
  CHECK(fast.boost_launches == 20);
  CHECK(fast.boost_window_ms == Approx(std::log(2.0)).epsilon(0.05));
  CHECK(fast.duration < steady.duration / 1.6);
  // 40 warm-ups leave fewer than half of the timed launches in the window: the steady clock.
  harness.timing.warmup = 40;
  const SimResult late = simulate(w, capped, harness);
  CHECK(late.boost_launches > 0);
  CHECK(late.boost_launches <= 10);
  CHECK(late.sm_clock_mhz == steady.sm_clock_mhz);
  CHECK(late.duration == steady.duration);
  // A fast limit inside the window: the boosted launches run where the draw meets it, 15 W,
  // between the boost clock and the steady one.
  capped.power.peak_w = 15;
  harness.timing.warmup = 3;
  const SimResult limited = simulate(w, capped, harness);
  CHECK(limited.boost_launches == 20);
  CHECK(limited.power_w == Approx(15).epsilon(0.03));
  CHECK(limited.sm_clock_mhz < 1000);
  CHECK(limited.sm_clock_mhz > steady.sm_clock_mhz);
  CHECK(limited.duration > fast.duration);
  CHECK(limited.duration < steady.duration);
  capped.power.peak_w = 0;
  // Without an averaging time the cap binds from the first launch.
  capped.power.average_ms = 0;
  harness.timing.warmup = 0;
  const SimResult none = simulate(w, capped, harness);
  CHECK(none.boost_launches == 0);
  CHECK(none.duration == steady.duration);
}

TEST_CASE("power cap with many waves: a prefix run guesses the clock, whole runs settle it", "[sim][power]") {
  // 64 compute-bound blocks on one toy SM (64 waves: a prefix stands for the whole).
  Kernel k = toy_kernel(2);
  for (int b = 0; b < 64; ++b) add_block(k, {0, 0, 0, 0}, 2000000);
  k.total_flops = 64ull * 4 * 2000000;
  const Workload w = one_kernel(k);
  ArchSpec capped = capped_toy_arch();
  // A prefix run dispatches the leading quarter and counts a quarter of the work.
  SimOptions quarter;
  quarter.dispatch_fraction = 0.25;
  const SimResult part = simulate(w, toy_arch(), quarter);
  CHECK(part.blocks.size() == 16);
  CHECK(part.kernels.at(0).flops == k.total_flops / 4);
  // The capped run is whole, meets the cap, and counts every dispatch once for progress.
  std::atomic<std::uint64_t> dispatched{0};
  SimOptions o;
  o.dispatched_blocks = &dispatched;
  const SimResult r = simulate(w, capped, o);
  CHECK(r.blocks.size() == 64);
  CHECK(r.power_w == Approx(10).epsilon(0.02));
  CHECK(dispatched.load() == 64);
  CHECK(r.sm_clock_mhz < 600);
}
