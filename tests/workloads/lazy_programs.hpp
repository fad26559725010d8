#pragma once
// Shared by the lazy-kernel tests (test_gemm_lazy.cpp, test_attention_lazy.cpp): an experiment
// built with every eligible kernel lazy or whole, and the check that a lazy kernel's programs are
// those the whole kernel holds.
#include <catch2/catch.hpp>

#include <string>

#include "sim/config/experiment.hpp"
#include "sim/core/simulator.hpp"
#include "workloads/gemm.hpp"

namespace tilesim::test {

// Builds the experiment with every eligible kernel lazy (threshold 0) or whole (no threshold).
inline ExperimentPoint build_lazy_or_whole(const std::string& text, bool lazy) {
  const std::uint64_t saved = lazy_program_bytes();
  set_lazy_program_bytes(lazy ? 0 : ~std::uint64_t{0});
  ExperimentPoint p = load_experiment_text(text, "exp.yaml", ".", {}).points.at(0);
  set_lazy_program_bytes(saved);
  return p;
}

// Every block's program of lazy kernel `l` equals whole kernel `w`'s, with the same access
// identities (the step noise's key); returns the number of blocks of one step.
inline std::uint32_t check_same_programs(const Kernel& l, const Kernel& w) {
  REQUIRE(l.lazy());
  REQUIRE_FALSE(w.lazy());
  CHECK(l.steps.empty());
  CHECK(l.accesses.empty());
  CHECK(l.dispatch == w.dispatch);
  CHECK(l.mma_steps() == w.mma_steps());
  REQUIRE(l.num_blocks() == w.num_blocks());
  ProgramBuffer lb, wb;
  std::uint32_t one_step = 0;
  for (std::uint32_t b = 0; b < w.num_blocks(); ++b) {
    const ProgramView lp = l.program(b, lb), wp = w.program(b, wb);
    REQUIRE(lp.num_steps == wp.num_steps);
    REQUIRE(l.blocks[b].num_steps == w.blocks[b].num_steps);
    one_step += wp.num_steps == 1;
    for (std::uint32_t s = 0; s < wp.num_steps; ++s) {
      const Step &ls = lp.steps[s], &ws = wp.steps[s];
      REQUIRE(ls.num_accesses == ws.num_accesses);
      CHECK(ls.flops == ws.flops);
      CHECK(ls.softmax_elems == ws.softmax_elems);
      CHECK(ls.epilogue_elems == ws.epilogue_elems);
      CHECK(lp.access_id_base + ls.first_access == wp.access_id_base + ws.first_access);
      for (std::uint32_t i = 0; i < ws.num_accesses; ++i)
        CHECK(lp.accesses[ls.first_access + i] == wp.accesses[ws.first_access + i]);
    }
  }
  return one_step;
}

// Simulates both builds of an experiment and checks that they agree to the last counter.
inline void check_same_simulation(const ExperimentPoint& lazy, const ExperimentPoint& whole) {
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

}  // namespace tilesim::test
