// The shared-workload cache's bounds and failures.
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "sim/config/workload_cache.hpp"

using namespace tilesim;
using namespace tilesim::sweep;

namespace {

Workload workload_of_blocks(std::size_t blocks) {
  Workload w;
  w.kernels.emplace_back();
  w.kernels[0].blocks.resize(blocks);
  return w;
}

}  // namespace

TEST_CASE("workload cache: built once, shared, evicted least recently used first", "[sweep]") {
  const std::size_t one = workload_bytes(workload_of_blocks(1000));
  WorkloadCache cache(2 * one + one / 2);  // room for two
  int built = 0;
  const auto get = [&](const std::string& key) {
    return cache.get(key, [&] {
      ++built;
      return workload_of_blocks(1000);
    });
  };
  const auto a = get("a");
  CHECK(get("a") == a);
  get("b");
  get("a");  // a is now the most recent
  get("c");  // evicts b
  CHECK(built == 3);
  get("a");
  CHECK(built == 3);
  get("b");
  CHECK(built == 4);
  CHECK(cache.builds() == 4);
  CHECK(cache.hits() == 3);
}

TEST_CASE("workload cache: a failing build reaches every waiter and is not cached", "[sweep]") {
  WorkloadCache cache;
  std::atomic<int> calls{0};
  const auto failing = [&]() -> Workload {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    throw std::runtime_error("bad point");
  };
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      try {
        cache.get("k", failing);
      } catch (const std::runtime_error&) {
        ++errors;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(errors == 4);
  CHECK(calls >= 1);
  CHECK(cache.get("k", [] { return workload_of_blocks(1); })->kernels[0].blocks.size() == 1);
}
