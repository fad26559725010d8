// The progress bar's text.
#include <catch2/catch.hpp>

#include "sim/run/progress.hpp"

using namespace tilesim;
using namespace tilesim::sweep;

TEST_CASE("progress bar: points, rate of this run's points, time left", "[sweep]") {
  // 50 of 200 done, 10 of them resumed: 40 points in 20 s is 2 points/s, 150 left = 75 s.
  CHECK(Progress::render(50, 200, 10, 20.0) ==
        "[#######.......................] 50/200 points  2.00 points/s  0:01:15 left");
  CHECK(Progress::render(0, 10, 0, 0.0) == "[..............................] 0/10 points  0.00 points/s  --:-- left");
  CHECK(Progress::render(10, 10, 0, 5.0) == "[##############################] 10/10 points  2.00 points/s  0:00:00 left");
}
