#pragma once
// The sweep's progress bar on stderr: points done, points per second, time left. Drawn only
// when stderr is a terminal (and not --quiet), at most ten times a second, so logs and CI
// output stay clean.
#include <chrono>
#include <cstddef>
#include <string>

namespace tilesim::sweep {

class Progress {
 public:
  /// `total` points of which `done` are already finished (resumed); `enabled` false draws nothing.
  Progress(std::size_t total, std::size_t done, bool enabled);
  ~Progress();
  void advance();  ///< one more point finished (call from one thread at a time)
  void finish();   ///< draws the final state and ends the line

  /// The bar's text for the given state (exposed for tests).
  static std::string render(std::size_t done, std::size_t total, std::size_t resumed, double seconds);

 private:
  void draw(bool force);

  std::size_t total_, done_, resumed_;
  bool enabled_, finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

/// Whether stderr is an interactive terminal.
bool stderr_is_terminal();

}  // namespace tilesim::sweep
