// Sync policies on a tiny FFN whose tiles can be listed by hand: d = 128, f = 256, M = 128 with
// 64x128x64 tiles gives a 2x2 producer grid (GEMM0: 128 x 256) and a 2x1 consumer grid
// (GEMM1: 128 x 128) whose blocks have f / 64 = 4 k-steps (+ the epilogue).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

Workload build(const std::string& sync, const std::string& extra = "") {
  const std::string text = "arch: h100\nworkload: {kind: ffn, d: 128, f: 256, m: 128, gated: false,"
                           " gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [64, 128, 64]}}\nsync: " +
                           sync + "\n" + extra;
  return *load_experiment_text(text, "ffn.yaml", ".", {}).points.at(0).workload;
}

const Kernel& by_name(const Workload& w, const std::string& name) {
  for (const Kernel& k : w.kernels)
    if (k.name == name) return k;
  FAIL("no kernel " << name);
  return w.kernels[0];
}

}  // namespace

TEST_CASE("stream sync: two kernels in order on one stream, no semaphores", "[sync]") {
  const Workload w = build("{kind: stream}");
  REQUIRE(w.kernels.size() == 2);
  CHECK(w.kernels[0].name == "gemm0");
  CHECK(w.kernels[1].name == "gemm1");
  CHECK(w.kernels[0].stream == 0);
  CHECK(w.kernels[1].stream == 0);
  CHECK(w.num_semaphores == 0);
}

TEST_CASE("rowsync: consumer blocks wait once for their whole producer row", "[sync]") {
  const Workload w = build("{kind: rowsync}");
  REQUIRE(w.kernels.size() == 3);  // producer, CuSync's wait kernel, consumer
  const Kernel& p = by_name(w, "gemm0");
  const Kernel& c = by_name(w, "gemm1");
  CHECK(by_name(w, "wait").stream == 1);
  CHECK(c.stream == 1);
  CHECK(p.stream == 0);
  // Semaphores: 2 rows (0, 1), then the "started" one (2).
  CHECK(w.num_semaphores == 3);
  for (const Block& b : p.blocks) CHECK(p.steps[b.first_step + b.num_steps - 1].post_sem == b.tile_m);
  for (const Block& b : c.blocks) {
    CHECK(c.steps[b.first_step].wait_sem == b.tile_m);
    CHECK(c.steps[b.first_step].wait_value == 2);  // both producer tiles of the row
    CHECK(c.steps[b.first_step + 1].wait_sem == kNoSem);
  }
}

TEST_CASE("tilesync: each consumer k-step waits for the producer tile it reads", "[sync]") {
  const Workload w = build("{kind: tilesync}");
  const Kernel& c = by_name(w, "gemm1");
  // Producer tile (m, n) has semaphore m*2 + n. Consumer k-steps 0,1 read H columns 0..127
  // (tile n = 0), k-steps 2,3 read 128..255 (n = 1).
  for (const Block& b : c.blocks) {
    const std::uint32_t expect[4] = {b.tile_m * 2, b.tile_m * 2, b.tile_m * 2 + 1, b.tile_m * 2 + 1};
    for (std::uint32_t i = 0; i < 4; ++i) {
      CHECK(c.steps[b.first_step + i].wait_sem == expect[i]);
      CHECK(c.steps[b.first_step + i].wait_value == 1);
    }
  }
}

TEST_CASE("dataflow: one kernel whose tickets interleave consumer rows as asked", "[sync]") {
  // Fused block indices: producers 0..3 = (0,0) (0,1) (1,0) (1,1); consumers 4, 5 = rows 0, 1.
  const auto order = [](const Workload& w) { return by_name(w, "dataflow").dispatch; };
  using V = std::vector<std::uint32_t>;
  CHECK(order(build("{kind: dataflow, after: row}")) == V{0, 1, 4, 2, 3, 5});
  CHECK(order(build("{kind: dataflow, after: half_row}")) == V{0, 4, 1, 2, 5, 3});
  CHECK(order(build("{kind: dataflow, rows: 2}")) == V{0, 1, 2, 3, 4, 5});
  CHECK(order(build("{kind: dataflow, after: start}")) == V{4, 5, 0, 1, 2, 3});
  // The producer order inside follows the launch order: column order finishes both rows together.
  CHECK(order(build("{kind: dataflow, after: row}", "order: {kind: column}")) == V{0, 2, 1, 4, 3, 5});
  const Workload w = build("{kind: dataflow}");
  REQUIRE(w.kernels.size() == 1);
  CHECK(w.num_semaphores == 4);
}

TEST_CASE("dataflow: a chain order file gives every ticket, and is refused where it cannot apply", "[sync]") {
  const auto dir = std::filesystem::temp_directory_path() / ("tilesim_chain_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
  write("ok.order", "chain 2 2 1\np 1 1\np 1 0\nc 1 0\np 0 0\np 0 1\nc 0 0\n");
  write("wide.order", "chain 2 4 1\np 0 0\np 0 1\np 0 2\np 0 3\np 1 0\np 1 1\np 1 2\np 1 3\nc 0 0\nc 1 0\n");
  const auto load = [&](const std::string& sync, const std::string& file) {
    const std::string text = "arch: h100\nworkload: {kind: ffn, d: 128, f: 256, m: 128, gated: false,"
                             " gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [64, 128, 64]}}\nsync: " + sync +
                             "\norder: {kind: file, path: " + file + "}\n";
    return load_experiment_text(text, "ffn.yaml", dir.string(), {});
  };
  // Fused block indices: producers 0..3 = (0,0) (0,1) (1,0) (1,1); consumers 4, 5 = rows 0, 1.
  const Experiment e = load("{kind: dataflow}", "ok.order");
  CHECK(by_name(*e.points[0].workload, "dataflow").dispatch == std::vector<std::uint32_t>{3, 2, 5, 0, 1, 4});
  CHECK_NOTHROW(simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options));
  REQUIRE_THROWS_WITH(load("{kind: rowsync}", "ok.order"),
                      Contains("order.path") && Contains("chain order file") && Contains("dataflow"));
  REQUIRE_THROWS_WITH(load("{kind: dataflow, after: row}", "ok.order"),
                      Contains("sync.after") && Contains("gives the interleaving"));
  REQUIRE_THROWS_WITH(load("{kind: dataflow}", "wide.order"),
                      Contains("wide.order:1: the order is for a 2x4 producer and 2x1 consumer tile grid") &&
                          Contains("workload's are 2x2 and 2x1"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("dataflow: all consumers first deadlocks when they fill the GPU, and says why", "[sync]") {
  // Two SMs, one block each: both consumers take the SMs and spin on producer tiles that are
  // never dispatched.
  const std::string extra = "arch_overrides: {sm: {count: 2, l2_port_fast_sms: [], gpcs: [], partition_map: interleaved}}\n";
  const std::string text = "arch: h100\nworkload: {kind: ffn, d: 128, f: 256, m: 128, gated: false,"
                           " gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [64, 128, 64]}}\n" + extra;
  const auto run = [&](const std::string& sync) {
    const Experiment e = load_experiment_text(text + "sync: " + sync + "\n", "ffn.yaml", ".", {});
    return simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options);
  };
  REQUIRE_THROWS_AS(run("{kind: dataflow, after: start, blocks_per_sm: 1}"), DeadlockError);
  REQUIRE_THROWS_WITH(run("{kind: dataflow, after: start, blocks_per_sm: 1}"),
                      Contains("cannot make progress with 2 resident blocks") && Contains("tile 0,0,1"));
  // The same tiles in a good order finish, and every policy finishes.
  for (const char* sync : {"{kind: dataflow, after: row, blocks_per_sm: 1}", "{kind: stream}", "{kind: rowsync}",
                           "{kind: tilesync}", "{kind: dataflow, after: half_row}"}) {
    INFO(sync);
    const SimResult r = run(sync);
    CHECK(r.duration > 0);
  }
}

TEST_CASE("sync: consumer waits are counted, stream order has none", "[sync]") {
  const std::string text = "arch: h100\nworkload: {kind: ffn, d: 128, f: 256, m: 128, gated: false,"
                           " gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [64, 128, 64]}}\n";
  const auto run = [&](const std::string& sync) {
    const Experiment e = load_experiment_text(text + "sync: " + sync + "\n", "ffn.yaml", ".", {});
    return simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options);
  };
  const SimResult stream = run("{kind: stream}");
  for (const auto& k : stream.kernels) CHECK(k.wait_ps == 0);
  // With rowsync the consumer launches alongside the producer and must wait for it.
  const SimResult row = run("{kind: rowsync}");
  std::uint64_t waited = 0;
  for (const auto& k : row.kernels) waited += k.wait_ps;
  CHECK(waited > 0);
  // Every block of every kernel has a record.
  std::size_t blocks = 0;
  for (const auto& k : row.kernels) blocks += k.launched_blocks;
  CHECK(row.blocks.size() == blocks);
}

TEST_CASE("ffn: bad configurations name the key", "[sync][errors]") {
  const std::string base = "arch: h100\nworkload: {kind: ffn, d: 128, f: 256, m: 128, gated: false, ";
  const auto load = [&](const std::string& rest) { return load_experiment_text(base + rest, "ffn.yaml", ".", {}); };
  REQUIRE_THROWS_WITH(load("gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [128, 128, 64]}}\n"),
                      Contains("workload.gemm1") && Contains("must equal gemm0"));
  REQUIRE_THROWS_WITH(load("gemm0: {tile: [64, 64, 64]}, gemm1: {tile: [64, 128, 128]}}\nsync: {kind: tilesync}\n"),
                      Contains("sync") && Contains("multiple of gemm1's bk"));
  REQUIRE_THROWS_WITH(load("gemm0: {tile: [64, 128, 64], split_k: 2}, gemm1: {tile: [64, 128, 64]}}\nsync: {kind: rowsync}\n"),
                      Contains("workload.gemm0.split_k"));
  REQUIRE_THROWS_WITH(load("gemm0: {tile: [64, 128, 64], tiles: 3}}\n"), Contains("workload.gemm0.tiles"));
  // Without tiles the defaults fit the shape: M = 16 on h100 gets 64-row tiles (the wgmma M).
  CHECK_NOTHROW(load_experiment_text("arch: h100\nworkload: {kind: ffn, m: 16, model: llama3-8b}\n", "ffn.yaml", ".", {}));
  CHECK_NOTHROW(load_experiment_text("arch: a100\nworkload: {kind: ffn, m: 16, model: llama3-8b}\n", "ffn.yaml", ".", {}));
  const std::string tiles = "gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [64, 128, 64]}}\n";
  REQUIRE_THROWS_WITH(load(tiles + "sync: {kind: telepathy}\n"), Contains("sync.kind"));
  REQUIRE_THROWS_WITH(load(tiles + "sync: {kind: dataflow, after: row, rows: 2}\n"),
                      Contains("sync.rows"));
  REQUIRE_THROWS_WITH(load_experiment_text("workload: {kind: ffn, m: 16, model: llama9}\n", "ffn.yaml", ".", {}),
                      Contains("workload.model"));
}

TEST_CASE("stridedsync: a [gate | up] producer's tiles n and n + f/bn post one semaphore", "[sync]") {
  // Gated, concat: GEMM0 writes GU [128 x 512] in a 2x4 tile grid (bn 128): tiles 0,1 are the
  // gate half, 2,3 the up half, so the stride is f / bn = 2. A consumer k-step over H columns
  // [64 i, 64 i + 64) needs gate tile i/2 and up tile i/2 + 2, both posting semaphore m*2 + i/2.
  const std::string text = "arch: h100\nworkload: {kind: ffn, d: 128, f: 256, m: 128, gated: true, gate_fusion: concat,"
                           " gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [64, 128, 64]}}\nsync: {kind: stridedsync}\n";
  const Workload w = *load_experiment_text(text, "ffn.yaml", ".", {}).points.at(0).workload;
  const Kernel& p = by_name(w, "gate_up");
  const Kernel& c = by_name(w, "gemm1");
  CHECK(p.grid_n == 4);
  for (const Block& b : p.blocks) CHECK(p.steps[b.first_step + b.num_steps - 1].post_sem == b.tile_m * 2 + b.tile_n % 2);
  for (const Block& b : c.blocks) {
    for (std::uint32_t i = 0; i < 4; ++i) {
      const Step& s = c.steps[b.first_step + i];
      CHECK(s.wait_sem == b.tile_m * 2 + i / 2);
      CHECK(s.wait_value == 2);
      CHECK(s.num_accesses == 3);  // both halves of GU, and W1
    }
  }
  // tilesync on a concatenated producer is refused, and stridedsync without one.
  const std::string tile = text.substr(0, text.find("sync:")) + "sync: {kind: tilesync}\n";
  REQUIRE_THROWS_WITH(load_experiment_text(tile, "ffn.yaml", ".", {}), Contains("stridedsync"));
  REQUIRE_THROWS_WITH(build("{kind: stridedsync}"), Contains("gate_fusion: concat"));
  const Experiment e = load_experiment_text(text, "ffn.yaml", ".", {});
  CHECK(simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options).duration > 0);
}

TEST_CASE("a chain's timeline: stream order serialises, rowsync overlaps", "[sync]") {
  // d = 1024: 16 k-steps, so the producer outlasts its first post (the consumer's launch) by far.
  const std::string text = "arch: h100\nworkload: {kind: ffn, d: 1024, f: 256, m: 128, gated: false,"
                           " gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [64, 128, 64]}}\nsim: {launch_gap_ns: 1000}\n";
  const auto run = [&](const std::string& sync, const std::string& gap = "1000") {
    const std::string t = text.substr(0, text.find("sim:")) + "sim: {launch_gap_ns: " + gap + "}\n";
    const Experiment e = load_experiment_text(t + "sync: " + sync + "\n", "ffn.yaml", ".", {});
    return simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options);
  };
  const auto span = [](const SimResult& r, const std::string& name) {
    Time first = -1, last = 0;
    for (const BlockRecord& b : r.blocks)
      if (r.kernels[b.kernel].name == name) {
        first = first < 0 ? b.start : std::min(first, b.start);
        last = std::max(last, b.end);
      }
    return std::pair<Time, Time>{first, last};
  };
  const SimResult s = run("{kind: stream}");
  REQUIRE(s.blocks.size() == 4 + 16);  // 2x2 producer tiles, 2x8 consumer tiles (128 x 1024)
  const auto [p0, p1] = span(s, "gemm0");
  const auto [c0, c1] = span(s, "gemm1");
  CHECK(c0 >= p1 + 1000 * kPsPerNs);  // the launch gap, then the consumer's blocks
  CHECK(s.kernels[1].start == s.kernels[0].end + 1000 * kPsPerNs);
  // Without a launch gap the consumer launches as soon as the wait kernel sees the producer start.
  const SimResult r = run("{kind: rowsync}", "0");
  const auto [q0, q1] = span(r, "gemm0");
  const auto [d0, d1] = span(r, "gemm1");
  CHECK(d0 < q1);   // consumer blocks are resident (spinning) while the producer runs
  CHECK(d1 > q1);   // and finish after it
  for (const BlockRecord& b : r.blocks)
    if (r.kernels[b.kernel].name == "gemm1") CHECK(b.wait > 0);
}

TEST_CASE("every sync policy runs under every launch order", "[sync]") {
  // A 4x4 producer grid (M = 256, f = 512 with 64x128 tiles) so that grouped, swizzle (with
  // early-exit blocks) and Hilbert orders differ from row order.
  const std::string base = "arch: h100\nworkload: {kind: ffn, d: 128, f: 512, m: 256, gated: false,"
                           " gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [64, 128, 64]}}\n";
  for (const char* order : {"{kind: row}", "{kind: column}", "{kind: swizzle, log_tile: 2}",
                            "{kind: grouped, group_m: 2}", "{kind: hilbert}"})
    for (const char* sync : {"{kind: stream}", "{kind: rowsync}", "{kind: tilesync}", "{kind: dataflow, after: row}",
                             "{kind: dataflow, after: half_row}", "{kind: dataflow, rows: 2}"}) {
      INFO(order << " " << sync);
      const Experiment e = load_experiment_text(base + "order: " + order + "\nsync: " + sync + "\n", "ffn.yaml", ".", {});
      const SimResult r = simulate(*e.points[0].workload, e.points[0].arch, e.points[0].options);
      std::uint32_t real_blocks = 0;
      for (const BlockRecord& b : r.blocks) real_blocks += b.block != kNoBlock;
      // 16 producer and 4 consumer tiles, plus CuSync's one-block wait kernel for rowsync/tilesync.
      const bool cusync = std::string(sync) == "{kind: rowsync}" || std::string(sync) == "{kind: tilesync}";
      CHECK(real_blocks == 16 + 4 + (cusync ? 1 : 0));
    }
}

TEST_CASE("persistent FFN GEMMs: programs keep their tiles' waits and posts", "[sync]") {
  // gemm0's 4 tiles on 3 programs, gemm1's 2 tiles on 1 program, under rowsync.
  const std::string text = "arch: h100\nworkload: {kind: ffn, d: 128, f: 256, m: 128, gated: false,"
                           " gemm0: {tile: [64, 128, 64], persistent: 3}, gemm1: {tile: [64, 128, 64], persistent: 1}}\n"
                           "sync: {kind: rowsync}\n";
  const Experiment e = load_experiment_text(text, "ffn.yaml", ".", {});
  const Workload& w = *e.points.at(0).workload;
  const Workload tiles = build("{kind: rowsync}");
  const Kernel& p = by_name(w, "gemm0");
  const Kernel& c = by_name(w, "gemm1");
  CHECK(p.blocks.size() == 3);
  CHECK(c.blocks.size() == 1);
  const auto count = [](const Kernel& k, bool wait) {
    std::size_t n = 0;
    for (const Step& s : k.steps) n += wait ? s.wait_sem != kNoSem : s.post_sem != kNoSem;
    return n;
  };
  CHECK(count(p, false) == count(by_name(tiles, "gemm0"), false));  // every tile still posts its row
  CHECK(count(c, true) == count(by_name(tiles, "gemm1"), true));    // every tile still waits for it
  CHECK(c.blocks[0].num_steps == 2 * 5);                            // both tiles back to back
  const auto r = simulate(w, e.points[0].arch, e.points[0].options);
  CHECK(r.kernels.size() == 3);
  CHECK(r.total.write_sectors > 0);
  // The fused dataflow kernel takes tickets, not a tile sequence: refused with the key named.
  REQUIRE_THROWS_WITH(load_experiment_text("arch: h100\nworkload: {kind: ffn, d: 128, f: 256, m: 128, gated: false,"
                                           " gemm0: {tile: [64, 128, 64], persistent: 2}, gemm1: {tile: [64, 128, 64]}}\n"
                                           "sync: {kind: dataflow}\n", "ffn.yaml", ".", {}),
                      Contains("workload.gemm0") && Contains("dataflow"));
}
