// Lazy GEMM kernels (workloads/gemm.hpp: programs generated when asked for, issue 15): the
// same programs as the kernel held whole, the same simulation, and the analyses and refusals
// that walk or write every program.
#include <catch2/catch.hpp>

#include <sstream>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/core/simulator.hpp"
#include "sim/report/bounds.hpp"
#include "traces/trace.hpp"
#include "tests/workloads/lazy_programs.hpp"
#include "workloads/gemm.hpp"

using namespace tilesim;
using tilesim::test::check_same_programs;
using Catch::Matchers::Contains;

namespace {

ExperimentPoint build(const std::string& text, bool lazy) { return test::build_lazy_or_whole(text, lazy); }

const std::string kRagged = "arch: h100\narch_overrides: {power: {cap_w: 0}}\n"
                            "workload: {kind: gemm, m: 1000, n: 1500, k: 700, tile: [128, 128, 64], stages: 3}\n"
                            "order: {kind: grouped, group_m: 4}\n";

}  // namespace

// Rows and columns past the edge read modulo M and N: edge tiles have more rectangles than
// inner ones, so blocks' access counts differ (their identities are a running sum), per batch.
const std::string kWrapped = "arch: h100\narch_overrides: {power: {cap_w: 0}}\n"
                             "workload: {kind: gemm, m: 200, n: 300, k: 256, batch: 2, tile: [128, 128, 64], "
                             "ragged: wrap}\norder: {kind: grouped, group_m: 2}\n";

TEST_CASE("gemm lazy: every block's program is the one the whole kernel holds", "[gemm][lazy]") {
  for (const std::string& text : {kRagged, kWrapped}) {
    const ExperimentPoint lazy = build(text, true), whole = build(text, false);
    check_same_programs(lazy.workload->kernels.at(0), whole.workload->kernels.at(0));
  }
}

TEST_CASE("gemm lazy: a wrapped ragged GEMM simulates exactly as held whole", "[gemm][lazy]") {
  test::check_same_simulation(build(kWrapped, true), build(kWrapped, false));
}

TEST_CASE("gemm lazy: a lazy GEMM and FFN simulate exactly as held whole, bounds included", "[gemm][lazy]") {
  const std::string ffn = "arch: h100\narch_overrides: {power: {cap_w: 0}}\n"
                          "workload: {kind: ffn, d: 512, f: 1024, m: 1024, gemm0: {tile: [128, 128, 64]}, "
                          "gemm1: {tile: [128, 64, 64]}}\norder: {kind: row}\n";
  for (const std::string& text : {kRagged, ffn}) {
    const ExperimentPoint lazy = build(text, true), whole = build(text, false);
    for (const Kernel& k : lazy.workload->kernels) CHECK(k.lazy());
    test::check_same_simulation(lazy, whole);
    const RunBounds la = compute_traffic_bounds(*lazy.workload, lazy.arch.l2.bytes, infer_gemm_shapes(*lazy.workload));
    const RunBounds wa = compute_traffic_bounds(*whole.workload, whole.arch.l2.bytes, infer_gemm_shapes(*whole.workload));
    CHECK(la.total.compulsory_bytes == wa.total.compulsory_bytes);
    CHECK(la.total.io_bound_bytes == wa.total.io_bound_bytes);
    CHECK(la.total.chain_io_bound_bytes == wa.total.chain_io_bound_bytes);
  }
}

TEST_CASE("gemm lazy: only kernels nothing rewrites are lazy, and traces of lazy kernels are refused", "[gemm][lazy]") {
  // Serial split-K posts semaphores; a persistent kernel is rewritten into programs.
  CHECK_FALSE(build("arch: h100\nworkload: {kind: gemm, m: 512, n: 512, k: 1024, tile: [128, 128, 64], split_k: 2}\n", true)
                  .workload->kernels.at(0)
                  .lazy());
  CHECK_FALSE(build("arch: h100\nworkload: {kind: gemm, m: 512, n: 512, k: 1024, tile: [128, 128, 64], persistent: auto}\n", true)
                  .workload->kernels.at(0)
                  .lazy());
  const std::string rowsync = "arch: h100\nworkload: {kind: ffn, d: 512, f: 1024, m: 512}\nsync: {kind: rowsync}\n";
  for (const Kernel& k : build(rowsync, true).workload->kernels) CHECK_FALSE(k.lazy());
  std::ostringstream out;
  CHECK_THROWS_WITH(write_trace(*build(kRagged, true).workload, out, TraceFormat::binary),
                    Contains("kernel 'gemm'") && Contains("trace a smaller shape"));
}
