#pragma once
// The tile dependency graph of a workload: every block of every kernel is a vertex; a block
// that posts a semaphore has an edge to every block that waits on it, and every block of a
// kernel has an edge (through one vertex per kernel end) to the blocks of the next kernel on its
// stream. It must be a DAG; progress_check() also checks that each kernel's dispatch order can
// make progress with the slots it has.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/kernel.hpp"

namespace tilesim {

/// Throws DeadlockError naming the blocks of a cycle when the dependencies are cyclic.
void check_dependencies_acyclic(const Workload& w);

/// Replays `kernel`'s dispatch order with `slots` resident blocks at a time, treating a block
/// as finished once the semaphores it waits on have been posted by enough finished blocks of
/// the same kernel (waits on other kernels' semaphores are assumed satisfiable). Throws
/// DeadlockError when every resident block waits and none can ever finish.
void check_progress(const Workload& w, std::uint32_t kernel, std::uint64_t slots);

}  // namespace tilesim
