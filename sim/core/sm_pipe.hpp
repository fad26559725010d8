#pragma once
// One SM's issue and tensor pipe, shared by the blocks resident on it, as a fluid server.
//
// A block's k-step (its MMA and the main loop's other work) is a job of so many picoseconds at
// the SM's full rate. The jobs in progress share the rate:
//  - each job gets at most its block's share (the most of the pipe one block's warps can keep
//    busy: a block of 8 warps issuing mma.sync cannot saturate it, a warpgroup issuing wgmma
//    asynchronously can);
//  - under `oldest_first` the rate goes to the jobs in order of block age, as the warp
//    schedulers' greedy-then-oldest policy does for synchronous MMA: the older block on an SM
//    runs ahead of the younger one, so co-resident blocks fall into cohorts half a block's
//    duration apart (measured on the H100: calibration/measurements/h100/sync/tl_*.csv);
//  - under `fair` the jobs share it equally (water-filling under their shares), as warpgroups
//    queueing asynchronous wgmma on the tensor core do (measured in Triton's timelines).
// Rates change only when a job starts or ends, so each job's completion is a single event;
// when a job's rate changes its previous event is superseded (the version it carries).
#include <cstdint>
#include <vector>

#include "common/types.hpp"
#include "models/compute/mainloop.hpp"

namespace tilesim {

class SmPipe {
 public:
  /// A job whose completion time changed: `at` is when it finishes at its new rate. Events
  /// carrying an older version of the job are stale.
  struct Completion {
    std::uint32_t slot;
    Time at;
    std::uint32_t version;
  };

  /// Starts the job of `slot` (at most one per slot): `work_ps` at the full rate, at most
  /// `share` of the rate (0 < share <= 1), priority `age` (smaller is older).
  void start(std::uint32_t slot, double work_ps, double share, std::uint64_t age, PipeArbitration how, Time now,
             std::vector<Completion>& changed);
  /// The completion event of `slot` carrying `version` fired at `now`. Returns false for a
  /// stale event (nothing changes); otherwise removes the job and appends the other jobs whose
  /// completion moved.
  bool finish(std::uint32_t slot, std::uint32_t version, Time now, std::vector<Completion>& changed);
  /// Slot `slot` waits for its data and keeps `fraction` of the pipe from the jobs meanwhile
  /// (0 releases it); the jobs share what the holds leave. Appends the jobs whose completion moved.
  void set_hold(std::uint32_t slot, double fraction, Time now, std::vector<Completion>& changed);
  bool busy() const { return !jobs_.empty(); }
  /// The rate `slot`'s job gets now (0 when it has none). Exposed for tests.
  double rate_of(std::uint32_t slot) const;

 private:
  struct Job {
    std::uint32_t slot;
    std::uint32_t version;
    double remaining;  // ps at the full rate
    double share;
    double rate;
    std::uint64_t age;
    PipeArbitration how;
  };
  std::vector<Job> jobs_;  // a handful: the blocks resident on one SM
  struct Hold {
    std::uint32_t slot;
    double fraction;
  };
  std::vector<Hold> holds_;  // blocks waiting for their data that keep part of the pipe
  double held_ = 0;          // the holds' sum, at most 1
  std::vector<double> rate_;   // scratch of reallocate: no allocation per rate change
  std::vector<char> capped_;
  Time last_ = 0;
  std::uint32_t next_version_ = 1;

  void advance(Time now);
  void reallocate(Time now, std::vector<Completion>& changed);
};

}  // namespace tilesim
