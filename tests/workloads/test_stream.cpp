// The stream generator (calibration/kernels/l2_stream.cu): block/step structure and chunk
// mapping, bytes read, config errors, dispatch order, and end-to-end L2 hit rates for a buffer
// that fits the L2 and one that is four times its size.
#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "models/occupancy.hpp"
#include "sim/config/experiment.hpp"
#include "sim/core/simulator.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

Experiment load(const std::string& workload, const std::string& extra = "") {
  return load_experiment_text("arch: h100\nworkload: " + workload + "\n" + extra, "exp.yaml", ".", {});
}
/// A copy, so that `const Workload& w = workload_of(load(...))` outlives the experiment.
Workload workload_of(const Experiment& e) { return *e.points.at(0).workload; }

/// The accesses of block b's step i.
std::vector<TileAccess> accesses_of(const Kernel& k, std::uint32_t b, std::uint32_t i) {
  const Step& s = k.steps.at(k.blocks.at(b).first_step + i);
  return {k.accesses.begin() + s.first_access, k.accesses.begin() + s.first_access + s.num_accesses};
}

std::uint64_t bytes_loaded(const Workload& w) {
  std::uint64_t sum = 0;
  for (const Kernel& k : w.kernels)
    for (const TileAccess& a : k.accesses)
      if (a.kind == AccessKind::load) sum += std::uint64_t{a.rows} * a.cols * w.tensors[a.tensor].elem_bits / 8;
  return sum;
}

// h100 with a 1 MiB, single-partition L2 indexed by plain modulo with LRU: 8192 lines of 128 B
// in 512 sets of 16 ways. Line l of the buffer (based at 1 GiB, 2 MiB aligned) goes to set
// l mod 512, so every 64 KiB chunk (512 lines) puts exactly one line in each set.
// The worked examples count L2 lookups, so the request coalescer is off (its own example below).
const std::string kSmallL2 =
    "arch_overrides: {l2: {bytes: 1048576, partitions: 1, far_copy: false, hash: modulo, replacement: lru, "
    "request_coalescing_ns: 0}}\n";

}  // namespace

TEST_CASE("stream: passes x nchunks blocks, block p reads chunk p mod nchunks in 16 x threads byte loads", "[stream]") {
  // 16 KiB in 8 KiB chunks, 3 passes: 2 chunks, 6 blocks. At 256 threads a load instruction of the
  // block reads 4 KiB, so each block has 2 load steps and a store step.
  const Workload& w = workload_of(load("{kind: stream, bytes: 16384, chunk_bytes: 8192, passes: 3}"));
  REQUIRE(w.kernels.size() == 1);
  REQUIRE(w.tensors.size() == 2);
  const Tensor &buf = w.tensors[0], &out = w.tensors[1];
  CHECK(buf.name == "buf");
  CHECK(buf.rows == 2);  // one row per chunk
  CHECK(buf.cols == 8192);
  CHECK(buf.elem_bits == 8);
  CHECK(buf.footprint() == 16384);
  CHECK(out.name == "out");
  CHECK(out.cols == 6);  // one uint32 per block
  CHECK(out.elem_bits == 32);
  CHECK(out.base >= buf.base + buf.footprint());

  const Kernel& k = w.kernels[0];
  CHECK(k.name == "stream");
  CHECK(k.grid_m == 1);
  CHECK(k.grid_n == 6);
  CHECK(k.grid_z == 1);
  CHECK(k.num_blocks() == 6);
  CHECK(k.steps.size() == 6 * 3);
  CHECK(k.stages == 3);  // every step of a block in flight at once
  CHECK(k.total_flops == 0);
  for (const Step& s : k.steps) CHECK(s.flops == 0);
  CHECK(k.resources == BlockResources{256, 30, 32});
  CHECK(k.dispatch == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
  // Chunks 0, 1, 0, 1, 0, 1.
  for (std::uint32_t p = 0; p < 6; ++p) {
    INFO("block " << p);
    CHECK(k.blocks[p].tile_n == p);
    CHECK(accesses_of(k, p, 0) == std::vector<TileAccess>{{0, 0, p % 2, 0, 1, 4096, AccessKind::load}});
    CHECK(accesses_of(k, p, 1) == std::vector<TileAccess>{{0, 0, p % 2, 4096, 1, 4096, AccessKind::load}});
    CHECK(accesses_of(k, p, 2) == std::vector<TileAccess>{{1, 0, 0, p, 1, 1, AccessKind::store}});
  }
  CHECK(bytes_loaded(w) == 3 * 16384);

  // h100: 30 x 32 registers round up to 1024 per warp, 8 warps per block: 65536 / 8192 = 8 blocks,
  // as Nsight Compute reported (launch__occupancy_limit_registers = 8).
  const Occupancy occ = compute_occupancy(load("{kind: stream, bytes: 65536, passes: 1}").points[0].arch,
                                          k.resources, 0, "test");
  CHECK(occ.blocks_per_sm == 8);
  CHECK(occ.limit == "registers");
}

TEST_CASE("stream: a chunk that is not a multiple of the block's load ends in a partial load", "[stream]") {
  // 4128 = 4096 + 32 bytes: at 256 threads, one full 4 KiB load and one of 32 bytes. At 64
  // threads a load instruction reads 1 KiB: 5 loads, the last of 32 bytes.
  const Kernel k = workload_of(load("{kind: stream, bytes: 8256, chunk_bytes: 4128, passes: 2}")).kernels[0];
  CHECK(k.num_blocks() == 4);
  CHECK(k.blocks[3].num_steps == 3);
  CHECK(accesses_of(k, 3, 1) == std::vector<TileAccess>{{0, 0, 1, 4096, 1, 32, AccessKind::load}});
  const Workload& w64 = workload_of(load("{kind: stream, bytes: 8256, chunk_bytes: 4128, passes: 2, threads: 64}"));
  const Kernel& k64 = w64.kernels[0];
  CHECK(k64.stages == 6);
  CHECK(k64.resources.smem_bytes == 8);  // 4 bytes per warp
  CHECK(accesses_of(k64, 2, 4) == std::vector<TileAccess>{{0, 0, 0, 4096, 1, 32, AccessKind::load}});
  CHECK(bytes_loaded(w64) == 2 * 8256);
}

TEST_CASE("stream: a 1-D grid is dispatched in block-index order", "[stream]") {
  const std::string wl = "{kind: stream, bytes: 24576, chunk_bytes: 4096, passes: 1}";  // 6 blocks
  const std::vector<std::uint32_t> index_order{0, 1, 2, 3, 4, 5};
  CHECK(workload_of(load(wl)).kernels[0].dispatch == index_order);
  for (const char* o : {"{kind: row}", "{kind: column}", "{kind: hilbert}", "{kind: grouped, group_m: 4}"}) {
    INFO(o);
    CHECK(workload_of(load(wl, std::string("order: ") + o + "\n")).kernels[0].dispatch == index_order);
  }
  // CUTLASS's swizzle pads the 1 x 6 grid to 4 x 2: index order, then two early exits.
  CHECK(workload_of(load(wl, "order: {kind: swizzle, log_tile: 2}\n")).kernels[0].dispatch ==
        std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, kNoBlock, kNoBlock});
}

TEST_CASE("stream: bad keys and values are errors naming the key", "[stream][errors]") {
  REQUIRE_THROWS_WITH(load("{kind: stream, passes: 1}"), Contains("exp.yaml: workload.bytes") && Contains("missing"));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 0, passes: 1}"), Contains("workload.bytes") && Contains("[1, "));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 100000, passes: 1}"),
                      Contains("workload.bytes") && Contains("not a multiple of chunk_bytes (65536)"));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 65536}"), Contains("workload.passes") && Contains("missing"));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 65536, passes: 0}"), Contains("workload.passes") && Contains("[1, "));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 65536, passes: 1, chunk_bytes: 0}"),
                      Contains("workload.chunk_bytes") && Contains("[1, "));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 65600, passes: 1, chunk_bytes: 100}"),
                      Contains("workload.chunk_bytes") && Contains("multiple of h100's 32-byte L2 sector"));
  // 512 KiB at 256 threads is 128 16-byte loads per thread; l2_stream.cu stops at 64 (256 KiB).
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 1048576, passes: 1, chunk_bytes: 524288}"),
                      Contains("workload.chunk_bytes") && Contains("at most 64") && Contains("262144"));
  // 1 GiB in 4 KiB chunks is 262144 blocks a pass; 17 passes are 4456448 > 2^22 blocks.
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 1 GiB, chunk_bytes: 4096, passes: 17}"),
                      Contains("workload.passes") && Contains("4456448 blocks") && Contains("limit of 4194304"));
  // 256 KiB chunks: 4096 a pass of 64 loads each; 129 passes are 528384 x 64 = 33816576 > 2^25 load steps.
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 1 GiB, chunk_bytes: 262144, passes: 129}"),
                      Contains("workload.passes") && Contains("33816576 load steps") && Contains("33554432"));
  // One pass of too many chunks: the chunk is too small.
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 1 GiB, chunk_bytes: 32, passes: 1}"),
                      Contains("workload.chunk_bytes") && Contains("33554432 blocks"));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 65536, passes: 1, threads: 2048}"), Contains("workload.threads"));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 65536, passes: 1, registers_per_thread: 300}"),
                      Contains("workload.registers_per_thread"));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 65536, passes: 1, shared_memory_bytes: 1 MiB}"),
                      Contains("workload.shared_memory_bytes") && Contains("exceeds h100's limit"));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 65536, passes: 1, blocks_per_sm: 9}"),
                      Contains("workload.blocks_per_sm") && Contains("exceeds the 8"));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 65536, passes: 1, dtype: fp16}"),
                      Contains("workload.dtype") && Contains("unknown key"));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 65536, passes: 1}", "sync: {kind: rowsync}"), Contains("sync.kind"));
  REQUIRE_THROWS_WITH(load_experiment_text("arch: h100\nworkload:\n  kind: stream\n  bytes: 65536\n  passes: -2\n",
                                           "exp.yaml", ".", {}),
                      Contains("workload.passes (line 5)"));
}

TEST_CASE("stream on h100 with a 1 MiB L2: a buffer that fits hits on every pass after the first", "[stream][sim]") {
  // 256 KiB (4 chunks) x 8 passes = 32 blocks, all resident at once (132 SMs x 8) and placed in
  // index order, each issuing all its loads on placement. The buffer's 2048 lines take 4 ways of
  // each set and `out` (32 x 4 B, one line at a 2 MiB boundary) one more in set 0: nothing is
  // evicted. The L2 model updates its tags when a load is issued (a later read of a line still
  // being filled is a hit that waits for the fill), so exactly the first pass misses:
  //   reads 8 x 8192 sectors, read hits 7 x 8192 = 57344, read hit rate 7/8 exactly.
  // hit_rate also counts the 32 one-sector stores of `out`, hit or not: at worst it is
  //   57344 / (65536 + 32) = 0.874573 = 7/8 - 0.000427, hence the 0.0005 margin.
  const Experiment e = load("{kind: stream, bytes: 256 KiB, passes: 8}", kSmallL2);
  const ExperimentPoint& p = e.points.at(0);
  const SimResult r = simulate(*p.workload, p.arch, p.options);
  REQUIRE(r.kernels.size() == 1);
  const MemCounters& m = r.kernels[0].mem;
  CHECK(m.read_sectors * 32 == 8 * 256 * 1024);  // the bytes requested: passes x bytes
  CHECK(m.read_hit_sectors == 7 * 8192);
  CHECK(m.read_hit_rate() == Approx(7.0 / 8.0).epsilon(1e-12));
  CHECK(m.write_sectors == 32);
  CHECK(m.hit_rate() >= 7.0 / 8.0 - 0.0005);
  CHECK(m.hit_rate() <= 7.0 / 8.0 + 0.0005);
  CHECK(r.kernels[0].tensors[0].mem.dram_read_bytes == 256 * 1024);  // buf fetched once
  CHECK(r.kernels[0].blocks_per_sm == 8);
}

TEST_CASE("stream on h100 with the request coalescer: its loads go through L1, and none is merged", "[stream][sim]") {
  // The example above with one 20 ns coalescer for the GPU: the 8 passes' blocks are placed at the
  // same instant and read the same rectangles at once, which would merge if they bypassed L1 (a
  // GEMM's cp.async loads do: tests/sim/core/test_request_coalescer.cpp). The stream kernel's
  // plain loads go through L1, and on the H100 the coalescer merged 0-6.5% of them (Nsight Compute
  // counts 31.4-33.6 M of l2_stream.cu's 33.5 M requested sectors), which the model takes as none:
  // every pass is looked up, DRAM reads the buffer once.
  const std::string lrc =
      "arch_overrides: {l2: {bytes: 1048576, partitions: 1, far_copy: false, hash: modulo, replacement: lru, "
      "request_coalescing_ns: 20, request_coalescing_per_gpc: false}}\n";
  const Experiment e = load("{kind: stream, bytes: 256 KiB, passes: 8}", lrc);
  const ExperimentPoint& p = e.points.at(0);
  REQUIRE(p.workload->kernels.at(0).cached_loads);
  const MemCounters m = simulate(*p.workload, p.arch, p.options).kernels[0].mem;
  CHECK(m.coalesced_sectors == 0);
  CHECK(m.read_sectors == 8 * 8192);
  CHECK(m.read_hit_sectors == 7 * 8192);
  CHECK(m.dram_read_bytes == 256 * 1024);
  // The same kernel with loads that bypass L1 merges its passes, four to a lookup.
  Workload bypass = *p.workload;
  bypass.kernels[0].cached_loads = false;
  const MemCounters b = simulate(bypass, p.arch, p.options).kernels[0].mem;
  CHECK(b.read_sectors == 2 * 8192);
  CHECK(b.coalesced_sectors == 6 * 8192);
  CHECK(b.dram_read_bytes == 256 * 1024);
}

TEST_CASE("stream on h100 with a 1 MiB LRU L2: a buffer four times the L2 gets no read hits", "[stream][sim]") {
  // 4 MiB = 64 chunks x 2 passes = 128 blocks, placed in index order. Each chunk puts one line in
  // every set, so between block c's read of a line and block 64 + c's, the 63 other chunks have
  // put 63 > 16 (ways) newer lines in its set: LRU has evicted it, and no read hits. Only the
  // 128 stores to `out` (16 sectors, each written 8 times) can hit:
  //   hit_rate <= 128 / (2 x 131072 + 128) = 0.000488.
  const Experiment e = load("{kind: stream, bytes: 4 MiB, passes: 2}", kSmallL2);
  const ExperimentPoint& p = e.points.at(0);
  const SimResult r = simulate(*p.workload, p.arch, p.options);
  const MemCounters& m = r.kernels[0].mem;
  CHECK(m.read_sectors * 32 == 2 * 4 * 1024 * 1024);
  CHECK(m.read_hit_sectors == 0);
  CHECK(m.write_sectors == 128);
  CHECK(m.hit_rate() < 0.0005);
  CHECK(r.kernels[0].tensors[0].mem.dram_read_bytes == 2 * 4 * 1024 * 1024);  // every pass from DRAM
}

TEST_CASE("stream with stride_bytes: chunks spread like matrix rows, crowding a modulo-indexed L2", "[stream][sim]") {
  // 256 KiB as 64 chunks of 4 KiB (32 lines each). Contiguous, the 2048 lines take 4 ways of
  // each of the 512 sets, and every pass after the first hits (7/8 of 8 passes). 64 KiB apart,
  // chunk c starts at line 512 c: modulo 512 sets, every chunk lands in sets 0..31, 64 lines per
  // set against 16 ways, and the cyclic sweep under LRU misses on every pass.
  const std::string wl = "{kind: stream, bytes: 256 KiB, chunk_bytes: 4096, passes: 8";
  const Workload& w = workload_of(load(wl + ", stride_bytes: 65536}", kSmallL2));
  const Tensor& buf = w.tensors[0];
  CHECK(buf.rows == 64);
  CHECK(buf.cols == 4096);
  CHECK(buf.ld == 65536);
  CHECK(buf.footprint() == 64 * 65536);
  CHECK(bytes_loaded(w) == 8 * 256 * 1024);  // the same bytes read as without a stride
  const auto run = [](const Experiment& e) {
    const ExperimentPoint& p = e.points.at(0);
    return simulate(*p.workload, p.arch, p.options).kernels[0].mem;
  };
  const MemCounters contiguous = run(load(wl + "}", kSmallL2));
  CHECK(contiguous.read_hit_sectors == 7 * 8192);
  const MemCounters strided = run(load(wl + ", stride_bytes: 65536}", kSmallL2));
  CHECK(strided.read_hit_sectors == 0);
  CHECK(strided.dram_read_bytes == 8 * 256 * 1024);
  // The stride must hold whole chunks, and the span is bounded.
  REQUIRE_THROWS_WITH(load(wl + ", stride_bytes: 6000}"),
                      Contains("workload.stride_bytes") && Contains("multiple of chunk_bytes (4096)"));
  REQUIRE_THROWS_WITH(load("{kind: stream, bytes: 1 GiB, chunk_bytes: 4096, passes: 1, stride_bytes: 1 GiB}"),
                      Contains("workload.stride_bytes") && Contains("limit of 2^40"));
}
