// The GEMM-chain I/O bound (sim/report/chain_bound.hpp, docs/architecture.md "The chain bound"):
// its formula's limits and monotonicity, the chains it finds in each FFN form, and a small FFN
// whose simulated DRAM traffic attains the run's bound.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/config/experiment.hpp"
#include "sim/report/bounds.hpp"
#include "sim/report/chain_bound.hpp"
#include "tests/sim/report/workload_fixtures.hpp"

using namespace tilesim;

namespace {

Workload load(const std::string& text) { return *load_experiment_text(text, "exp.yaml", ".", {}).points.at(0).workload; }

std::string ffn(const std::string& extra, const std::string& sync = "stream") {
  return "workload: {kind: ffn, d: 256, f: 512, m: 128, gemm0: {tile: [64, 128, 64]}, gemm1: {tile: [64, 128, 64]}" +
         extra + "}\nsync: {kind: " + sync + "}\n";
}

ChainShape llama_like(std::uint64_t m) {
  ChainShape c;
  c.m = m;
  c.k0 = 4096;
  c.n0 = 2 * 14336;
  c.k1 = 14336;
  c.n1 = 4096;
  return c;
}

}  // namespace

TEST_CASE("chain bound: sqrt(2) n / sqrt(S) when both contracted dimensions dwarf sqrt(S)", "[report]") {
  // With k0, k1 >> sqrt(S) the complete-entry terms vanish and a segment of T = alpha S I/Os holds
  // at most ((2 + alpha) S / 3)^1.5 products; T (n / P - 1) peaks at alpha = 4: sqrt(2) n / sqrt(S)
  // words (less alpha S, negligible here). S = 2 MiB of fp16 = 2^20 words, sqrt(S) = 1024;
  // n = 2^20 x (2^20 x 2^20 + 2^20 x 2^20) = 2^61 products: sqrt(2) x 2^51 words x 2 bytes.
  ChainShape c;
  c.m = c.k0 = c.n0 = c.k1 = c.n1 = 1u << 20;
  const double expected = std::sqrt(2.0) * std::exp2(51) * 2;
  const double got = static_cast<double>(chain_io_lower_bound_bytes(c, 2u << 20));
  CHECK(got <= expected);
  CHECK(got == Approx(expected).epsilon(0.01));  // the interval split of zeta costs under 1%
}

TEST_CASE("chain bound: non-increasing in the fast memory, non-decreasing in the rows", "[report]") {
  std::uint64_t prev = ~std::uint64_t{0};
  for (std::uint64_t s = 1u << 16; s <= (1ull << 32); s *= 2) {
    const std::uint64_t q = chain_io_lower_bound_bytes(llama_like(8192), s);
    CHECK(q <= prev);
    prev = q;
  }
  CHECK(prev == 0);  // 4 GiB holds every product of one segment
  std::uint64_t last = 0;
  for (std::uint64_t m : {16, 512, 4096, 8192, 65536}) {
    const std::uint64_t q = chain_io_lower_bound_bytes(llama_like(m), 6u << 20);
    CHECK(q >= last);
    last = q;
  }
  CHECK(last > 0);
  CHECK(chain_io_lower_bound_bytes(ChainShape{}, 1 << 20) == 0);
  CHECK(chain_io_lower_bound_bytes(llama_like(8192), 0) == 0);
  // A consumer output read again later may stay on chip too: a weaker (smaller) bound.
  ChainShape open = llama_like(65536);
  open.consumer_output_final = false;
  CHECK(chain_io_lower_bound_bytes(open, 6u << 20) < chain_io_lower_bound_bytes(llama_like(65536), 6u << 20));
}

TEST_CASE("chain bound: below a schedule that keeps both weights on chip", "[report]") {
  // S = 2^20 words (2 MiB of fp16), k0 = 100, f = 4000, m = 10^6. Keep W0 and W1 on chip
  // (800,000 words), stream X a row at a time, make each H[i, j] and fold it into Y's row at
  // once: 10^8 (X) + 400,000 (W0) + 400,000 (W1) + 10^8 (Y) words = 201.6 MB moved, H never.
  ChainShape c;
  c.m = 1000000;
  c.k0 = c.n1 = 100;
  c.n0 = c.k1 = 4000;
  const std::uint64_t schedule = (2ull * 100000000 + 800000) * 2;
  const std::uint64_t q = chain_io_lower_bound_bytes(c, 2u << 20);
  CHECK(q > 0);
  CHECK(q <= schedule);
  // GEMM0's input side alone (2 m n0 k0 / sqrt(S), 1.6 GB) exceeds it: not a bound for a chain.
  const GemmShape g0{c.m, c.n0, c.k0, 1, 16, 0};
  CHECK(gemm_io_lower_bound_bytes(g0, 2u << 20) > schedule);
}

TEST_CASE("chain bound: the chains of each FFN form are found", "[report]") {
  SECTION("gated, fused gate+up: gate_up -> gemm1, weights' halves counted") {
    const auto chains = find_gemm_chains(load(ffn(", gated: true")));
    REQUIRE(chains.size() == 1);
    const ChainShape& s = chains[0].shape;
    CHECK((s.m == 128 && s.k0 == 256 && s.n0 == 1024 && s.k1 == 512 && s.n1 == 256));
    CHECK(s.consumer_output_final);
    CHECK(chains[0].producer.kernel == 0);
    CHECK(chains[0].consumer.kernel == 1);
  }
  SECTION("gated, separate: up -> gemm1 (the gate kernel's products are left out)") {
    const auto chains = find_gemm_chains(load(ffn(", gated: true, gate_fusion: separate")));
    REQUIRE(chains.size() == 1);
    CHECK(chains[0].shape.n0 == 512);
    CHECK(chains[0].producer.kernel == 1);
  }
  SECTION("gated, concat: GEMM1 reads the [G | U] halves, k1 = f") {
    const auto chains = find_gemm_chains(load(ffn(", gated: true, gate_fusion: concat")));
    REQUIRE(chains.size() == 1);
    CHECK(chains[0].shape.n0 == 1024);
    CHECK(chains[0].shape.k1 == 512);
  }
  SECTION("fused dataflow kernel: both GEMMs in kernel 0, which gets the bound too") {
    const Workload w = load(ffn(", gated: false", "dataflow"));
    const auto chains = find_gemm_chains(w);
    REQUIRE(chains.size() == 1);
    CHECK(chains[0].producer.kernel == 0);
    CHECK(chains[0].consumer.kernel == 0);
    const RunBounds b = compute_traffic_bounds(w, 64 << 10, infer_gemm_shapes(w));
    CHECK(b.kernels[0].io_bound_bytes == 0);  // not one GEMM
    CHECK(b.kernels[0].chain_io_bound_bytes > 0);
    CHECK(b.kernels[0].chain_io_bound_bytes == b.total.chain_io_bound_bytes);
  }
  SECTION("three GEMMs in a row: the first pair's Y feeds the third GEMM, which makes no chain") {
    // Z = ((X . W0) . W1) . W2: H . W1 -> Y is a chain whose Y is read again (not final);
    // Y . W2 -> Z is not a chain of the bound, as its producer's A (H) is made on chip.
    Workload w;
    w.tensors = {test::tensor("X", 64, 128), test::tensor("W0", 128, 256), test::tensor("H", 64, 256),
                 test::tensor("W1", 256, 128), test::tensor("Y", 64, 128), test::tensor("W2", 128, 64),
                 test::tensor("Z", 64, 64)};
    w.kernels = {test::kernel("k0", {0, 1}, {2}, w), test::kernel("k1", {2, 3}, {4}, w), test::kernel("k2", {4, 5}, {6}, w)};
    REQUIRE(find_gemm_ops(w).size() == 3);
    const auto chains = find_gemm_chains(w);
    REQUIRE(chains.size() == 1);
    CHECK(chains[0].consumer.kernel == 1);
    CHECK_FALSE(chains[0].shape.consumer_output_final);
    CHECK((chains[0].shape.k0 == 128 && chains[0].shape.n0 == 256 && chains[0].shape.k1 == 256 && chains[0].shape.n1 == 128));
  }
  SECTION("a single GEMM has no chain, and its bounds are unchanged") {
    const Workload w = load("workload: {kind: gemm, m: 1024, n: 1024, k: 1024, tile: [128, 128, 64]}\n");
    CHECK(find_gemm_chains(w).empty());
    const RunBounds b = compute_traffic_bounds(w, 1 << 20, infer_gemm_shapes(w));
    CHECK(b.total.chain_io_bound_bytes == 0);
    CHECK(b.total.io_bound_bytes == 3834490);  // test_bounds.cpp's 1024^3 in 1 MiB
    CHECK(b.total.compulsory_bytes == 6291456);
    CHECK(b.total.bound_bytes() == 6291456);  // the compulsory traffic, above the I/O bound
  }
}

TEST_CASE("chain bound: the run's bound takes the chain bound when it is the largest", "[report]") {
  // A small fast memory (64 KiB = 32768 words, sqrt 181 < k0 = 256) makes the chain bound
  // exceed both the compulsory traffic and every single-GEMM bound of the stream-ordered FFN.
  const Workload w = load("workload: {kind: ffn, d: 1024, f: 4096, m: 4096, gated: false, gemm0: {tile: [128, 128, 64]},"
                          " gemm1: {tile: [128, 128, 64]}}\n");
  const RunBounds b = compute_traffic_bounds(w, 64 << 10, infer_gemm_shapes(w));
  CHECK(b.total.chain_io_bound_bytes > b.total.compulsory_bytes);
  CHECK(b.total.chain_io_bound_bytes > b.total.io_bound_bytes);
  CHECK(b.total.bound_bytes() == b.total.chain_io_bound_bytes);
  CHECK(b.kernels[0].chain_io_bound_bytes == 0);  // a chain across kernels bounds the run only
  CHECK(b.kernels[1].chain_io_bound_bytes == 0);
}

TEST_CASE("chain bound: a decode FFN's DRAM traffic attains the run's bound within 5%", "[report]") {
  // m = 16, d = 512, f = 1024, fp16 on an H100 (50 MiB L2): everything fits, so the bound is
  // the compulsory traffic, X + W0 + W1 read once and Y written once:
  //   X 16x512x2 = 16384, W0 512x1024x2 = 1048576, W1 1024x512x2 = 1048576, Y 16384 -> 2129920 B.
  // The chain bound is 0 here: n = 16 x (1024 x 512 + 512 x 1024) = 16.8M products, fewer than
  // one segment holds ((2/3 S)^1.5 = 7.3e10 with S = 26.2M words).
  // The simulator also writes H (16x1024x2 = 32768 B) back once, as its L2 writes back every
  // dirty line, so it moves 2162688 B = 1.0154 x the bound.
  for (const char* sync : {"stream", "dataflow"}) {
    INFO(sync);
    const Experiment e = load_experiment_text(
        "arch: h100\nworkload: {kind: ffn, d: 512, f: 1024, m: 16, gated: false, gemm0: {tile: [16, 128, 64]},"
        " gemm1: {tile: [16, 128, 64]}}\nsync: {kind: " + std::string(sync) + "}\n",
        "exp.yaml", ".", {});
    const ExperimentPoint& p = e.points.at(0);
    const RunBounds b = compute_traffic_bounds(*p.workload, p.arch.l2.bytes, infer_gemm_shapes(*p.workload));
    CHECK(b.total.compulsory_bytes == 2129920);
    CHECK(b.total.chain_io_bound_bytes == 0);
    CHECK(b.total.bound_bytes() == 2129920);
    const SimResult r = simulate(*p.workload, p.arch, p.options);
    std::uint64_t dram = 0;
    for (const KernelStats& k : r.kernels) dram += k.mem.dram_read_bytes + k.mem.dram_write_bytes;
    CHECK(dram >= b.total.bound_bytes());
    CHECK(static_cast<double>(dram) <= 1.05 * static_cast<double>(b.total.bound_bytes()));
    CHECK(dram == 2162688);
  }
}
