// The progress text and the partial progress of running items.
#include <catch2/catch.hpp>

#include "sim/run/progress.hpp"

using namespace tilesim;
using namespace tilesim::sweep;

TEST_CASE("progress bar: items, their rate, time left", "[sweep]") {
  // 50 of 200 done at 2 points/s: 150 left = 75 s.
  CHECK(Progress::render(50.0, 200, 2.0) == "[#######.......................] 50/200 points  2.00 points/s  0:01:15 left");
  CHECK(Progress::render(0.0, 10, 0.0) == "[..............................] 0/10 points  0.00 points/s  --:-- left");
  CHECK(Progress::render(10.0, 10, 2.0) == "[##############################] 10/10 points  2.00 points/s  0:00:00 left");
  // A point 40% through its dispatches: it shows, and counts in the estimate (149.6 / 2 s).
  CHECK(Progress::render(50.4, 200, 2.0) ==
        "[#######.......................] 50/200 points (+40% running)  2.00 points/s  0:01:15 left");
  CHECK(Progress::render(3.0, 8, 0.5, "candidates") ==
        "[###########...................] 3/8 candidates  0.50 candidates/s  0:00:10 left");
}

TEST_CASE("progress: a running item hands out a dispatch counter only when progress shows", "[sweep]") {
  Progress off(4, 0, ProgressStyle::off);
  CHECK(off.begin_item(100) == nullptr);
  off.end_item(100);
  // Lines style draws nothing in its first 10 s, so this test prints nothing.
  Progress lines(4, 1, ProgressStyle::lines);
  std::atomic<std::uint64_t>* c = lines.begin_item(100);
  REQUIRE(c != nullptr);
  c->fetch_add(40);
  lines.end_item(100);
  CHECK(c->load() == 0);  // the finished item's dispatches leave the running count
  lines.advance();
  lines.finish();
}
