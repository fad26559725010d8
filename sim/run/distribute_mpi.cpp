// The process group of a build with MPI: a sweep's points spread over the ranks of mpirun.
//
// Rank 0, the writer, holds the queue of pending points. Its own threads take points from the
// queue directly; every other rank asks for one point per free thread and gets them one at a
// time, so fast and slow ranks balance themselves. Finished lines travel back to the writer,
// which hands each to `done`. Only the main thread of a rank calls MPI (MPI_THREAD_FUNNELED):
// the simulating threads talk to it through a mailbox, and it polls MPI between naps, so
// that a rank waiting for messages leaves its core to the simulating threads.
//
// Every message goes between the writer and one worker rank, and MPI keeps the messages of
// one pair in order. A worker's last message is kBye, and the writer's last to it is kFinish
// or kAbort, so once both are through no message is left unmatched when MPI_Finalize runs.
// Ranks are assumed to share one byte order (the index travels as raw bytes).
#ifdef TILESIM_HAVE_MPI

#include <mpi.h>
#include <spdlog/spdlog.h>
#include <tbb/info.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "common/error.hpp"
#include "sim/run/distribute.hpp"

namespace tilesim::sweep {
namespace {

enum Tag : int {
  kRequest = 1,  // worker → writer: one of its threads is free (empty)
  kWork,         // writer → worker: simulate this index (uint64)
  kNoWork,       // writer → worker: nothing left to hand out; the asking thread ends (empty)
  kResult,       // worker → writer: uint64 index, then the JSON line
  kError,        // worker → writer: a point failed (encoded error)
  kFinish,       // writer → worker: every point has reached `done` (empty)
  kAbort,        // writer → worker: the run failed (encoded error)
  kBye,          // worker → writer: the worker's last message (empty)
};

using Bytes = std::string;

Bytes pack_index(std::size_t index) {
  const auto value = static_cast<std::uint64_t>(index);
  return Bytes(reinterpret_cast<const char*>(&value), sizeof value);
}

std::size_t unpack_index(const Bytes& bytes) {
  if (bytes.size() < sizeof(std::uint64_t)) throw std::runtime_error("sweep: short message between ranks");
  std::uint64_t value = 0;
  std::memcpy(&value, bytes.data(), sizeof value);
  return static_cast<std::size_t>(value);
}

// An error crosses ranks as one kind letter and its text, so that every rank throws the same
// type with the same message and the CLI returns the same exit code on each.
Bytes encode_error(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const InputError& e) {
    return "I" + std::string(e.what());
  } catch (const DeadlockError& e) {
    return "D" + std::string(e.what());
  } catch (const std::exception& e) {
    return "R" + std::string(e.what());
  } catch (...) {
    return "Runknown error";
  }
}

std::exception_ptr decode_error(const Bytes& bytes) {
  const std::string text = bytes.empty() ? std::string("unknown error") : bytes.substr(1);
  const char kind = bytes.empty() ? 'R' : bytes[0];
  if (kind == 'I') return std::make_exception_ptr(InputError(text));
  if (kind == 'D') return std::make_exception_ptr(DeadlockError(text));
  return std::make_exception_ptr(std::runtime_error(text));
}

/// Nonblocking sends in flight. A blocking send could wait on a peer that is itself blocked
/// sending to us; these never wait, and keep each buffer alive until MPI is done with it.
class Outbox {
 public:
  Outbox() = default;
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;
  ~Outbox() { flush(); }

  void send(int dest, int tag, Bytes bytes) {
    // A list, because a short string keeps its bytes inside the object: its node must not move.
    Send& s = sends_.emplace_back(Send{std::move(bytes), MPI_REQUEST_NULL});
    MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD, &s.request);
  }

  /// Forgets the sends that have completed; also lets MPI progress the others.
  void poll() {
    for (auto it = sends_.begin(); it != sends_.end();) {
      int complete = 0;
      MPI_Test(&it->request, &complete, MPI_STATUS_IGNORE);
      it = complete ? sends_.erase(it) : std::next(it);
    }
  }

  void flush() {
    for (Send& s : sends_) MPI_Wait(&s.request, MPI_STATUS_IGNORE);
    sends_.clear();
  }

 private:
  struct Send {
    Bytes bytes;
    MPI_Request request;
  };
  std::list<Send> sends_;
};

struct Message {
  int source = 0;
  int tag = 0;
  Bytes bytes;
};

/// The next message from `source` (or any rank), if one has arrived.
std::optional<Message> try_receive(int source) {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  Message m{status.MPI_SOURCE, status.MPI_TAG, Bytes(static_cast<std::size_t>(count), '\0')};
  MPI_Recv(m.bytes.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return m;
}

/// How long a main thread naps when nothing happened: short right after activity, longer
/// while idle, so that a rank costs little CPU when it waits (two ranks may share two cores).
class Backoff {
 public:
  std::chrono::microseconds next() {
    const auto wait = wait_;
    wait_ = std::min(wait_ * 2, std::chrono::microseconds(1000));
    return wait;
  }
  void reset() { wait_ = std::chrono::microseconds(20); }

 private:
  std::chrono::microseconds wait_{20};
};

int thread_count(int jobs) { return jobs > 0 ? jobs : tbb::info::default_concurrency(); }

/// Joins the threads on every way out, so that an exception never leaves one running.
class ThreadPool {
 public:
  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() { join(); }
  template <class F>
  void start(int n, F f) {
    for (int t = 0; t < n; ++t) threads_.emplace_back(f);
  }
  void join() {
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  std::vector<std::thread> threads_;
};

// ---- The writer (rank 0) ----

class Writer {
 public:
  Writer(int ranks, const std::vector<std::size_t>& pending, const PointFn& simulate, const DoneFn& done)
      : ranks_(ranks), pending_(pending), simulate_(simulate), done_(done) {}

  void run(int jobs) {
    ThreadPool pool;
    // On exceptions from this thread (none expected: MPI errors abort), stop the pool first.
    struct StopOnExit {
      Writer& w;
      ~StopOnExit() { w.stop(); }
    } stop_on_exit{*this};
    // Threads, not TBB tasks: this thread must stay free for MPI, and TBB may have no worker
    // threads at all on a rank that mpirun bound to a single core.
    pool.start(thread_count(jobs), [this] { compute(); });
    serve();
    pool.join();
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  /// The main thread: answers the workers until each has said goodbye.
  void serve() {
    Outbox outbox;
    Backoff backoff;
    int byes = 0;
    bool ended = false;  // kFinish or kAbort sent
    while (byes < ranks_ - 1 || !ended) {
      bool busy = false;
      while (std::optional<Message> m = try_receive(MPI_ANY_SOURCE)) {
        busy = true;
        switch (m->tag) {
          case kRequest:
            // After the end, a request is one that crossed our kFinish/kAbort: no answer.
            if (!ended) {
              const std::optional<std::size_t> index = take();
              if (index) outbox.send(m->source, kWork, pack_index(*index));
              else outbox.send(m->source, kNoWork, {});
            }
            break;
          case kResult:
            deliver(unpack_index(m->bytes), m->bytes.substr(sizeof(std::uint64_t)));
            break;
          case kError:
            fail(decode_error(m->bytes));
            break;
          case kBye:
            ++byes;
            break;
          default:
            fail(std::make_exception_ptr(std::runtime_error("sweep: unexpected message between ranks")));
        }
      }
      if (!ended) {
        std::optional<Bytes> abort;
        bool finished = false;
        {
          std::lock_guard lock(mutex_);
          if (error_) abort = encode_error(error_);
          else finished = finished_ == pending_.size();
        }
        if (abort || finished) {
          ended = true;
          busy = true;
          for (int r = 1; r < ranks_; ++r) outbox.send(r, abort ? kAbort : kFinish, abort ? *abort : Bytes());
        }
      }
      outbox.poll();
      if (busy) {
        backoff.reset();
      } else {
        // Local threads wake us when they finish a point or fail, which may end the run.
        std::unique_lock lock(mutex_);
        wake_.wait_for(lock, backoff.next());
      }
    }
    outbox.flush();
  }

  /// The writer's own simulating threads take points straight from the queue.
  void compute() {
    while (const std::optional<std::size_t> index = take()) {
      std::string line;
      try {
        line = simulate_(*index);
      } catch (...) {
        fail(std::current_exception());
        return;
      }
      deliver(*index, line);
    }
  }

  std::optional<std::size_t> take() {
    std::lock_guard lock(mutex_);
    if (stopped_ || next_ >= pending_.size()) return std::nullopt;
    return pending_[next_++];
  }

  void deliver(std::size_t index, const std::string& line) {
    {
      std::lock_guard lock(done_mutex_);
      // As in run_local, points that finish after a failure are still handed over, unless
      // `done` itself failed.
      if (!done_failed_) {
        try {
          done_(index, line);
        } catch (...) {
          done_failed_ = true;
          fail(std::current_exception());
        }
      }
    }
    std::lock_guard lock(mutex_);
    ++finished_;
    wake_.notify_one();
  }

  void fail(std::exception_ptr e) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::move(e);
    stopped_ = true;
    wake_.notify_one();
  }

  void stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }

  const int ranks_;
  const std::vector<std::size_t>& pending_;
  const PointFn& simulate_;
  const DoneFn& done_;

  std::mutex mutex_;  // guards the queue, the count and the error
  std::condition_variable wake_;
  std::size_t next_ = 0;
  std::size_t finished_ = 0;
  bool stopped_ = false;  // hand out no more points
  std::exception_ptr error_;

  std::mutex done_mutex_;  // serialises `done`
  bool done_failed_ = false;
};

// ---- A worker (rank >= 1) ----

class Worker {
 public:
  explicit Worker(const PointFn& simulate) : simulate_(simulate) {}

  void run(int jobs) {
    ThreadPool pool;
    struct StopOnExit {
      Worker& w;
      ~StopOnExit() { w.stop(); }
    } stop_on_exit{*this};
    pool.start(thread_count(jobs), [this] { compute(); });
    Outbox outbox;
    const std::optional<Bytes> abort = serve(outbox);
    // Let the threads end: those waiting for a point leave, one in the middle of a point
    // finishes it, and its line still goes to the writer, which keeps it.
    stop();
    pool.join();
    for (Outgoing& o : take_outgoing())
      if (o.tag == kResult) outbox.send(0, o.tag, std::move(o.bytes));
    outbox.send(0, kBye, {});
    outbox.flush();
    if (abort) std::rethrow_exception(decode_error(*abort));
  }

 private:
  struct Outgoing {
    int tag;
    Bytes bytes;
  };

  /// The main thread: forwards what the threads post and hands them what the writer sends,
  /// until the writer ends the run. Returns the error of an aborted run.
  std::optional<Bytes> serve(Outbox& outbox) {
    Backoff backoff;
    for (;;) {
      bool busy = false;
      std::deque<Outgoing> out;
      {
        std::unique_lock lock(mutex_);
        if (outgoing_.empty()) to_main_.wait_for(lock, backoff.next());
        out.swap(outgoing_);
      }
      for (Outgoing& o : out) outbox.send(0, o.tag, std::move(o.bytes));
      busy = !out.empty();
      while (std::optional<Message> m = try_receive(0)) {
        busy = true;
        if (m->tag == kFinish) return std::nullopt;
        if (m->tag == kAbort) return m->bytes;
        std::lock_guard lock(mutex_);
        if (m->tag == kWork) work_.emplace_back(unpack_index(m->bytes));
        else work_.emplace_back(std::nullopt);  // kNoWork: the asking thread ends
        to_threads_.notify_one();
      }
      outbox.poll();
      if (busy) backoff.reset();
    }
  }

  void compute() {
    for (;;) {
      std::size_t index = 0;
      {
        std::unique_lock lock(mutex_);
        if (stopped_) return;
        outgoing_.push_back({kRequest, {}});
        to_main_.notify_one();
        to_threads_.wait(lock, [&] { return stopped_ || !work_.empty(); });
        if (stopped_) return;  // a point handed to us now is lost, but the run is over
        const std::optional<std::size_t> item = work_.front();
        work_.pop_front();
        if (!item) return;
        index = *item;
      }
      Outgoing result{kResult, pack_index(index)};
      try {
        result.bytes += simulate_(index);
      } catch (...) {
        std::lock_guard lock(mutex_);
        outgoing_.push_back({kError, encode_error(std::current_exception())});
        stopped_ = true;  // this rank takes no more points; the writer will abort the run
        to_threads_.notify_all();
        to_main_.notify_one();
        return;
      }
      std::lock_guard lock(mutex_);
      outgoing_.push_back(std::move(result));
      to_main_.notify_one();
    }
  }

  std::deque<Outgoing> take_outgoing() {
    std::lock_guard lock(mutex_);
    std::deque<Outgoing> out;
    out.swap(outgoing_);
    return out;
  }

  void stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    to_threads_.notify_all();
  }

  const PointFn& simulate_;
  std::mutex mutex_;
  std::condition_variable to_main_;     // a thread posted something to send
  std::condition_variable to_threads_;  // a point arrived, or the run ended
  std::deque<Outgoing> outgoing_;
  std::deque<std::optional<std::size_t>> work_;  // nullopt: no more points for one thread
  bool stopped_ = false;
};

bool launched_by_mpirun() {
  // Open MPI's mpirun, and PMI/PMIx launchers (MPICH's hydra, Slurm's srun).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

}  // namespace

ProcessGroup::ProcessGroup() {
  // A plain `tilesim run` never touches MPI: initialising it is slow and prints warnings on
  // machines without a network, and the test suite starts tilesim hundreds of times.
  if (!launched_by_mpirun()) return;
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) throw std::runtime_error("sweep: MPI was finalised already; construct one ProcessGroup per run");
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (provided < MPI_THREAD_FUNNELED)
      spdlog::warn("MPI gives thread level {} only (wanted MPI_THREAD_FUNNELED); continuing", provided);
    mpi_ = true;  // ours to finalise
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

ProcessGroup::~ProcessGroup() {
  if (!mpi_) return;
  // An exception that only this rank may have (thrown outside run() and agree()): finalising
  // would hang if another rank waits in run() or agree() for us. Exiting without it makes
  // mpirun stop the job, with this rank's exit code.
  if (size_ > 1 && std::uncaught_exceptions() > 0 && !failed_together_) return;
  MPI_Finalize();
}

void ProcessGroup::run(const std::vector<std::size_t>& pending, int jobs, const PointFn& simulate,
                       const DoneFn& done) {
  if (size_ == 1) {
    run_local(pending, jobs, simulate, done);
    return;
  }
  try {
    if (is_writer()) Writer(size_, pending, simulate, done).run(jobs);
    else Worker(simulate).run(jobs);
  } catch (...) {
    failed_together_ = true;  // the writer has told every rank
    throw;
  }
}

bool ProcessGroup::agree(bool ok) {
  if (size_ == 1) return ok;
  int mine = ok ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!all) failed_together_ = true;
  return all != 0;
}

}  // namespace tilesim::sweep

#endif  // TILESIM_HAVE_MPI
