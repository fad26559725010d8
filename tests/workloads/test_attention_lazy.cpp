// Lazy fused attention kernels (workloads/attention_kernels.cpp, issue 15): the same programs and
// the same simulation as the kernel held whole; persistent kernels and a layer's attention stay
// whole (their steps are rewritten after they are built).
#include <catch2/catch.hpp>

#include "sim/config/experiment.hpp"
#include "sim/core/simulator.hpp"
#include "workloads/gemm.hpp"

using namespace tilesim;

namespace {

// Builds the experiment with every eligible kernel lazy (threshold 0) or whole (no threshold).
ExperimentPoint build(const std::string& text, bool lazy) {
  const std::uint64_t saved = lazy_program_bytes();
  set_lazy_program_bytes(lazy ? 0 : ~std::uint64_t{0});
  ExperimentPoint p = load_experiment_text(text, "exp.yaml", ".", {}).points.at(0);
  set_lazy_program_bytes(saved);
  return p;
}

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
  const Kernel& l = lazy.workload->kernels.at(0);
  const Kernel& w = whole.workload->kernels.at(0);
  REQUIRE(l.lazy());
  REQUIRE_FALSE(w.lazy());
  CHECK_FALSE(lazy.workload->kernels.at(1).lazy());  // the combine
  CHECK(l.steps.empty());
  CHECK(l.accesses.empty());
  CHECK(l.dispatch == w.dispatch);
  CHECK(l.mma_steps() == w.mma_steps());
  ProgramBuffer lb, wb;
  std::uint32_t empty_blocks = 0;
  for (std::uint32_t b = 0; b < w.num_blocks(); ++b) {
    const ProgramView lp = l.program(b, lb), wp = w.program(b, wb);
    REQUIRE(lp.num_steps == wp.num_steps);
    REQUIRE(l.blocks[b].num_steps == w.blocks[b].num_steps);
    empty_blocks += wp.num_steps == 1;
    for (std::uint32_t s = 0; s < wp.num_steps; ++s) {
      const Step &ls = lp.steps[s], &ws = wp.steps[s];
      REQUIRE(ls.num_accesses == ws.num_accesses);
      CHECK(ls.flops == ws.flops);
      CHECK(ls.softmax_elems == ws.softmax_elems);
      CHECK(ls.epilogue_elems == ws.epilogue_elems);
      // The same access identity (the step noise's key) as held whole.
      CHECK(lp.access_id_base + ls.first_access == wp.access_id_base + ws.first_access);
      for (std::uint32_t i = 0; i < ws.num_accesses; ++i)
        CHECK(lp.accesses[ls.first_access + i] == wp.accesses[ws.first_access + i]);
    }
  }
  CHECK(empty_blocks > 0);  // causal splits that only write their zero partial were covered
}

TEST_CASE("attention lazy: a lazy kernel simulates exactly as held whole", "[attention][lazy]") {
  const std::string plain = "arch: h100\narch_overrides: {power: {cap_w: 0}}\n"
                            "workload: {kind: attention, heads: 8, seq_q: 1024, head_dim: 128, block_kv: 64}\n"
                            "order: {kind: row}\n";
  for (const std::string& text : {kCausalSplit, plain}) {
    const ExperimentPoint lazy = build(text, true), whole = build(text, false);
    REQUIRE(lazy.workload->kernels.at(0).lazy());
    const SimResult a = simulate(*lazy.workload, lazy.arch, lazy.options);
    const SimResult b = simulate(*whole.workload, whole.arch, whole.options);
    CHECK(a.duration == b.duration);
    CHECK(a.total == b.total);
    REQUIRE(a.kernels.size() == b.kernels.size());
    for (std::size_t k = 0; k < a.kernels.size(); ++k) {
      CHECK(a.kernels[k].mem == b.kernels[k].mem);
      CHECK(a.kernels[k].compute_bound_time == b.kernels[k].compute_bound_time);
    }
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
