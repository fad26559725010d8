// Running a sweep's points on the threads of this process, and the process group of a build
// without MPI (distribute_mpi.cpp holds the one with MPI).
#include "sim/run/distribute.hpp"

#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>

namespace tilesim::sweep {

void run_local(const std::vector<std::size_t>& pending, int jobs, const PointFn& simulate, const DoneFn& done) {
  if (pending.empty()) return;
  const std::size_t wanted = jobs > 0 ? static_cast<std::size_t>(jobs) : tbb::info::default_concurrency();
  const auto threads = static_cast<int>(std::min(wanted, pending.size()));

  // Every thread takes the next index from one counter: points start in the order of
  // `pending`, and one slow point never holds back a chunk of others queued behind it, which
  // parallel_for's range splitting would do.
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex done_mutex;  // serialises `done` and guards the two below
  std::exception_ptr error;
  bool done_failed = false;

  auto fail = [&](std::exception_ptr e) {
    std::lock_guard lock(done_mutex);
    if (!error) error = e;
    failed = true;
  };
  auto work = [&] {
    while (!failed.load(std::memory_order_relaxed)) {
      const std::size_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= pending.size()) return;
      std::string line;
      try {
        line = simulate(pending[k]);
      } catch (...) {
        fail(std::current_exception());
        return;
      }
      std::exception_ptr done_error;
      {
        std::lock_guard lock(done_mutex);
        // A point that finished while another one failed is still handed over: the sweep
        // keeps it, and a resumed run need not compute it again. Not after `done` itself
        // failed, though: it may be in no state to take more. (Marked under the same lock,
        // so that no other thread slips in a call in between.)
        if (!done_failed) {
          try {
            done(pending[k], line);
          } catch (...) {
            done_failed = true;
            done_error = std::current_exception();
          }
        }
      }
      if (done_error) {
        fail(done_error);
        return;
      }
    }
  };

  if (threads == 1) {
    work();  // no arena: -j 1 runs on the calling thread, which keeps debugging simple
  } else {
    // TBB keeps one worker thread per core by default, and warns when an arena wants more;
    // -j above the core count is honoured (points may wait on disk), so raise the limit.
    std::optional<tbb::global_control> allow;
    if (threads > tbb::info::default_concurrency())
      allow.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    tbb::task_arena arena(threads);
    arena.execute([&] {
      tbb::task_group group;
      for (int t = 0; t < threads; ++t) group.run(work);
      group.wait();
    });
  }
  if (error) std::rethrow_exception(error);
}

#ifndef TILESIM_HAVE_MPI

ProcessGroup::ProcessGroup() = default;
ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::run(const std::vector<std::size_t>& pending, int jobs, const PointFn& simulate,
                       const DoneFn& done) {
  run_local(pending, jobs, simulate, done);
}

bool ProcessGroup::agree(bool ok) { return ok; }

#endif

}  // namespace tilesim::sweep
