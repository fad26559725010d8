#include <catch2/catch.hpp>

#include "sim/config/experiment.hpp"
#include "sim/report/bounds.hpp"

using namespace tilesim;

namespace {
Workload load(const std::string& text) { return *load_experiment_text(text, "exp.yaml", ".", {}).points.at(0).workload; }
}  // namespace

TEST_CASE("GEMM shapes are read off the kernels' operand tensors", "[report]") {
  const Workload g = load("workload: {kind: gemm, m: 256, n: 512, k: 1024, batch: 3, tile: [128, 128, 64]}\n");
  const auto s = infer_gemm_shape(g, g.kernels[0]);
  REQUIRE(s);
  CHECK(s->m == 256);
  CHECK(s->n == 512);
  CHECK(s->k == 1024);
  CHECK(s->batch == 3);
  // The fused gate+up projection is a GEMM with twice the columns; GEMM1 is [M x f].[f x d].
  const Workload f = load("workload: {kind: ffn, d: 128, f: 256, m: 128, gated: true, gemm0: {tile: [64, 128, 64]},"
                          " gemm1: {tile: [64, 128, 64]}}\n");
  const auto shapes = infer_gemm_shapes(f);
  REQUIRE(shapes.size() == 2);
  REQUIRE(shapes[0]);
  CHECK(shapes[0]->n == 512);
  REQUIRE(shapes[1]);
  CHECK(shapes[1]->k == 256);
  CHECK(shapes[1]->n == 128);
  // A fused dataflow kernel is two GEMMs: no single shape.
  const Workload d = load("workload: {kind: ffn, d: 128, f: 256, m: 128, gated: false, gemm0: {tile: [64, 128, 64]},"
                          " gemm1: {tile: [64, 128, 64]}}\nsync: {kind: dataflow}\n");
  CHECK_FALSE(infer_gemm_shape(d, d.kernels[0]));
}

TEST_CASE("a fused chain has its sub-GEMMs and a chain bound, not GEMM0's input side", "[report]") {
  // Dataflow FFN: GEMM0 (X . W0, both inputs) and GEMM1 (H . W1, H made on chip). GEMM0's input
  // side, 2*M*N*K/sqrt(S), is no bound once H may stay on chip (docs/architecture.md, "The
  // chain bound"): the kernel has no single-GEMM bound, and its chain bound instead.
  const Workload d = load("workload: {kind: ffn, d: 1024, f: 2048, m: 512, gated: false, gemm0: {tile: [64, 128, 64]},"
                          " gemm1: {tile: [64, 128, 64]}}\nsync: {kind: dataflow}\n");
  const auto subs = infer_sub_gemms(d, d.kernels[0]);
  REQUIRE(subs.size() == 2);
  CHECK(subs[0].external_inputs);
  CHECK_FALSE(subs[1].external_inputs);
  CHECK((subs[0].m == 512 && subs[0].k == 1024 && subs[0].n == 2048));
  CHECK((subs[1].m == 512 && subs[1].k == 2048 && subs[1].n == 1024));
  const RunBounds b = compute_traffic_bounds(d, 1 << 20, infer_gemm_shapes(d));
  CHECK(b.kernels[0].io_bound_bytes == 0);
  CHECK(b.kernels[0].chain_io_bound_bytes > 0);
  // The gated fused kernel's GEMM0 multiplies X with both weights: twice the columns.
  const Workload g = load("workload: {kind: ffn, d: 1024, f: 2048, m: 512, gated: true, gemm0: {tile: [64, 128, 64]},"
                          " gemm1: {tile: [64, 128, 64]}}\nsync: {kind: dataflow}\n");
  const auto gsubs = infer_sub_gemms(g, g.kernels[0]);
  REQUIRE(gsubs.size() == 2);
  CHECK(gsubs[0].n == 4096);
}
