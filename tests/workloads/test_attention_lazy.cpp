// Lazy fused attention kernels (workloads/attention_kernels.cpp, issue 15): the same programs and
// the same simulation as the kernel held whole; persistent kernels and a layer's attention stay
// whole (their steps are rewritten after they are built).
#include <catch2/catch.hpp>

#include "sim/config/experiment.hpp"
#include "sim/core/simulator.hpp"
#include "tests/workloads/lazy_programs.hpp"

using namespace tilesim;

namespace {

ExperimentPoint build(const std::string& text, bool lazy) { return test::build_lazy_or_whole(text, lazy); }

// Causal (blocks of 1 to 7 KV tiles, empty splits), grouped heads, a ragged last Q tile, two
// KV splits (so a combine kernel follows, held whole).
const std::string kCausalSplit =
    "arch: h100\narch_overrides: {power: {cap_w: 0}}\n"
    "workload: {kind: attention, batch: 2, heads: 4, kv_heads: 2, seq_q: 800, seq_kv: 800, head_dim: 64, "
    "causal: true, block_q: 128, block_kv: 128, split_kv: 2}\n"
    "order: {kind: row}\n";

}  // namespace

TEST_CASE("attention lazy: every block's program is the one the whole kernel holds", "[attention][lazy]") {
  const ExperimentPoint lazy = build(kCausalSplit, true), whole = build(kCausalSplit, false);
  CHECK_FALSE(lazy.workload->kernels.at(1).lazy());  // the combine
  // Causal splits that only write their zero partial (one step) are among the blocks compared.
  CHECK(test::check_same_programs(lazy.workload->kernels.at(0), whole.workload->kernels.at(0)) > 0);
}

TEST_CASE("attention lazy: a lazy kernel simulates exactly as held whole", "[attention][lazy]") {
  const std::string plain = "arch: h100\narch_overrides: {power: {cap_w: 0}}\n"
                            "workload: {kind: attention, heads: 8, seq_q: 1024, head_dim: 128, block_kv: 64}\n"
                            "order: {kind: row}\n";
  for (const std::string& text : {kCausalSplit, plain}) {
    const ExperimentPoint lazy = build(text, true), whole = build(text, false);
    REQUIRE(lazy.workload->kernels.at(0).lazy());
    test::check_same_simulation(lazy, whole);
  }
}

TEST_CASE("attention lazy: persistent kernels and a layer's attention stay whole", "[attention][lazy]") {
  const ExperimentPoint persistent = build(
      "arch: h100\nworkload: {kind: attention, heads: 8, seq_q: 2048, head_dim: 64, causal: true, persistent: 12}\n"
      "order: {kind: fa3}\n",
      true);
  CHECK_FALSE(persistent.workload->kernels.at(0).lazy());
  // A layer's attention posts the output projection's semaphores from its stores (rowsync).
  const ExperimentPoint layer = build(
      "arch: h100\nworkload: {kind: layer, d: 256, f: 512, heads: 4, kv_heads: 2, head_dim: 64, seq: 256}\n"
      "sync: {attention_out_proj: {kind: rowsync}}\n",
      true);
  bool found = false;
  for (const Kernel& k : layer.workload->kernels)
    if (k.name.find("attention") != std::string::npos) {
      found = true;
      CHECK_FALSE(k.lazy());
    }
  CHECK(found);
  const SimResult r = simulate(*layer.workload, layer.arch, layer.options);
  CHECK(r.duration > 0);
}
