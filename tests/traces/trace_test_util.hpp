#pragma once
// Shared by the trace tests: hand-built workloads, byte-level helpers for crafted binary
// traces (version-3 layouts), and the text example of docs/trace-format.md.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>
#include "common/error.hpp"
#include "traces/trace.hpp"

namespace tilesim::test {

using namespace tilesim;


inline Tensor make_tensor(std::string name, Addr base, std::uint32_t rows, std::uint32_t cols, std::uint32_t batch,
                   std::uint16_t bits, bool col_major) {
  Tensor t{std::move(name), base, rows, cols, batch, bits, col_major, col_major ? rows : cols, 0};
  t.batch_stride = batch > 1 ? t.bytes_per_batch() + 256 : 0;
  return t;
}

inline void add_step(Kernel& k, std::uint64_t flops, std::vector<TileAccess> accesses, std::uint32_t wait_sem = kNoSem,
              std::uint32_t wait_value = 0, std::uint32_t post_sem = kNoSem) {
  // By name: Step has more fields than these (the element work), in between.
  Step s;
  s.first_access = static_cast<std::uint32_t>(k.accesses.size());
  s.num_accesses = static_cast<std::uint32_t>(accesses.size());
  s.flops = flops;
  s.wait_sem = wait_sem;
  s.wait_value = wait_value;
  s.post_sem = post_sem;
  k.accesses.insert(k.accesses.end(), accesses.begin(), accesses.end());
  k.steps.push_back(s);
  k.blocks.back().num_steps++;
  k.total_flops += flops;
}

inline void add_block(Kernel& k, std::uint32_t m, std::uint32_t n, std::uint32_t z) {
  k.blocks.push_back(Block{static_cast<std::uint32_t>(k.steps.size()), 0, m, n, z});
}

// Split-K GEMM over a batch of 2: A fp16 row-major, B int4 col-major, C fp32 output; the second
// K half of each tile waits on a semaphore the first half posts. Dispatch has early exits.
inline Workload small_workload() {
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
inline Workload wide_workload() {
  Workload w;
  w.name = "";
  for (int t = 0; t < 40; ++t) w.tensors.push_back(make_tensor(t == 7 ? "" : "t \"" + std::to_string(t), 0x100000ull * t, 32, 32, 1, 8, t % 2));
  Kernel k;
  k.name = "wide\tkernel";
  k.grid_m = 3;
  k.total_flops = 123;
  std::vector<TileAccess> many;
  // Every third a multicast slice, tensors around the inline limit (15) among them.
  for (std::uint32_t i = 0; i < 20; ++i)
    many.push_back({39 - i, 0, i, 31 - i, 1, 1, i % 3 == 1 ? AccessKind::multicast : AccessKind::load});
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
inline Workload large_workload() {
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

inline std::string to_bytes(const Workload& w, TraceFormat fmt) {
  std::ostringstream out;
  write_trace(w, out, fmt);
  return out.str();
}

inline Workload from_bytes(const std::string& bytes, const std::string& origin = "t.trace") {
  std::istringstream in(bytes);
  return read_trace(in, origin);
}

// The InputError message of reading `bytes`; fails the test if it parses or throws anything else.
inline std::string read_error(const std::string& bytes, const std::string& origin = "t.trace") {
  try {
    from_bytes(bytes, origin);
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("expected an InputError");
  return {};
}

// Reads `bytes`, which may or may not be valid: success or InputError are both fine.
/// Reads `bytes`: a refusal must be an InputError (anything else escapes and fails the test),
/// and what the reader accepts must be a workload the simulator can take (validate_workload
/// passes). Returns whether it was accepted.
inline bool read_survives(const std::string& bytes) {
  Workload w;
  try {
    w = from_bytes(bytes);
  } catch (const InputError&) {
    return false;
  }
  CHECK_NOTHROW(validate_workload(w, "t.trace"));
  return true;
}

// Re-seals a binary trace whose body was edited: fixes the declared length and the checksum,
// so the structural checks are what stand between the edit and the reader.
inline std::string reseal(std::string bytes) {
  if (bytes.size() < 28) bytes.resize(28, '\0');
  bytes.resize(bytes.size() - 8);
  const std::uint64_t total = bytes.size() + 8;
  for (int i = 0; i < 8; ++i) bytes[12 + i] = static_cast<char>(total >> (8 * i));
  const std::uint64_t sum = trace_checksum(bytes);
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>(sum >> (8 * i)));
  return bytes;
}

inline std::string bytes_of(std::initializer_list<unsigned> v) {
  std::string s;
  for (unsigned b : v) s.push_back(static_cast<char>(b));
  return s;
}

inline std::string varint_bytes(std::uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s.push_back(static_cast<char>(v | 0x80));
  s.push_back(static_cast<char>(v));
  return s;
}

// A version-3 binary trace of the section bytes `body`: the 20-byte header (magic, version 3,
// length) before it, and the length and checksum fixed by reseal.
inline std::string crafted(const std::string& body) {
  std::string head(kBinaryTraceMagic, kBinaryTraceMagic + 8);
  head += std::string(1, static_cast<char>(kBinaryTraceVersion)) + std::string(3, '\0') + std::string(8, '\0');
  return reseal(head + body + std::string(8, '\0'));
}

// The workload's first section bytes for one kernel and no tensors: name "", semaphore_count,
// tensor_count 0, kernel_count 1.
inline std::string workload_prefix(std::uint32_t semaphores) {
  return std::string(1, '\0') + varint_bytes(semaphores) + bytes_of({0x00, 0x01});
}

// A kernel record up to its counts (17 bytes): name "", grid 1x1x1, dtype fp16 (2), main loop
// none (ff: the arch's default), efficiency 0 (the arch's), flags 0, stages 1, threads 128
// (80 01), regs 128 (80 01), smem 0, blocks_per_sm 0, stream 0, total_flops 0.
inline const std::string kKernelHead =
    bytes_of({0x00, 0x01, 0x01, 0x01, 0x02, 0xff, 0x00, 0x00, 0x01, 0x80, 0x01, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00});

// A whole kernel of one block and one step with no accesses: counts 1 block, 1 step, 0 accesses,
// 1 dispatch entry; the block (1 step, all residuals 0); `step` (head byte and its fields); the
// dispatch entry (identity: residual 0).
inline std::string one_step_kernel(const std::string& step) {
  return kKernelHead + bytes_of({0x01, 0x01, 0x00, 0x01}) + bytes_of({0x01, 0x00, 0x00, 0x00, 0x00}) + step +
         std::string(1, '\0');
}

inline std::string doc_example() {
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

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}


}  // namespace tilesim::test
