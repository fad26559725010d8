#pragma once
// Spreading a sweep's points over threads and processes. The sweep runner gives a list of
// pending point indices and a function that simulates one point into its JSON line; these
// functions decide where each point runs and hand every finished line to one writer (the
// process of MPI rank 0, or the only process), one call at a time. What a point computes
// never depends on where it ran, so the result set is the same for any thread or rank count.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace tilesim::sweep {

/// Simulates point `index` and returns its JSON line (no newline). Called from many threads.
using PointFn = std::function<std::string(std::size_t index)>;
/// Receives a finished point; called on the writer only, never concurrently.
using DoneFn = std::function<void(std::size_t index, const std::string& line)>;

/// Runs `pending` with up to `jobs` threads of this process (0 = all cores).
void run_local(const std::vector<std::size_t>& pending, int jobs, const PointFn& simulate, const DoneFn& done);

/// The process group of a run: MPI ranks when tilesim was started by mpirun/mpiexec with
/// more than one rank (and built with MPI), else just this process. Construct one per run;
/// it initialises and finalises MPI when needed.
class ProcessGroup {
 public:
  ProcessGroup();
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// The writer prints tables, writes files and shows progress; the other ranks only compute.
  bool is_writer() const { return rank_ == 0; }

  /// Every rank calls this with the same `simulate`; `pending` and `done` matter on the writer
  /// only. Points are handed out one at a time as ranks become free (dynamic balancing);
  /// returns when every pending point has reached `done` on the writer.
  void run(const std::vector<std::size_t>& pending, int jobs, const PointFn& simulate, const DoneFn& done);

  /// Makes the other ranks fail together when the writer has failed before run() (for
  /// example a bad experiment): false when some rank reported an error.
  bool agree(bool ok);

 private:
  int rank_ = 0;
  int size_ = 1;
  bool mpi_ = false;  // this group initialised MPI and finalises it
  // Every rank knows of the failure being thrown (run() or agree() said so), so all of them
  // finalise. Any other exception leaves without MPI_Finalize, which would wait for ranks that
  // may be waiting for us; mpirun then ends the job instead of hanging.
  bool failed_together_ = false;
};

}  // namespace tilesim::sweep
