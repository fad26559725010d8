#include <catch2/catch.hpp>

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

TEST_CASE("bounds: GEMM I/O bound of Kwasniewski et al. for 1024^3 fp16 in 1 MiB", "[report]") {
  // S = 1 MiB / 2 B = 2^19 elements, sqrt(S) = 2^9 sqrt(2).
  // 2 M N K / sqrt(S) = 2^31 / (2^9 sqrt 2) = 2^21 sqrt 2 = 2965820.80 elements; + M N = 2^20 = 1048576
  // -> 4014396.80 elements x 2 B = 8028793.60 B, rounded up: 8028794 B (7.66 MiB, vs 6 MiB compulsory).
  const GemmShape g{1024, 1024, 1024, 1, 16, 16};
  CHECK(gemm_io_lower_bound_bytes(g, 1 << 20) == 8028794);
  // Batches are independent problems: the bound adds up.
  CHECK(gemm_io_lower_bound_bytes({1024, 1024, 1024, 4, 16, 16}, 1 << 20) == 32115175);  // ceil(4 x 8028793.60)
  // fp32 output: M N term doubles to 4 MiB: 2965820.80 x 2 + 1048576 x 4 = 10125945.60 -> 10125946
  CHECK(gemm_io_lower_bound_bytes({1024, 1024, 1024, 1, 16, 32}, 1 << 20) == 10125946);
  CHECK(gemm_io_lower_bound_bytes({}, 1 << 20) == 0);
  CHECK(gemm_io_lower_bound_bytes(g, 0) == 0);
  // The largest problems overflow 64-bit M*N*K; the bound must stay finite and monotone.
  const std::uint64_t big = gemm_io_lower_bound_bytes({4194304, 4194304, 4194304, 1, 16, 16}, 50u << 20);
  CHECK(big > gemm_io_lower_bound_bytes({4194304, 4194304, 1048576, 1, 16, 16}, 50u << 20));
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
  // k0: M=64, N=256, K=128 fp16 in S = 1 MiB (2^19 elements, sqrt = 724.077):
  //   2 x 64 x 256 x 128 / 724.077 = 5792.6 elements x 2 B = 11585.2 B, + 64 x 256 x 2 B = 32768 -> 44354 B
  const RunBounds b = compute_traffic_bounds(w, 1 << 20, {GemmShape{64, 256, 128, 1, 16, 16}, std::nullopt});
  CHECK(b.kernels[0].io_bound_bytes == 44354);
  CHECK(b.kernels[1].io_bound_bytes == 0);
  CHECK(b.total.io_bound_bytes == 44354);
  // Here the I/O bound is below the compulsory traffic (81920), which then is the bound.
  CHECK(b.kernels[0].bound_bytes() == 81920);
  CHECK(*dram_over_bound(2 * 81920, b.kernels[0]) == Approx(2.0));
  // With a smaller fast memory the I/O bound wins: S = 4 KiB = 2048 elements, sqrt = 45.25:
  //   4194304 / 45.2548 = 92681.9 elements x 2 B = 185363.8 B + 32768 B -> 218132 B > 81920 B
  const RunBounds small = compute_traffic_bounds(w, 4096, {GemmShape{64, 256, 128, 1, 16, 16}, std::nullopt});
  CHECK(small.kernels[0].io_bound_bytes == 218132);
  CHECK(small.kernels[0].bound_bytes() == 218132);
  CHECK_FALSE(dram_over_bound(100, TrafficBounds{}).has_value());
  CHECK_THROWS_AS(compute_traffic_bounds(w, 1 << 20, {std::nullopt}), std::invalid_argument);
}
