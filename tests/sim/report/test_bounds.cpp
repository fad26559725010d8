#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "sim/report/bounds.hpp"
#include "tests/sim/report/workload_fixtures.hpp"

using namespace tilesim;
using tilesim::test::kernel;
using tilesim::test::tensor;

namespace {

/// Y = (X . W1) . W2, unfused: k0 writes H, k1 reads it back.
///   X 64x128 fp16 = 16384 B, W1 128x256 = 65536 B, H 64x256 = 32768 B, W2 256x128 = 65536 B,
///   Y 64x128 fp32 = 32768 B.
Workload chain() {
  Workload w;
  w.tensors = {tensor("X", 64, 128), tensor("W1", 128, 256), tensor("H", 64, 256), tensor("W2", 256, 128),
               tensor("Y", 64, 128, 32)};
  w.kernels.push_back(kernel("k0", {0, 1}, {2}, w));
  w.kernels.push_back(kernel("k1", {2, 3}, {4}, w));
  return w;
}

}  // namespace

TEST_CASE("bounds: GEMM I/O bound of Smith et al. for 1024^3 fp16 in 1 MiB", "[report]") {
  // S = 1 MiB / 2 B = 2^19 words, sqrt(S) = 2^9 sqrt(2).
  // 2 M N K / sqrt(S) = 2^31 / (2^9 sqrt 2) = 2^21 sqrt 2 = 2965820.80 words; - 2 S = 1048576
  // -> 1917244.80 words x 2 B = 3834489.60 B, rounded up: 3834490 B (below the 6 MiB compulsory).
  const GemmShape g{1024, 1024, 1024, 1, 16, 16};
  CHECK(gemm_io_lower_bound_bytes(g, 1 << 20) == 3834490);
  // A batch is one computation: 4 x 2965820.80 - 1048576 = 10814707.20 words -> 21629415 B, more
  // than four separate bounds (4 x 3834489.60) as the -2S start-up is paid once.
  CHECK(gemm_io_lower_bound_bytes({1024, 1024, 1024, 4, 16, 16}, 1 << 20) == 21629415);
  // The word is the smaller element: an fp32 output changes nothing, an 8-bit one doubles S to
  // 2^20 words: 2^31 / 2^10 - 2^21 = 0, no bound at all.
  CHECK(gemm_io_lower_bound_bytes({1024, 1024, 1024, 1, 16, 32}, 1 << 20) == 3834490);
  CHECK(gemm_io_lower_bound_bytes({1024, 1024, 1024, 1, 16, 8}, 1 << 20) == 0);
  CHECK(gemm_io_lower_bound_bytes({}, 1 << 20) == 0);
  CHECK(gemm_io_lower_bound_bytes(g, 0) == 0);
  // The largest problems overflow 64-bit M*N*K; the bound must stay finite and monotone.
  const std::uint64_t big = gemm_io_lower_bound_bytes({4194304, 4194304, 4194304, 1, 16, 16}, 50u << 20);
  CHECK(big > gemm_io_lower_bound_bytes({4194304, 4194304, 1048576, 1, 16, 16}, 50u << 20));
}

namespace {

// Words moved by a schedule that keeps the smaller operand in fast memory with one row (or
// column) of the other and one C entry: the other operand is read once, a row (column) at a
// time, each C entry made start to finish and stored. nullopt when that does not fit in S words.
std::optional<double> resident_operand_words(const GemmShape& g, double s) {
  const double m = g.m, n = g.n, k = g.k;
  const bool keep_b = k * n <= m * k;
  if ((keep_b ? k * n : m * k) + k + 1 > s) return std::nullopt;
  return m * k + k * n + m * n;
}

}  // namespace

TEST_CASE("bounds: the GEMM I/O bound stays below a schedule that keeps an operand on chip", "[report]") {
  const std::uint64_t l2 = 52428800;  // h100: 50 MiB, S = 26214400 fp16 words
  const double s = l2 / 2.0;
  // The two shapes where Kwasniewski et al.'s 2MNK/sqrt(S) + MN (SC'19) exceeded what a schedule moves.
  const GemmShape transformer{8192, 6144, 4096, 1, 16, 16};  // orders_transformer_gemm.yaml: B (25.2M words) fits
  const GemmShape gate_up{4096, 2 * 14336, 4096, 1, 16, 16};  // Llama-3-8B gate_up at M = 4096: X (16.8M) fits
  for (const GemmShape& g : {transformer, gate_up}) {
    const std::optional<double> schedule = resident_operand_words(g, s);
    REQUIRE(schedule);
    const double old_formula = 2.0 * g.m * g.n * g.k / std::sqrt(s) + double(g.m) * g.n;
    CHECK(old_formula > *schedule);  // 131M vs 109M, 305M vs 252M words: not a lower bound
    INFO(g.m << "x" << g.n << "x" << g.k << ": schedule " << *schedule << " words");
    CHECK(gemm_io_lower_bound_bytes(g, l2) > 0);
    CHECK(gemm_io_lower_bound_bytes(g, l2) <= 2 * *schedule);
  }
  CHECK(resident_operand_words(transformer, s) == 109051904.0);
  CHECK(gemm_io_lower_bound_bytes(transformer, l2) == 56203674);  // 80530636.8 - 52428800 words, x 2 B
  CHECK(gemm_io_lower_bound_bytes(gate_up, l2) == 270952039);     // 187904819.2 - 52428800 words, x 2 B
  // Every shape of a grid whose smaller operand fits, at three cache sizes: never above it.
  for (const std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{6} << 20, std::uint64_t{l2}})
    for (const std::uint64_t m : {64, 512, 4096, 32768})
      for (const std::uint64_t n : {64, 512, 4096, 32768})
        for (const std::uint64_t k : {64, 512, 4096}) {
          const GemmShape g{m, n, k, 1, 16, 16};
          const std::optional<double> schedule = resident_operand_words(g, bytes / 2.0);
          if (!schedule) continue;
          INFO(m << "x" << n << "x" << k << " in " << bytes << " B");
          CHECK(gemm_io_lower_bound_bytes(g, bytes) <= 2 * *schedule);
        }
}

TEST_CASE("bounds: compulsory traffic of a two-kernel chain, its intermediate apart", "[report]") {
  const RunBounds b = compute_traffic_bounds(chain(), 1 << 20);
  REQUIRE(b.kernels.size() == 2);
  // k0 reads X and W1: 16384 + 65536; its H (32768) is read back later, so it may stay in L2.
  CHECK(b.kernels[0].compulsory_bytes == 81920);
  CHECK(b.kernels[0].intermediate_bytes == 32768);
  // k1 reads W2 and writes Y: 65536 + 32768; H (32768) came from k0.
  CHECK(b.kernels[1].compulsory_bytes == 98304);
  CHECK(b.kernels[1].intermediate_bytes == 32768);
  // Whole chain: X, W1, W2 read once, Y written once = 16384 + 65536 + 65536 + 32768. H, written
  // and read once by an unfused chain, is reported apart: 2 x 32768.
  CHECK(b.total.compulsory_bytes == 180224);
  CHECK(b.total.intermediate_bytes == 65536);
  CHECK(b.total.io_bound_bytes == 0);
  CHECK(b.total.bound_bytes() == 180224);
}

TEST_CASE("bounds: a tensor a kernel loads and stores (split-K partials) is written once", "[report]") {
  Workload w;
  w.tensors = {tensor("A", 128, 64), tensor("B", 64, 128), tensor("C", 128, 128, 32)};
  w.kernels.push_back(kernel("splitk", {0, 1, 2}, {2}, w));
  const RunBounds b = compute_traffic_bounds(w, 1 << 20);
  // A 16384 + B 16384 read, C 65536 written; C's read-back of partials is not compulsory.
  CHECK(b.kernels[0].compulsory_bytes == 98304);
  CHECK(b.total.compulsory_bytes == 98304);
  CHECK(b.total.intermediate_bytes == 0);
}

TEST_CASE("bounds: GEMM shapes per kernel give the I/O bound, the run takes the largest", "[report]") {
  const Workload w = chain();
  // k0: M=64, N=256, K=128 fp16 in S = 1 MiB (2^19 words, sqrt = 724.077): 2 x 64 x 256 x 128 /
  // 724.077 = 5792.6 words, less 2 S: negative, so no I/O bound (the whole problem fits).
  const RunBounds b = compute_traffic_bounds(w, 1 << 20, {GemmShape{64, 256, 128, 1, 16, 16}, std::nullopt});
  CHECK(b.kernels[0].io_bound_bytes == 0);
  CHECK(b.kernels[1].io_bound_bytes == 0);
  CHECK(b.total.io_bound_bytes == 0);
  // The compulsory traffic (81920) then is the bound.
  CHECK(b.kernels[0].bound_bytes() == 81920);
  CHECK(*dram_over_bound(2 * 81920, b.kernels[0]) == Approx(2.0));
  // With a smaller fast memory the I/O bound wins: S = 4 KiB = 2048 words, sqrt = 45.25:
  //   4194304 / 45.2548 = 92681.9 - 4096 = 88585.9 words x 2 B = 177171.8 B -> 177172 B > 81920 B
  const RunBounds small = compute_traffic_bounds(w, 4096, {GemmShape{64, 256, 128, 1, 16, 16}, std::nullopt});
  CHECK(small.kernels[0].io_bound_bytes == 177172);
  CHECK(small.total.io_bound_bytes == 177172);
  CHECK(small.kernels[0].bound_bytes() == 177172);
  CHECK_FALSE(dram_over_bound(100, TrafficBounds{}).has_value());
  CHECK_THROWS_AS(compute_traffic_bounds(w, 1 << 20, {std::nullopt}), std::invalid_argument);
}
