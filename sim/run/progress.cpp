#include "sim/run/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace tilesim::sweep {

namespace {
constexpr auto kTick = std::chrono::milliseconds(200);
constexpr double kWindowSeconds = 60;  // the rate's window
constexpr double kLineSeconds = 10;    // between lines when stderr is not a terminal
}  // namespace

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

SimResult simulate_counted(const Workload& w, const ArchSpec& arch, SimOptions options, Progress* progress) {
  if (!progress) return simulate(w, arch, options);
  const std::uint64_t positions = w.dispatch_positions();
  options.dispatched_blocks = progress->begin_item(positions);
  try {
    SimResult r = simulate(w, arch, options);
    progress->end_item(positions);
    return r;
  } catch (...) {
    progress->end_item(positions);
    throw;
  }
}

ProgressStyle progress_style(bool quiet) {
  if (quiet) return ProgressStyle::off;
  return stderr_is_terminal() ? ProgressStyle::bar : ProgressStyle::lines;
}

Progress::Progress(std::size_t total, std::size_t done, ProgressStyle style, std::string unit)
    : total_(total), resumed_(done), done_(done), style_(total > 0 ? style : ProgressStyle::off),
      unit_(std::move(unit)), start_(std::chrono::steady_clock::now()), last_line_(start_) {
  if (style_ == ProgressStyle::off) return;
  thread_ = std::thread([this] { tick(); });
}

Progress::~Progress() { finish(); }

void Progress::advance() { done_.fetch_add(1, std::memory_order_relaxed); }

std::atomic<std::uint64_t>* Progress::begin_item(std::uint64_t blocks) {
  if (style_ == ProgressStyle::off) return nullptr;
  running_blocks_.fetch_add(blocks, std::memory_order_relaxed);
  return &running_dispatched_;
}

void Progress::end_item(std::uint64_t blocks) {
  if (style_ == ProgressStyle::off) return;
  // The item dispatched all its blocks (or stopped): take them off both counts.
  running_blocks_.fetch_sub(blocks, std::memory_order_relaxed);
  running_dispatched_.fetch_sub(std::min<std::uint64_t>(blocks, running_dispatched_.load()), std::memory_order_relaxed);
}

double Progress::effective_done() const {
  const double running = static_cast<double>(running_blocks_.load(std::memory_order_relaxed));
  const double dispatched = static_cast<double>(running_dispatched_.load(std::memory_order_relaxed));
  // Running items together count as the share of their blocks dispatched, at most one item
  // short of done (a point's last blocks still have to finish).
  const double partial = running > 0 ? std::min(dispatched / running, 1.0) : 0.0;
  return static_cast<double>(done_.load(std::memory_order_relaxed)) + partial;
}

void Progress::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    finished_ = stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (style_ != ProgressStyle::off) draw(true);
}

std::string Progress::render(double done, std::size_t total, double rate, const std::string& unit) {
  constexpr int kWidth = 30;
  const double frac = total ? std::min(done / static_cast<double>(total), 1.0) : 1.0;
  std::string bar(static_cast<std::size_t>(frac * kWidth), '#');
  bar.resize(kWidth, '.');
  char left[32] = "--:--";
  if (rate > 0) {
    const auto s = static_cast<long>(std::max(0.0, static_cast<double>(total) - done) / rate + 0.5);
    std::snprintf(left, sizeof left, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  }
  const auto whole = static_cast<std::size_t>(done);
  char buf[200];
  if (done > static_cast<double>(whole) + 1e-9)  // items running: show how far the running ones are
    std::snprintf(buf, sizeof buf, "[%s] %zu/%zu %s (+%.0f%% running)  %.2f %s/s  %s left", bar.c_str(), whole, total,
                  unit.c_str(), 100 * (done - static_cast<double>(whole)), rate > 0 ? rate : 0.0, unit.c_str(), left);
  else
    std::snprintf(buf, sizeof buf, "[%s] %zu/%zu %s  %.2f %s/s  %s left", bar.c_str(), whole, total, unit.c_str(),
                  rate > 0 ? rate : 0.0, unit.c_str(), left);
  return buf;
}

void Progress::tick() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, kTick, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    draw(false);
    lock.lock();
  }
}

void Progress::draw(bool final) {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - start_).count();
  const double done = final ? static_cast<double>(done_.load()) : effective_done();
  // The rate over the last minute of this run (resumed items excluded: they cost nothing).
  samples_.emplace_back(s, done);
  while (samples_.size() > 2 && s - samples_.front().first > kWindowSeconds) samples_.pop_front();
  double rate = 0;
  if (samples_.size() >= 2 && s - samples_.front().first > 0.5)
    rate = (done - samples_.front().second) / (s - samples_.front().first);
  else if (s > 0)
    rate = (done - static_cast<double>(resumed_)) / s;
  const std::string text = render(done, total_, rate, unit_);
  if (style_ == ProgressStyle::bar) {
    std::fprintf(stderr, "\r%s\x1b[K%s", text.c_str(), final ? "\n" : "");
    std::fflush(stderr);
    return;
  }
  // Lines: the first after kLineSeconds, then every kLineSeconds, and a last one if any was printed.
  if (final) {
    if (printed_) std::fprintf(stderr, "progress: done, %zu/%zu %s in %.0f s\n", done_.load(), total_, unit_.c_str(), s);
    return;
  }
  if (std::chrono::duration<double>(now - last_line_).count() < kLineSeconds) return;
  last_line_ = now;
  printed_ = true;
  std::fprintf(stderr, "progress: %s\n", text.c_str());
  std::fflush(stderr);
}

}  // namespace tilesim::sweep
