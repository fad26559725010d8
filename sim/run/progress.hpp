#pragma once
// Progress of a long command on stderr: items (sweep points, tune candidates) done, their rate,
// time left. On a terminal a bar redrawn five times a second; otherwise (a log, CI) a line every
// ten seconds once the command has run that long; nothing with --quiet. Items being simulated
// count by the share of their blocks already dispatched, so one long point moves the bar and
// the estimate; the rate is taken over the last minute, so the estimate follows a rate that
// falls (later points bigger) instead of averaging it away.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "sim/core/simulator.hpp"

namespace tilesim::sweep {

enum class ProgressStyle { off, bar, lines };

/// The style a command gets: off with --quiet, a bar on a terminal, else periodic lines.
ProgressStyle progress_style(bool quiet);

class Progress {
 public:
  /// `total` items of which `done` are already finished (resumed); `unit` names them ("points").
  Progress(std::size_t total, std::size_t done, ProgressStyle style, std::string unit = "points");
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance();  ///< one more item finished (any thread)
  /// An item of `blocks` dispatch positions starts being simulated; returns the counter its
  /// simulation increments at each dispatch (SimOptions::dispatched_blocks), or nullptr when off.
  std::atomic<std::uint64_t>* begin_item(std::uint64_t blocks);
  void end_item(std::uint64_t blocks);  ///< that item's simulation is over (finished or not)
  void finish();  ///< draws the final state and ends the line (the bar) or says it is done (lines)

  /// The text for a state: `done` items (fractional: running ones count by their share) of
  /// `total`, at `rate` items a second (<= 0: unknown, no estimate).
  static std::string render(double done, std::size_t total, double rate, const std::string& unit = "points");

 private:
  double effective_done() const;
  void tick();  // the drawing thread
  void draw(bool final);

  std::size_t total_, resumed_;
  std::atomic<std::size_t> done_;
  std::atomic<std::uint64_t> running_blocks_{0}, running_dispatched_{0};
  ProgressStyle style_;
  std::string unit_;
  std::chrono::steady_clock::time_point start_, last_line_;
  std::deque<std::pair<double, double>> samples_;  // (seconds, effective done) over the last minute
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, finished_ = false, printed_ = false;
  std::thread thread_;
};

/// simulate() with its dispatches counted as partial progress of an item of `progress`
/// (nullptr or off: plain simulate). The result is the same either way.
SimResult simulate_counted(const Workload& w, const ArchSpec& arch, SimOptions options, Progress* progress);

/// Whether stderr is an interactive terminal.
bool stderr_is_terminal();

}  // namespace tilesim::sweep
