#pragma once
// Parallel simulation of experiment points: each point is independent and writes only its
// own result slot, so the output is identical, bit for bit and in order, for any -j.
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <vector>

#include "sim/experiment.hpp"
#include "sim/simulator.hpp"

namespace tilesim::app {

inline std::vector<SimResult> simulate_points(const Experiment& e, int jobs) {
  std::vector<SimResult> results(e.points.size());
  tbb::task_arena arena(jobs > 0 ? jobs : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, e.points.size(), [&](std::size_t i) {
      const ExperimentPoint& p = e.points[i];
      results[i] = simulate(p.workload, p.arch, p.options);
      results[i].experiment = e.name;
      results[i].point = p.label;
    });
  });
  return results;
}

}  // namespace tilesim::app
