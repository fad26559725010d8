// sm.l2_port_sharing: fair. Two blocks on one SM whose copies overlap share the SM's port
// (processor sharing): the first block's data lands late too, where first come first served
// lets it land at once and the second wait (Engine::share_port).
#include <catch2/catch.hpp>

#include "sim/core/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

// One SM with a port of a quarter byte a clock (0.25 GB/s at 1 GHz: a 128-byte line in 512 ns,
// longer than the toy DRAM miss's ~300 ns). Block 0 loads line 0 and computes 1000 ns; block 1
// (on the same SM, issued at the same instant) loads line 1 and computes 10 ns.
SimResult pair(SmSpec::PortSharing how, std::uint32_t blocks) {
  ArchSpec arch = toy_arch(1);
  arch.sm.l2_port_bytes_per_clk = 0.25;
  arch.sm.l2_port_sharing = how;
  Kernel k = toy_kernel(1);
  k.blocks_per_sm = 2;
  add_block(k, {0}, 1000000);
  if (blocks == 2) add_block(k, {64}, 10000);
  return simulate(one_kernel(k), arch, SimOptions{});
}

}  // namespace

TEST_CASE("port sharing: a second block's copy delays the first block's data under fair sharing only", "[sim]") {
  const SimResult lone_fifo = pair(SmSpec::PortSharing::fifo, 1);
  const SimResult lone_fair = pair(SmSpec::PortSharing::fair, 1);
  // A block alone on its SM is served alike either way: its line at 512 ns, then 1000 ns.
  CHECK(lone_fifo.kernels[0].duration() == lone_fair.kernels[0].duration());
  CHECK(lone_fifo.kernels[0].duration() >= 1512000);
  CHECK(lone_fifo.kernels[0].duration() <= 1513000);
  // fifo: block 0's line is through at 512 ns and block 1's at 1024; block 1's 10 ns share the
  // pipe with block 0's MMA, so the pair ends about 10 ns after the lone block.
  const SimResult fifo = pair(SmSpec::PortSharing::fifo, 2);
  CHECK(fifo.kernels[0].duration() >= 1512000);
  CHECK(fifo.kernels[0].duration() <= 1530000);
  // fair: the two lines are interleaved, so block 0's is through at 1024 ns as well: the pair
  // ends 512 ns later.
  const SimResult fair = pair(SmSpec::PortSharing::fair, 2);
  CHECK(fair.kernels[0].duration() >= 2024000);
  CHECK(fair.kernels[0].duration() <= 2040000);
  // The port moved the same bytes in the same total time.
  CHECK(fair.kernels[0].mem.read_sectors == fifo.kernels[0].mem.read_sectors);
}

namespace {

// Two blocks of one stage on one SM, 1 ps of pipe work per FLOP, behind the quarter-byte port
// above: block 0's line is through at 512 ns, then it computes 1000 ns; block 1's line is through
// at 1024 ns, so it waits for half of block 0's MMA.
SimResult hold_pair(double waiting_holds) {
  ArchSpec arch = toy_arch(1);
  arch.sm.l2_port_bytes_per_clk = 0.25;
  arch.compute.mainloops[static_cast<int>(MainLoop::mma_sync)].waiting_holds = waiting_holds;
  Kernel k = toy_kernel(1);
  k.blocks_per_sm = 2;
  add_block(k, {0}, 1000000);
  add_block(k, {64}, 10000);
  return simulate(one_kernel(k), arch, SimOptions{});
}

}  // namespace

TEST_CASE("waiting holds: a block waiting for its data keeps its warps' part of the pipe", "[sim]") {
  const SimResult free_pipe = hold_pair(0);
  const SimResult held = hold_pair(1);
  // Without the hold block 0 ends at about 1.52 us. With it, the two blocks having the same
  // threads, block 0 computes at half the rate from 512 to 1024 ns while block 1 waits: 256 ns
  // of its MMA are left over, so it ends about 256 ns later.
  CHECK(free_pipe.kernels[0].duration() >= 1512000);
  CHECK(free_pipe.kernels[0].duration() <= 1530000);
  const Time extra = held.kernels[0].duration() - free_pipe.kernels[0].duration();
  CHECK(extra >= 240000);
  CHECK(extra <= 270000);
  CHECK(held.kernels[0].mem.read_sectors == free_pipe.kernels[0].mem.read_sectors);
}

TEST_CASE("port clock: sm.l2_port_clock_mhz counts the port's bytes per clock at a clock of its own", "[sim]") {
  // The lone block above: its line through the quarter-byte port at 512 ns at the SM's 1 GHz;
  // when the port counts its clocks at 2 GHz (whatever the SM clock) it would take 256 ns, and
  // the toy DRAM miss's ~300 ns binds instead: about 210 ns sooner.
  ArchSpec arch = toy_arch(1);
  REQUIRE(arch.sm.clock_mhz == 1000);
  arch.sm.l2_port_bytes_per_clk = 0.25;
  CHECK(arch.sm.l2_port_mbps(1000) == Approx(250));
  Kernel k = toy_kernel(1);
  add_block(k, {0}, 1000000);
  const Time sm_clocked = simulate(one_kernel(k), arch, SimOptions{}).kernels[0].duration();
  arch.sm.l2_port_clock_mhz = 2000;
  CHECK(arch.sm.l2_port_mbps(1000) == Approx(500));
  CHECK(arch.sm.l2_port_mbps(1500) == Approx(500));
  const Time own_clock = simulate(one_kernel(k), arch, SimOptions{}).kernels[0].duration();
  CHECK(sm_clocked - own_clock >= 200000);
  CHECK(sm_clocked - own_clock <= 256000);
}

TEST_CASE("port rate: a main loop's l2_port_gbps is a fixed rate, its l2_port_factor follows the SM clock", "[sim]") {
  // The lone block: its line through the quarter-byte port (250 MB/s at 1 GHz) in 512 ns, then
  // 1000 clocks of MMA. l2_port_gbps 0.25 is the same rate at 1 GHz; at 500 MHz the MMA takes
  // 2 us either way, while the port counted in SM clocks halves (1024 ns) and the fixed one does not.
  ArchSpec arch = toy_arch(1);
  arch.sm.l2_port_bytes_per_clk = 0.25;
  MainLoopSpec& ml = arch.compute.mainloops[static_cast<int>(MainLoop::mma_sync)];
  Kernel k = toy_kernel(1);
  add_block(k, {0}, 1000000);
  const auto run = [&] { return simulate(one_kernel(k), arch, SimOptions{}).kernels[0].duration(); };
  const Time factor_1ghz = run();
  ml.l2_port_gbps = 0.25;
  CHECK(ml.port_factor(arch.sm.l2_port_mbps(1000)) == Approx(1.0));
  CHECK(run() == factor_1ghz);
  arch.sm.clock_mhz = 500;
  CHECK(ml.port_factor(arch.sm.l2_port_mbps(500)) == Approx(2.0));
  const Time fixed_500 = run();
  ml.l2_port_gbps = 0;
  const Time factor_500 = run();
  CHECK(factor_500 - fixed_500 >= 500000);
  CHECK(factor_500 - fixed_500 <= 530000);
  CHECK(fixed_500 - factor_1ghz >= 990000);  // the MMA's extra microsecond, the port's time unchanged
  CHECK(fixed_500 - factor_1ghz <= 1010000);
}
