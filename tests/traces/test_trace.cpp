// Trace files: exact round trips of both forms, the documented text example, and a reader that
// turns every damaged input (prefixes, flipped bytes, garbage, crafted counts) into InputError.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

#include "common/error.hpp"
#include "traces/trace.hpp"

using namespace tilesim;

namespace {

Tensor make_tensor(std::string name, Addr base, std::uint32_t rows, std::uint32_t cols, std::uint32_t batch,
                   std::uint16_t bits, bool col_major) {
  Tensor t{std::move(name), base, rows, cols, batch, bits, col_major, col_major ? rows : cols, 0};
  t.batch_stride = batch > 1 ? t.bytes_per_batch() + 256 : 0;
  return t;
}

void add_step(Kernel& k, std::uint64_t flops, std::vector<TileAccess> accesses, std::uint32_t wait_sem = kNoSem,
              std::uint32_t wait_value = 0, std::uint32_t post_sem = kNoSem) {
  Step s{static_cast<std::uint32_t>(k.accesses.size()), static_cast<std::uint32_t>(accesses.size()), flops,
         wait_sem, wait_value, post_sem};
  k.accesses.insert(k.accesses.end(), accesses.begin(), accesses.end());
  k.steps.push_back(s);
  k.blocks.back().num_steps++;
  k.total_flops += flops;
}

void add_block(Kernel& k, std::uint32_t m, std::uint32_t n, std::uint32_t z) {
  k.blocks.push_back(Block{static_cast<std::uint32_t>(k.steps.size()), 0, m, n, z});
}

// Split-K GEMM over a batch of 2: A fp16 row-major, B int4 col-major, C fp32 output; the second
// K half of each tile waits on a semaphore the first half posts. Dispatch has early exits.
Workload small_workload() {
  Workload w;
  w.name = "small split-k";
  w.tensors = {make_tensor("A", 0x10000, 64, 128, 2, 16, false), make_tensor("B", 0x40000, 128, 96, 2, 4, true),
               make_tensor("C", 0x80000, 64, 96, 2, 32, false)};
  Kernel k;
  k.name = "gemm_splitk";
  k.grid_m = 1, k.grid_n = 2, k.grid_z = 4;  // z = batch * 2 + K half
  k.compute_dtype = Dtype::w4a16;
  k.stages = 3;
  k.resources = {256, 168, 98304};
  k.stream = 1;
  w.num_semaphores = 4;
  for (std::uint32_t z = 0; z < 4; ++z) {
    for (std::uint32_t n = 0; n < 2; ++n) {
      const std::uint32_t batch = z / 2, half = z % 2, sem = batch * 2 + n, ncols = n ? 32 : 64;
      add_block(k, 0, n, z);
      for (std::uint32_t ks = 0; ks < 2; ++ks) {
        const std::uint32_t k0 = half * 64 + ks * 32;
        const bool wait = half == 1 && ks == 0;
        add_step(k, 2ull * 64 * ncols * 32,
                 {{0, batch, 0, k0, 64, 32, AccessKind::load}, {1, batch, k0, n * 64, 32, ncols, AccessKind::load}},
                 wait ? sem : kNoSem, wait ? 1 : 0);
      }
      std::vector<TileAccess> epilogue;
      if (half == 1) epilogue.push_back({2, batch, 0, n * 64, 64, ncols, AccessKind::load});
      epilogue.push_back({2, batch, 0, n * 64, 64, ncols, AccessKind::store});
      add_step(k, 0, epilogue, kNoSem, 0, half == 0 ? sem : kNoSem);
    }
  }
  k.dispatch = {kNoBlock, 0, 1, 4, kNoBlock, 5, 2, 3, 6, 7, kNoBlock};
  w.kernels.push_back(k);

  Kernel e;  // a second, tiny kernel: an elementwise pass over C
  e.name = "scale C";
  e.grid_m = 1;
  e.compute_dtype = Dtype::fp32;
  add_block(e, 0, 0, 0);
  add_step(e, 4096, {{2, 1, 0, 0, 64, 96, AccessKind::load}, {2, 1, 0, 0, 64, 96, AccessKind::store}});
  e.dispatch = {0};
  w.kernels.push_back(e);
  return w;
}

// Binary-only features: 40 tensors (indices past the inline range), a step with 20 accesses,
// blocks sharing steps, tiles not in index order, total_flops != the steps' sum, odd names.
Workload wide_workload() {
  Workload w;
  w.name = "";
  for (int t = 0; t < 40; ++t) w.tensors.push_back(make_tensor(t == 7 ? "" : "t \"" + std::to_string(t), 0x100000ull * t, 32, 32, 1, 8, t % 2));
  Kernel k;
  k.name = "wide\tkernel";
  k.grid_m = 3;
  k.total_flops = 123;
  std::vector<TileAccess> many;
  for (std::uint32_t i = 0; i < 20; ++i) many.push_back({39 - i, 0, i, 31 - i, 1, 1, AccessKind::load});
  add_block(k, 2, 0, 0);
  add_step(k, ~0ull, many, kNoSem, 77, kNoSem);
  add_step(k, 5, {{31, 0, 0, 0, 32, 32, AccessKind::store}});
  k.blocks.push_back(Block{0, 2, 0, 0, 9});  // shares block 0's steps
  k.blocks.push_back(Block{1, 1, 1, 0, 0});
  k.steps.push_back(Step{0, 1, 0, kNoSem, 0, kNoSem});  // owned by no block, overlaps step 0
  k.total_flops = 123;
  k.dispatch = {2, 0, 1};
  w.kernels.push_back(k);
  return w;
}

// The 8192^3 fp16 GEMM with 128x128x64 tiles: 64x64 blocks of 128 K steps plus a store step,
// dispatched in groups of 8 rows (the usual L2 swizzle).
Workload large_workload() {
  constexpr std::uint32_t kDim = 8192, kTile = 128, kK = 64, kGrid = kDim / kTile, kSteps = kDim / kK;
  Workload w;
  w.name = "gemm 8192";
  w.tensors = {make_tensor("A", 0, kDim, kDim, 1, 16, false), make_tensor("B", 1ull << 28, kDim, kDim, 1, 16, false),
               make_tensor("C", 2ull << 28, kDim, kDim, 1, 16, false)};
  Kernel k;
  k.name = "gemm";
  k.grid_m = kGrid, k.grid_n = kGrid;
  k.stages = 4;
  k.resources = {256, 128, 131072};
  k.blocks.reserve(kGrid * kGrid);
  k.steps.reserve(kGrid * kGrid * (kSteps + 1));
  k.accesses.reserve(kGrid * kGrid * (2 * kSteps + 1));
  for (std::uint32_t m = 0; m < kGrid; ++m) {
    for (std::uint32_t n = 0; n < kGrid; ++n) {
      add_block(k, m, n, 0);
      for (std::uint32_t s = 0; s < kSteps; ++s)
        add_step(k, 2ull * kTile * kTile * kK,
                 {{0, 0, m * kTile, s * kK, kTile, kK, AccessKind::load}, {1, 0, s * kK, n * kTile, kK, kTile, AccessKind::load}});
      add_step(k, 0, {{2, 0, m * kTile, n * kTile, kTile, kTile, AccessKind::store}});
    }
  }
  for (std::uint32_t g = 0; g < kGrid; g += 8)
    for (std::uint32_t n = 0; n < kGrid; ++n)
      for (std::uint32_t m = g; m < g + 8; ++m) k.dispatch.push_back(m * kGrid + n);
  w.kernels.push_back(std::move(k));
  return w;
}

std::string to_bytes(const Workload& w, TraceFormat fmt) {
  std::ostringstream out;
  write_trace(w, out, fmt);
  return out.str();
}

Workload from_bytes(const std::string& bytes, const std::string& origin = "t.trace") {
  std::istringstream in(bytes);
  return read_trace(in, origin);
}

// The InputError message of reading `bytes`; fails the test if it parses or throws anything else.
std::string read_error(const std::string& bytes, const std::string& origin = "t.trace") {
  try {
    from_bytes(bytes, origin);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("expected an InputError");
  return {};
}

// Reads `bytes`, which may or may not be valid: success or InputError are both fine.
void read_survives(const std::string& bytes) {
  try {
    from_bytes(bytes);
  } catch (const InputError&) {
  }
}

// Re-seals a binary trace whose body was edited: fixes the declared length and the checksum,
// so the structural checks are what stand between the edit and the reader.
std::string reseal(std::string bytes) {
  if (bytes.size() < 28) bytes.resize(28, '\0');
  bytes.resize(bytes.size() - 8);
  const std::uint64_t total = bytes.size() + 8;
  for (int i = 0; i < 8; ++i) bytes[12 + i] = static_cast<char>(total >> (8 * i));
  const std::uint64_t sum = trace_checksum(bytes);
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(sum >> (8 * i)));
  return bytes;
}

std::string bytes_of(std::initializer_list<unsigned> v) {
  std::string s;
  for (unsigned b : v) s.push_back(static_cast<char>(b));
  return s;
}

std::string varint_bytes(std::uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s.push_back(static_cast<char>(v | 0x80));
  s.push_back(static_cast<char>(v));
  return s;
}

// A version-2 binary trace of the section bytes `body`: the 20-byte header (magic, version 2,
// length) before it, and the length and checksum fixed by reseal.
std::string crafted(const std::string& body) {
  std::string head(kBinaryTraceMagic, kBinaryTraceMagic + 8);
  head += std::string("\x02\0\0\0", 4) + std::string(8, '\0');
  return reseal(head + body + std::string(8, '\0'));
}

// The workload's first section bytes for one kernel and no tensors: name "", semaphore_count,
// tensor_count 0, kernel_count 1.
std::string workload_prefix(std::uint32_t semaphores) {
  return std::string(1, '\0') + varint_bytes(semaphores) + bytes_of({0x00, 0x01});
}

// A kernel record up to its counts (14 bytes): name "", grid 1x1x1, dtype fp16 (2), stages 1,
// threads 128 (80 01), regs 128 (80 01), smem 0, blocks_per_sm 0, stream 0, total_flops 0.
const std::string kKernelHead = bytes_of({0x00, 0x01, 0x01, 0x01, 0x02, 0x01, 0x80, 0x01, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00});

// A whole kernel of one block and one step with no accesses: counts 1 block, 1 step, 0 accesses,
// 1 dispatch entry; the block (1 step, all residuals 0); `step` (head byte and its fields); the
// dispatch entry (identity: residual 0).
std::string one_step_kernel(const std::string& step) {
  return kKernelHead + bytes_of({0x01, 0x01, 0x00, 0x01}) + bytes_of({0x01, 0x00, 0x00, 0x00, 0x00}) + step +
         std::string(1, '\0');
}

std::string doc_example() {
  std::ifstream in(std::string(TILESIM_TEST_DIR) + "/../docs/trace-format.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::size_t begin = doc.find("<!-- trace-example-begin -->");
  REQUIRE(begin != std::string::npos);
  const std::size_t open = doc.find("```text\n", begin);
  const std::size_t close = doc.find("```", open + 8);
  REQUIRE(open != std::string::npos);
  REQUIRE(close != std::string::npos);
  return doc.substr(open + 8, close - open - 8);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("binary and text traces round trip exactly", "[trace]") {
  const Workload small = small_workload();
  validate_workload(small, "test");
  for (TraceFormat fmt : {TraceFormat::binary, TraceFormat::text}) {
    const std::string bytes = to_bytes(small, fmt);
    CHECK(from_bytes(bytes) == small);
  }
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
      "tilesim-trace 2\n"
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
  const std::string head = "tilesim-trace 2\nsemaphores 1\ntensor X base=0 rows=8 cols=8\nkernel k grid=1x1\nblock 0 0 0\n";
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
      {"# no header\ntensor X base=0 rows=8 cols=8\n", "bad.trace:2: expected 'tilesim-trace 2'"},
      {"tilesim-trace 1\n", "bad.trace:1: unsupported text trace version 1 (this build reads version 2)"},
      {"\n# version 3 is from the future\ntilesim-trace 3\n", "bad.trace:3: unsupported text trace version 3"},
      {"tilesim-trace 2\ntensor \"X base=0\n", "bad.trace:2: unterminated quoted string"},
      {"tilesim-trace 2\ntensor X base=0 rows=8 cols=8 layout=diagonal\n", "bad.trace:2: expected layout=row or layout=col"},
      {"tilesim-trace 2\nkernel k grid=2x2x2x2\n", "bad.trace:2: expected grid=MxN"},
      {"tilesim-trace 2\nkernel k grid=1x1 dtype=fp64\n", "bad.trace:2: unknown dtype 'fp64'"},
      {"tilesim-trace 2\ntensor X base=0 rows=99999999999 cols=8\n", "bad.trace:2: rows 99999999999 is larger"},
      {"tilesim-trace 2\nstep\n", "bad.trace:2: 'step' before any 'block'"},
      // Semaphores are workload-global: declared once by a top-level 'semaphores N' line that
      // precedes the first kernel, and every step's wait/post must name one below N.
      {head + "  step post=1\n", "bad.trace:6: semaphore 1 out of range (the workload declares 'semaphores 1' before its kernels)"},
      {head + "  step wait=0:1 post=0\n  step post=4294967294\n", "bad.trace:7: semaphore 4294967294 out of range"},
      {head + "  step post=0\n\nkernel k2 grid=1x1 stream=1\nblock 0 0 0\n  step wait=0:1\n  step wait=1:1\n",
       "bad.trace:11: semaphore 1 out of range"},
      {"tilesim-trace 2\ntensor X base=0 rows=8 cols=8\nkernel k grid=1x1\nblock 0 0 0\n  step post=0\n",
       "bad.trace:5: semaphore 0 out of range (the workload declares 'semaphores 0'"},
      {head + "semaphores 2\n", "bad.trace:6: 'semaphores' must come before the first kernel"},
      {"tilesim-trace 2\ntensor X base=0 rows=8 cols=8\nkernel k grid=1x1\nblock 0 0 0\n  step\n\nsemaphores 1\n",
       "bad.trace:7: 'semaphores' must come before the first kernel"},
      {"tilesim-trace 2\nsemaphores\n", "bad.trace:2: expected 'semaphores COUNT', got 0 arguments"},
      {"tilesim-trace 2\nsemaphores 1 2\n", "bad.trace:2: expected 'semaphores COUNT', got 2 arguments"},
      {"tilesim-trace 2\nsemaphores -1\n", "bad.trace:2: expected a number for semaphore count, got '-1'"},
      {"tilesim-trace 2\nsemaphores 4294967296\n", "bad.trace:2: semaphore count 4294967296 is larger than 4294967295"},
      // Version 1's per-kernel semaphores= key is gone; stream= replaced it.
      {"tilesim-trace 2\nkernel k grid=1x1 semaphores=2\n", "bad.trace:2: unknown key 'semaphores'"},
      {"tilesim-trace 2\nkernel k grid=1x1 stream=two\n", "bad.trace:2: expected a number for stream, got 'two'"},
      {"tilesim-trace 2\nkernel k grid=1x1 stream=4294967296\n", "bad.trace:2: stream 4294967296 is larger than 4294967295"},
      {"tilesim-trace 2\nkernel k grid=1x1 stream=1 stream=2\n", "bad.trace:2: key 'stream' given twice"},
  };
  for (const auto& [text, expected] : cases) {
    INFO(text);
    CHECK_THAT(read_error(text, "bad.trace"), Catch::StartsWith(expected));
  }
  // Structural errors found only by validate_workload name the file.
  CHECK_THAT(read_error("tilesim-trace 2\ntensor X base=0 rows=0 cols=8\n", "bad.trace"),
             Catch::Contains("bad.trace: tensor 0 (X): zero extent"));
}

TEST_CASE("a binary trace cut at any length reports the offset", "[trace]") {
  const std::string bytes = to_bytes(small_workload(), TraceFormat::binary);
  CHECK_THAT(read_error(bytes.substr(0, 3)), Catch::Contains("truncated trace: needed 5 more bytes at byte offset 0 (reading magic)"));
  CHECK_THAT(read_error(bytes.substr(0, bytes.size() - 1)), Catch::Contains("needed 1 more bytes"));
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    INFO("prefix length " << len);
    CHECK_THAT(read_error(bytes.substr(0, len)), Catch::Contains("offset"));
  }
  CHECK_THAT(read_error(bytes + "x"), Catch::Contains("unexpected bytes after the declared end at byte offset"));
}

TEST_CASE("a binary trace with any byte changed is rejected", "[trace]") {
  const std::string bytes = to_bytes(small_workload(), TraceFormat::binary);
  CHECK_THAT(read_error(std::string(1, '\x88') + bytes.substr(1)), Catch::Contains("bad magic at byte offset 0"));
  // The version is the u32 at bytes 8..11. Version 1 (per-kernel semaphores, no semaphore_count
  // and no stream) and any later version are refused before the sections are looked at.
  for (const std::uint8_t other : {std::uint8_t{1}, std::uint8_t{3}}) {
    std::string version = bytes;
    version[8] = static_cast<char>(other);
    CHECK_THAT(read_error(version), Catch::Contains("unsupported binary trace version " + std::to_string(other) +
                                                    " at byte offset 8 (this build reads version 2)"));
  }
  std::string body = bytes;
  body[30] ^= 1;
  CHECK_THAT(read_error(body), Catch::Contains("checksum mismatch at byte offset " + std::to_string(bytes.size() - 8)) &&
                                   Catch::Contains("stored 0x") && Catch::Contains("computed 0x"));
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned flip : {0x01u, 0x80u, 0xffu}) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ flip);
      INFO("byte " << i << " ^ " << flip);
      CHECK_THAT(read_error(damaged), Catch::Contains("offset"));
    }
  }
}

// The crafted files below are version-2 byte layouts. Offsets count from the start of the file:
//   0..7 magic, 8..11 version (u32), 12..19 total length (u64), then the sections:
//   20     workload name: a string, i.e. a varint length (here always 0, so one byte 0x00),
//   21     varint semaphore_count (new in version 2; one byte while < 128),
//   then   varint tensor_count, the tensors, varint kernel_count, the kernels.
// A kernel record (version 2 replaced the kernel's num_semaphores varint by `stream`, same place):
//   +0 name "" | +1..3 grid_m/n/z | +4 u8 dtype | +5 stages | +6..7 threads 128 (80 01)
//   +8..9 regs 128 (80 01) | +10 smem | +11 blocks_per_sm | +12 stream | +13 total_flops
//   +14.. block_count, step_count, access_count, dispatch_count, then the records.
// With an empty name, semaphore_count < 128 and no tensors, the single kernel starts at byte 24
// (20 name, 21 semaphore_count, 22 tensor_count, 23 kernel_count), so its dtype is at 28, its
// stream at 36 and its block count at 38.
static_assert(kBinaryTraceVersion == 2, "the crafted traces below are version-2 layouts; recompute their offsets");

TEST_CASE("crafted binary traces with a valid checksum are rejected before allocating", "[trace]") {
  // Workload name "" (byte 20), 0 semaphores (byte 21), then 2^32-1 tensors in five bytes at 22.
  CHECK_THAT(read_error(crafted(bytes_of({0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f}))),
             Catch::Contains("tensor count 4294967295 needs at least") && Catch::Contains("at byte offset 22"));
  // The same after a five-byte semaphore_count (2^32-1, bytes 21..25): read as one field, so the
  // tensor count is found at 26.
  CHECK_THAT(read_error(crafted(bytes_of({0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0xff, 0xff, 0xff, 0xff, 0x0f}))),
             Catch::Contains("tensor count 4294967295 needs at least") && Catch::Contains("at byte offset 26"));
  // No tensors, then 2^32-1 kernels: the kernel count at byte 23.
  CHECK_THAT(read_error(crafted(bytes_of({0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f}))),
             Catch::Contains("kernel count 4294967295 needs at least") && Catch::Contains("at byte offset 23"));
  // No tensors, one kernel whose block count alone is absurd: 2^28-1 blocks (ff ff ff 7f at 38)
  // of at least 5 bytes each, with only the three other (zero) counts left.
  const std::string kernel = workload_prefix(0) + kKernelHead;  // bytes 20..37
  CHECK_THAT(read_error(crafted(kernel + bytes_of({0xff, 0xff, 0xff, 0x7f, 0x00, 0x00, 0x00}))),
             Catch::Contains("block count 268435455 needs at least 1342177275 bytes but only 3 remain at byte offset 38"));
  // Dtype byte out of range: the kernel's +4, i.e. index 8 of `kernel` (4 workload bytes before
  // it), byte 28 of the file.
  std::string dtype = kernel;
  REQUIRE(dtype[8] == 2);  // fp16
  dtype[8] = 9;
  CHECK_THAT(read_error(crafted(dtype + std::string(4, '\0'))), Catch::Contains("compute dtype 9 out of range at byte offset 28"));
  // Varints that never end: the workload name's length at 20, the semaphore_count at 21, and a
  // kernel's stream at 36 (index 16 of `kernel`: everything before it is kept).
  CHECK_THAT(read_error(crafted(std::string(12, '\xff'))),
             Catch::Contains("varint overflows 64 bits (workload name) at byte offset 20"));
  CHECK_THAT(read_error(crafted(std::string(1, '\0') + std::string(12, '\xff'))),
             Catch::Contains("varint overflows 64 bits (workload num_semaphores) at byte offset 21"));
  CHECK_THAT(read_error(crafted(kernel.substr(0, 16) + std::string(12, '\xff'))),
             Catch::Contains("varint overflows 64 bits (kernel stream) at byte offset 36"));
  // Both new fields are 32-bit: 2^32 (80 80 80 80 10) does not fit.
  const std::string two_pow_32 = bytes_of({0x80, 0x80, 0x80, 0x80, 0x10});
  CHECK_THAT(read_error(crafted(std::string(1, '\0') + two_pow_32 + bytes_of({0x00, 0x00}))),
             Catch::Contains("workload num_semaphores 4294967296 does not fit in 32 bits at byte offset 21"));
  CHECK_THAT(read_error(crafted(kernel.substr(0, 16) + two_pow_32 + std::string(5, '\0'))),
             Catch::Contains("kernel stream 4294967296 does not fit in 32 bits at byte offset 36"));
}

TEST_CASE("a binary semaphore_count is only a number; steps must name semaphores below it", "[trace]") {
  // The smallest kernel with a step: one block of one step (no accesses) that posts semaphore 0.
  // Step head 0x02 = "post present", 0 accesses; then varint post_sem.
  const std::string posts0 = bytes_of({0x02, 0x00});
  // The writer produces exactly the documented layout.
  Workload w;
  w.num_semaphores = 1;
  Kernel k;
  add_block(k, 0, 0, 0);
  add_step(k, 0, {}, kNoSem, 0, 0);
  k.dispatch = {0};
  w.kernels.push_back(k);
  CHECK(to_bytes(w, TraceFormat::binary) == crafted(workload_prefix(1) + one_step_kernel(posts0)));
  CHECK(from_bytes(crafted(workload_prefix(1) + one_step_kernel(posts0))) == w);

  // 2^32-1 semaphores: the reader stores the number and allocates nothing for it (a reader that
  // did would need 16 GiB here); it is a valid workload and round trips.
  const std::string huge = crafted(workload_prefix(0xffffffffu) + one_step_kernel(posts0));
  const auto t0 = std::chrono::steady_clock::now();
  const Workload big = from_bytes(huge);
  INFO("took " << ms_since(t0) << " ms");
  CHECK(big.num_semaphores == 0xffffffffu);
  REQUIRE(big.kernels.size() == 1);
  CHECK(big.kernels[0].steps[0].post_sem == 0);
  CHECK(to_bytes(big, TraceFormat::binary) == huge);

  // A step naming a semaphore >= semaphore_count passes the parser (the field is just a u32) and
  // is rejected by validate_workload, which names the file, kernel and step.
  CHECK_THAT(read_error(crafted(workload_prefix(0) + one_step_kernel(posts0))),
             Catch::Contains("t.trace: kernel 0 (): step 0 names a semaphore out of range"));
  // Head 0x01 = "wait present": varint wait_sem 1, varint wait_value 1; only semaphore 0 exists.
  CHECK_THAT(read_error(crafted(workload_prefix(1) + one_step_kernel(bytes_of({0x01, 0x01, 0x01})))),
             Catch::Contains("t.trace: kernel 0 (): step 0 names a semaphore out of range"));
  CHECK_THAT(read_error(crafted(workload_prefix(0xfffffffeu) + one_step_kernel(bytes_of({0x02, 0xfe, 0xff, 0xff, 0xff, 0x0f})))),
             Catch::Contains("step 0 names a semaphore out of range"));
  // The writers refuse such a workload in both forms.
  Workload bad = w;
  bad.kernels[0].steps[0].post_sem = 1;
  for (TraceFormat fmt : {TraceFormat::binary, TraceFormat::text}) {
    std::ostringstream out;
    CHECK_THROWS_WITH(write_trace(bad, out, fmt), Catch::Contains("step 0 names a semaphore out of range"));
  }
}

TEST_CASE("many tensors and many kernels cost linear time to read", "[trace]") {
  // 20000 minimal tensors and 20000 empty kernels: per-kernel work proportional to the tensor
  // count would take minutes here. Every record has exactly its minimum size (tensor 9 bytes,
  // kernel 16), so the count checks just pass.
  std::string body("\x00\x00\xa0\x9c\x01", 5);  // name "", 0 semaphores, 20000 tensors
  for (int t = 0; t < 20000; ++t) body += std::string("\x00\x00\x01\x01\x01\x10\x00\x01\x00", 9);
  body += "\xa0\x9c\x01";  // 20000 kernels
  for (int k = 0; k < 20000; ++k) body += std::string("\x00\x01\x01\x01\x02\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00", 16);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THAT(read_error(crafted(body)), Catch::Contains("kernel 0 (): no blocks"));
  INFO("took " << ms_since(t0) << " ms");
}

TEST_CASE("damaged and random inputs never crash the readers", "[trace]") {
  std::mt19937_64 rng(20240611);
  const std::string bin = to_bytes(small_workload(), TraceFormat::binary);
  const std::string wide = to_bytes(wide_workload(), TraceFormat::binary);
  const std::string text = doc_example();
  auto byte = [&] { return static_cast<char>(rng() & 0xff); };
  // Binary edits behind a valid checksum: replaced, inserted and removed bytes.
  for (int round = 0; round < 20000; ++round) {
    std::string b = round % 2 ? bin : wide;
    b.resize(b.size() - 8);
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = 20 + rng() % (b.size() - 20);
      switch (rng() % 3) {
        case 0: b[at] = byte(); break;
        case 1: b.insert(b.begin() + at, byte()); break;
        default: b.erase(b.begin() + at); break;
      }
    }
    read_survives(reseal(b + std::string(8, '\0')));
  }
  // Pure garbage, sealed and not.
  for (int round = 0; round < 5000; ++round) {
    std::string g(rng() % 200, '\0');
    for (char& c : g) c = byte();
    read_survives(g);
    read_survives(reseal(bin.substr(0, 20) + g + std::string(8, '\0')));
  }
  // Text edits: random bytes, and lines dropped or repeated.
  for (int round = 0; round < 5000; ++round) {
    std::string t = text;
    for (int e = 0; e < 3; ++e) {
      const std::size_t at = rng() % t.size();
      if (rng() % 2) t[at] = " 0x-#\"\n9:=ABC"[rng() % 13];
      else t[at] = byte();
    }
    read_survives(t);
    std::string lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      const auto r = rng() % 20;
      if (r == 0) continue;
      lines += line + "\n";
      if (r == 1) lines += line + "\n";
    }
    read_survives(lines);
  }
}

TEST_CASE("a large GEMM trace is compact and fast", "[trace]") {
  const Workload w = large_workload();
  const Kernel& k = w.kernels[0];
  REQUIRE(k.num_blocks() == 4096);
  REQUIRE(k.steps.size() == 4096 * 129);
  INFO("accesses " << k.accesses.size());

  auto t0 = std::chrono::steady_clock::now();
  const std::string bin = to_bytes(w, TraceFormat::binary);
  const double write_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  const Workload back = from_bytes(bin);
  const double read_ms = ms_since(t0);
  CHECK(back == w);
  WARN("binary trace of " << k.num_blocks() << " blocks, " << k.steps.size() << " steps, " << k.accesses.size()
                          << " accesses: " << bin.size() << " bytes (" << bin.size() / 1e6 << " MB), write "
                          << write_ms << " ms, read " << read_ms << " ms");
  CHECK(bin.size() < 30u * 1000 * 1000);

  t0 = std::chrono::steady_clock::now();
  const std::string text = to_bytes(w, TraceFormat::text);
  const double text_write_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  CHECK(from_bytes(text) == w);
  WARN("text trace: " << text.size() / 1e6 << " MB, write " << text_write_ms << " ms, read " << ms_since(t0) << " ms");
}
