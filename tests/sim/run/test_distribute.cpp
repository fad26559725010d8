#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "common/error.hpp"
#include "sim/run/distribute.hpp"

using namespace tilesim;
using namespace tilesim::sweep;

namespace {

// A fake point: its line depends on the index only, and its cost varies so that threads
// finish out of order.
std::string fake_line(std::size_t index) {
  std::uint64_t x = index * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < (index % 7) * 2000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return "{\"index\":" + std::to_string(index) + ",\"x\":" + std::to_string(x) + "}";
}

std::vector<std::size_t> indices(std::size_t first, std::size_t count) {
  std::vector<std::size_t> v;
  for (std::size_t i = 0; i < count; ++i) v.push_back(first + i);
  return v;
}

}  // namespace

TEST_CASE("run_local hands every point to done exactly once, whatever the thread count", "[sweep]") {
  // Not 0..n-1: pending is a list of indices (a resumed sweep skips the finished ones).
  std::vector<std::size_t> pending = indices(3, 300);
  pending.erase(pending.begin() + 50, pending.begin() + 60);
  for (const int jobs : {1, 2, 4, 0}) {
    CAPTURE(jobs);
    std::map<std::size_t, std::string> got;
    int calls = 0;
    std::atomic<int> in_done{0};
    bool overlapped = false;
    run_local(pending, jobs, fake_line, [&](std::size_t index, const std::string& line) {
      overlapped |= in_done.fetch_add(1) != 0;  // done must never run concurrently
      ++calls;
      got.emplace(index, line);
      in_done.fetch_sub(1);
    });
    CHECK_FALSE(overlapped);
    CHECK(calls == static_cast<int>(pending.size()));
    REQUIRE(got.size() == pending.size());
    for (const std::size_t i : pending) CHECK(got.at(i) == fake_line(i));
  }
}

TEST_CASE("run_local uses several threads when asked to", "[sweep]") {
  // Each point waits (a while at most) for a second thread to show up, so a loaded machine
  // cannot let one thread finish them all first.
  std::mutex m;
  std::condition_variable cv;
  std::set<std::thread::id> threads;
  run_local(indices(0, 64), 4, [&](std::size_t i) {
    std::unique_lock lock(m);
    threads.insert(std::this_thread::get_id());
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return threads.size() > 1; });
    return std::string("x");
  }, [](std::size_t, const std::string&) {});
  CHECK(threads.size() > 1);
}

TEST_CASE("run_local with no points calls nothing", "[sweep]") {
  bool called = false;
  run_local({}, 4, [&](std::size_t) { called = true; return std::string(); },
            [&](std::size_t, const std::string&) { called = true; });
  CHECK_FALSE(called);
}

TEST_CASE("run_local passes the first exception to the caller and stops handing out points", "[sweep]") {
  for (const int jobs : {1, 2, 4}) {
    CAPTURE(jobs);
    std::atomic<int> started{0};
    int finished = 0;
    auto simulate = [&](std::size_t i) -> std::string {
      ++started;
      if (i == 5) throw InputError("point 5 is bad");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      return fake_line(i);
    };
    // The type survives, so the CLI still returns the exit code of an input error.
    CHECK_THROWS_AS(run_local(indices(0, 1000), jobs, simulate, [&](std::size_t, const std::string&) { ++finished; }),
                    InputError);
    CHECK(started < 1000);  // the others stopped picking new points
    CHECK(finished < 1000);
  }
}

TEST_CASE("run_local passes on an exception from done and calls done no more", "[sweep]") {
  int calls = 0;
  CHECK_THROWS_WITH(run_local(indices(0, 200), 4, fake_line,
                              [&](std::size_t, const std::string&) {
                                if (++calls == 3) throw std::runtime_error("disk full");
                              }),
                    "disk full");
  CHECK(calls == 3);
}

TEST_CASE("a process group started without mpirun is rank 0 of 1 and runs locally", "[sweep]") {
  ProcessGroup group;
  CHECK(group.rank() == 0);
  CHECK(group.size() == 1);
  CHECK(group.is_writer());
  CHECK(group.agree(true));
  CHECK_FALSE(group.agree(false));
  std::map<std::size_t, std::string> got;
  group.run(indices(0, 50), 2, fake_line, [&](std::size_t i, const std::string& line) { got.emplace(i, line); });
  REQUIRE(got.size() == 50);
  CHECK(got.at(17) == fake_line(17));
  CHECK_THROWS_AS(group.run(indices(0, 10), 2, [](std::size_t) -> std::string { throw DeadlockError("stuck"); },
                            [](std::size_t, const std::string&) {}),
                  DeadlockError);
}
