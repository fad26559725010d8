// Trace files: round trips of both forms, files by path, and the documented text example.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>
#include "common/error.hpp"
#include "traces/trace.hpp"
#include "trace_test_util.hpp"

using namespace tilesim;
using namespace tilesim::test;

TEST_CASE("binary and text traces round trip exactly", "[trace]") {
  const Workload small = small_workload();
  validate_workload(small, "test");
  for (TraceFormat fmt : {TraceFormat::binary, TraceFormat::text}) {
    const std::string bytes = to_bytes(small, fmt);
    CHECK(from_bytes(bytes) == small);
  }
  // A kernel's optional fields survive both forms; `kept` checks the field read back.
  const auto round_trips = [](const Workload& w, const auto& kept) {
    for (TraceFormat fmt : {TraceFormat::binary, TraceFormat::text}) {
      INFO("format " << (fmt == TraceFormat::binary ? "binary" : "text"));
      const Workload back = from_bytes(to_bytes(w, fmt));
      CHECK(kept(back.kernels[0]));
      CHECK(back == w);
    }
  };
  // A kernel whose pipeline drains between tiles keeps its flag in both forms.
  Workload drained = small;
  drained.kernels[0].drain_between_tiles = true;
  round_trips(drained, [](const Kernel& k) { return k.drain_between_tiles; });
  CHECK(to_bytes(drained, TraceFormat::text).find(" tile_drain=1") != std::string::npos);
  // So does a kernel's block tile (the arch's per-tile ceilings are looked up by it).
  Workload tiled = small;
  tiled.kernels[0].mma_tile_rows = 128;
  tiled.kernels[0].mma_tile_cols = 256;
  round_trips(tiled, [](const Kernel& k) { return k.mma_tile_cols == 256; });
  CHECK(to_bytes(tiled, TraceFormat::text).find(" mma_tile=128x256") != std::string::npos);
  // And a main loop that waits for each MMA, with its instructions' width.
  Workload serial = small;
  serial.kernels[0].serialized_mma_cols = 85;
  round_trips(serial, [](const Kernel& k) { return k.serialized_mma_cols == 85; });
  CHECK(to_bytes(serial, TraceFormat::text).find(" serialized=85") != std::string::npos);
  // And an mma_sync loop that loads no fragments ahead (the arch gives it its own figures).
  Workload single = small;
  single.kernels[0].single_fragments = true;
  round_trips(single, [](const Kernel& k) { return k.single_fragments; });
  CHECK(to_bytes(single, TraceFormat::text).find(" fragments=single") != std::string::npos);
  // And the loads' prefetch size (cp.async.L2::128B: a miss fetches the whole line).
  Workload prefetch = small;
  prefetch.kernels[0].l2_prefetch_bytes = 128;
  round_trips(prefetch, [](const Kernel& k) { return k.l2_prefetch_bytes == 128; });
  CHECK(to_bytes(prefetch, TraceFormat::text).find(" l2_prefetch=128") != std::string::npos);
  // And loads that go through L1 (the coalescer merges none of them).
  Workload cached = small;
  cached.kernels[0].cached_loads = true;
  round_trips(cached, [](const Kernel& k) { return k.cached_loads; });
  CHECK(to_bytes(cached, TraceFormat::text).find(" loads=cached") != std::string::npos);
  // The wide workload uses layouts only the binary form holds; the text writer must say so.
  const Workload wide = wide_workload();
  CHECK(from_bytes(to_bytes(wide, TraceFormat::binary)) == wide);
  std::ostringstream text;
  CHECK_THROWS_WITH(write_trace(wide, text, TraceFormat::text), Catch::Contains("binary"));
}

TEST_CASE("workload-global semaphores and kernel streams round trip in both forms", "[trace]") {
  // A producer on stream 0 posts semaphores 299 and 0; a consumer on stream 200 waits on them
  // (semaphores belong to the workload, so a kernel may wait on another kernel's posts); a third
  // kernel is back on stream 0. 300 and 200 both take two varint bytes.
  Workload w;
  w.name = "two streams";
  w.num_semaphores = 300;
  w.tensors = {make_tensor("X", 0, 64, 64, 1, 16, false), make_tensor("Y", 0x10000, 64, 64, 1, 16, false)};
  Kernel p;
  p.name = "produce";
  p.grid_n = 2;
  for (std::uint32_t n = 0; n < 2; ++n) {
    add_block(p, 0, n, 0);
    add_step(p, 1000, {{0, 0, 0, n * 32, 64, 32, AccessKind::load}, {1, 0, 0, n * 32, 64, 32, AccessKind::store}},
             kNoSem, 0, n == 0 ? 299 : 0);
  }
  p.dispatch = {0, 1};
  Kernel c;
  c.name = "consume";
  c.grid_n = 2;
  c.stream = 200;
  for (std::uint32_t n = 0; n < 2; ++n) {
    add_block(c, 0, n, 0);
    add_step(c, 2000, {{1, 0, 0, n * 32, 64, 32, AccessKind::load}}, n == 0 ? 299 : 0, 1);
  }
  c.dispatch = {1, 0};
  Kernel t;
  t.name = "tail";
  add_block(t, 0, 0, 0);
  add_step(t, 10, {{1, 0, 0, 0, 64, 64, AccessKind::store}}, 0, 1, 1);
  t.dispatch = {0};
  w.kernels = {p, c, t};
  validate_workload(w, "test");

  const std::string bin = to_bytes(w, TraceFormat::binary);
  CHECK(from_bytes(bin) == w);
  // Byte 20: the name's length (11), 21..31 the name, 32..33 semaphore_count 300 (ac 02), 34 the
  // tensor count.
  REQUIRE(bin.size() > 34);
  CHECK(bin[20] == 11);
  CHECK(bin.substr(21, 11) == "two streams");
  CHECK(bin.substr(32, 2) == bytes_of({0xac, 0x02}));
  CHECK(bin[34] == 2);

  const std::string text = to_bytes(w, TraceFormat::text);
  INFO(text);
  CHECK(from_bytes(text) == w);
  // One top-level semaphores line before the first kernel; stream= only where it is not 0.
  const std::size_t sems = text.find("\nsemaphores 300\n");
  REQUIRE(sems != std::string::npos);
  CHECK(sems < text.find("\nkernel "));
  CHECK(text.find("semaphores", sems + 2) == std::string::npos);
  std::vector<std::string> kernel_lines;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("kernel ", 0) == 0) kernel_lines.push_back(line);
  REQUIRE(kernel_lines.size() == 3);
  CHECK(kernel_lines[0].find("stream=") == std::string::npos);
  CHECK(kernel_lines[1].find(" stream=200") != std::string::npos);
  CHECK(kernel_lines[2].find("stream=") == std::string::npos);
  // The semaphores line may stand anywhere before the first kernel, e.g. after the tensors.
  std::string moved = text;
  moved.erase(sems + 1, std::string("semaphores 300\n").size());
  moved.insert(moved.find("\nkernel ") + 1, "semaphores 300\n");
  CHECK(moved != text);
  CHECK(from_bytes(moved) == w);

  // Streams and the semaphore count are stored, not defaulted: changing either changes the file.
  Workload other = w;
  other.kernels[1].stream = 201;
  other.num_semaphores = 301;
  for (TraceFormat fmt : {TraceFormat::binary, TraceFormat::text}) {
    const Workload back = from_bytes(to_bytes(other, fmt));
    CHECK(back.kernels[1].stream == 201);
    CHECK(back.num_semaphores == 301);
  }
}

TEST_CASE("trace files are written and read by path", "[trace]") {
  const auto dir = std::filesystem::temp_directory_path() / ("tilesim-trace-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const Workload w = small_workload();
  for (TraceFormat fmt : {TraceFormat::binary, TraceFormat::text}) {
    const std::string path = (dir / (fmt == TraceFormat::binary ? "w.bin" : "w.txt")).string();
    write_trace_file(w, path, fmt);
    CHECK(read_trace_file(path) == w);
  }
  CHECK_THROWS_AS(read_trace_file((dir / "missing").string()), InputError);
  CHECK_THROWS_AS(write_trace_file(w, (dir / "no/such/dir/x").string(), TraceFormat::binary), InputError);
  Workload bad = w;
  bad.kernels[0].dispatch.pop_back();
  bad.kernels[0].dispatch.back() = 0;  // no longer a permutation
  CHECK_THROWS_AS(write_trace_file(bad, (dir / "bad").string(), TraceFormat::binary), InputError);
  CHECK_FALSE(std::filesystem::exists(dir / "bad"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the text example of docs/trace-format.md parses", "[trace]") {
  const Workload w = from_bytes(doc_example(), "example.trace");
  CHECK(w.name == "split-k example");
  REQUIRE(w.tensors.size() == 3);
  CHECK(w.tensors[0].ld == 128);
  CHECK(w.tensors[0].batch_stride == 64 * 128 * 2);
  CHECK(w.tensors[1].col_major);
  CHECK(w.tensors[1].elem_bits == 4);
  CHECK(w.tensors[1].ld == 128);
  CHECK(w.num_semaphores == 4);
  REQUIRE(w.kernels.size() == 2);
  const Kernel& k = w.kernels[0];
  CHECK(k.compute_dtype == Dtype::w4a16);
  CHECK(k.stream == 0);
  CHECK(k.num_blocks() == 4);
  CHECK(k.steps.size() == 5);
  CHECK(k.accesses.size() == 16);
  CHECK(k.total_flops == 2 * 262144 + 3 * 524288);
  CHECK(k.steps[2].wait_sem == 0);
  CHECK(k.steps[2].wait_value == 1);
  CHECK(k.steps[2].post_sem == 2);
  CHECK(k.steps[1].post_sem == 0);
  CHECK(k.steps[4].wait_sem == 1);
  CHECK(k.steps[4].post_sem == 3);
  CHECK(k.accesses[10].tensor == 1);
  CHECK(k.dispatch == std::vector<std::uint32_t>{kNoBlock, 0, 2, 1, 3});
  // The second kernel, on another stream, waits on semaphores the first one posts.
  const Kernel& e = w.kernels[1];
  CHECK(e.stream == 1);
  CHECK(e.compute_dtype == Dtype::fp32);
  CHECK(e.num_blocks() == 2);
  REQUIRE(e.steps.size() == 2);
  CHECK(e.steps[0].wait_sem == 2);
  CHECK(e.steps[0].wait_value == 1);
  CHECK(e.steps[1].wait_sem == 3);
  CHECK(e.steps[1].post_sem == kNoSem);
  CHECK(e.accesses.size() == 4);
  CHECK(e.total_flops == 2 * 4096);
  CHECK(e.dispatch == std::vector<std::uint32_t>{0, 1});
  // Both forms carry it unchanged.
  CHECK(from_bytes(to_bytes(w, TraceFormat::text)) == w);
  CHECK(from_bytes(to_bytes(w, TraceFormat::binary)) == w);
}

TEST_CASE("a text trace without dispatch lines launches blocks in index order", "[trace]") {
  const std::string text =
      "tilesim-trace 4\n"
      "tensor X base=0 rows=8 cols=8\n"
      "kernel k grid=1x3\n"
      "block 0 0 0\nblock 0 1 0\n  step flops=10\n    load X 0 0 0 8 8\nblock 0 2 0\n";
  const Workload w = from_bytes(text);
  CHECK(w.kernels[0].dispatch == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(w.kernels[0].blocks[1].num_steps == 1);
  CHECK(w.kernels[0].blocks[2].first_step == 1);
  CHECK(w.kernels[0].total_flops == 10);
  // Without a semaphores line or stream= the workload has no semaphores and the kernel runs on
  // stream 0; the writer then omits both.
  CHECK(w.num_semaphores == 0);
  CHECK(w.kernels[0].stream == 0);
  const std::string back = to_bytes(w, TraceFormat::text);
  CHECK(back.find("semaphores") == std::string::npos);
  CHECK(back.find("stream=") == std::string::npos);
}

TEST_CASE("text trace errors name FILE:LINE", "[trace]") {
  const std::string head = "tilesim-trace 4\nsemaphores 1\ntensor X base=0 rows=8 cols=8\nkernel k grid=1x1\nblock 0 0 0\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {head + "  step flops=1\n    load Y 0 0 0 8 8\n", "bad.trace:7: unknown tensor 'Y'"},
      {head + "  step flops=ten\n", "bad.trace:6: expected a number for flops"},
      {head + "  step flop=1\n", "bad.trace:6: unknown key 'flop'"},
      {head + "  step\n    load X 0 4 0 8 8\n", "bad.trace:7: rectangle"},
      {head + "  step\n    store X 1 0 0 8 8\n", "bad.trace:7: batch 1 out of range"},
      {head + "  step wait=1:1\n", "bad.trace:6: semaphore 1 out of range"},
      {head + "  step\n    load X 0 0 0 8\n", "bad.trace:7: expected 'load TENSOR"},
      {head + "frobnicate\n", "bad.trace:6: unknown record 'frobnicate'"},
      {head + "block 0 0 1\n", "bad.trace:4: kernel k has grid 1x1x1 = 1 blocks but lists 2"},
      {head + "dispatch 0 0\n", "bad.trace:6: dispatch names block 0 twice"},
      {head + "\n# just a comment\ndispatch -\n", "bad.trace:8: dispatch misses block 0"},
      {"# no header\ntensor X base=0 rows=8 cols=8\n", "bad.trace:2: expected 'tilesim-trace 4'"},
      {"tilesim-trace 1\n", "bad.trace:1: unsupported text trace version 1 (this build reads version 4)"},
      {"\n# version 5 is from the future\ntilesim-trace 5\n", "bad.trace:3: unsupported text trace version 5"},
      {"tilesim-trace 4\ntensor \"X base=0\n", "bad.trace:2: unterminated quoted string"},
      {"tilesim-trace 4\ntensor X base=0 rows=8 cols=8 layout=diagonal\n", "bad.trace:2: expected layout=row or layout=col"},
      {"tilesim-trace 4\nkernel k grid=2x2x2x2\n", "bad.trace:2: expected grid=MxN"},
      {"tilesim-trace 4\nkernel k grid=1x1 dtype=fp64\n", "bad.trace:2: unknown dtype 'fp64'"},
      {"tilesim-trace 4\nkernel k grid=1x1 mma_tile=128\n", "bad.trace:2: mma_tile: expected ROWSxCOLS"},
      {"tilesim-trace 4\nkernel k grid=1x1 mma_tile=128xwide\n", "bad.trace:2: expected a number for mma_tile columns"},
      {"tilesim-trace 4\nkernel k grid=1x1 serialized=0\n", "bad.trace:2: serialized: expected the columns of one MMA"},
      {"tilesim-trace 4\ntensor X base=0 rows=99999999999 cols=8\n", "bad.trace:2: rows 99999999999 is larger"},
      {"tilesim-trace 4\nstep\n", "bad.trace:2: 'step' before any 'block'"},
      // Semaphores are workload-global: declared once by a top-level 'semaphores N' line that
      // precedes the first kernel, and every step's wait/post must name one below N.
      {head + "  step post=1\n", "bad.trace:6: semaphore 1 out of range (the workload declares 'semaphores 1' before its kernels)"},
      {head + "  step wait=0:1 post=0\n  step post=4294967294\n", "bad.trace:7: semaphore 4294967294 out of range"},
      {head + "  step post=0\n\nkernel k2 grid=1x1 stream=1\nblock 0 0 0\n  step wait=0:1\n  step wait=1:1\n",
       "bad.trace:11: semaphore 1 out of range"},
      {"tilesim-trace 4\ntensor X base=0 rows=8 cols=8\nkernel k grid=1x1\nblock 0 0 0\n  step post=0\n",
       "bad.trace:5: semaphore 0 out of range (the workload declares 'semaphores 0'"},
      {head + "semaphores 2\n", "bad.trace:6: 'semaphores' must come before the first kernel"},
      {"tilesim-trace 4\ntensor X base=0 rows=8 cols=8\nkernel k grid=1x1\nblock 0 0 0\n  step\n\nsemaphores 1\n",
       "bad.trace:7: 'semaphores' must come before the first kernel"},
      {"tilesim-trace 4\nsemaphores\n", "bad.trace:2: expected 'semaphores COUNT', got 0 arguments"},
      {"tilesim-trace 4\nsemaphores 1 2\n", "bad.trace:2: expected 'semaphores COUNT', got 2 arguments"},
      {"tilesim-trace 4\nsemaphores -1\n", "bad.trace:2: expected a number for semaphore count, got '-1'"},
      {"tilesim-trace 4\nsemaphores 4294967296\n", "bad.trace:2: semaphore count 4294967296 is larger than 4294967295"},
      // Version 1's per-kernel semaphores= key is gone; stream= replaced it.
      {"tilesim-trace 4\nkernel k grid=1x1 semaphores=2\n", "bad.trace:2: unknown key 'semaphores'"},
      {"tilesim-trace 4\nkernel k grid=1x1 stream=two\n", "bad.trace:2: expected a number for stream, got 'two'"},
      {"tilesim-trace 4\nkernel k grid=1x1 stream=4294967296\n", "bad.trace:2: stream 4294967296 is larger than 4294967295"},
      {"tilesim-trace 4\nkernel k grid=1x1 stream=1 stream=2\n", "bad.trace:2: key 'stream' given twice"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    CHECK_THAT(read_error(text, "bad.trace"), Catch::StartsWith(expected));
  }
  // Structural errors found only by validate_workload name the file.
  CHECK_THAT(read_error("tilesim-trace 4\ntensor X base=0 rows=0 cols=8\n", "bad.trace"),
             Catch::Contains("bad.trace: tensor 0 (X): zero extent"));
  // Arithmetic that would wrap (issue 17, D7 and D8).
  CHECK_THAT(read_error(head + "  step flops=18446744073709551615\n  step flops=2\n", "bad.trace"),
             Catch::Contains("bad.trace:4") && Catch::Contains("past 2^64"));
  CHECK_THAT(read_error("tilesim-trace 4\ntensor X base=0xfffffffffffff000 rows=8 cols=8\n", "bad.trace"),
             Catch::Contains("bad.trace: tensor 0 (X): extends past the 512 GiB"));
}
