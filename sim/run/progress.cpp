#include "sim/run/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace tilesim::sweep {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::size_t total, std::size_t done, bool enabled)
    : total_(total), done_(done), resumed_(done), enabled_(enabled && total > 0),
      start_(std::chrono::steady_clock::now()), last_draw_(start_ - std::chrono::seconds(1)) {
  draw(true);
}

Progress::~Progress() { finish(); }

void Progress::advance() {
  ++done_;
  draw(false);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  draw(true);
  std::fputc('\n', stderr);
}

std::string Progress::render(std::size_t done, std::size_t total, std::size_t resumed, double seconds) {
  constexpr int kWidth = 30;
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int filled = static_cast<int>(frac * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, '.');
  // The rate counts only points simulated in this run: resumed ones cost nothing.
  const double rate = seconds > 0 ? static_cast<double>(done - resumed) / seconds : 0;
  char left[32] = "--:--";
  if (rate > 0) {
    const auto s = static_cast<long>(static_cast<double>(total - done) / rate + 0.5);
    std::snprintf(left, sizeof left, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "[%s] %zu/%zu points  %.2f points/s  %s left", bar.c_str(), done, total, rate, left);
  return buf;
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double s = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\r%s\x1b[K", render(done_, total_, resumed_, s).c_str());
  std::fflush(stderr);
}

}  // namespace tilesim::sweep
