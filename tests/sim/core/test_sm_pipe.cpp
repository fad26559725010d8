// The SM pipe against hand-computed examples: one job, two fair jobs, an older block ahead of a
// younger one under oldest-first, water-filling under shares, and stale completion events.
#include <catch2/catch.hpp>

#include "sim/core/sm_pipe.hpp"

using namespace tilesim;
using Catch::Matchers::WithinAbs;

namespace {

SmPipe::Completion only(const std::vector<SmPipe::Completion>& c, std::uint32_t slot) {
  SmPipe::Completion found{0, -1, 0};
  int n = 0;
  for (const auto& x : c)
    if (x.slot == slot) {
      found = x;
      ++n;
    }
  REQUIRE(n == 1);
  return found;
}

}  // namespace

TEST_CASE("sm pipe: one job at its full share finishes after its work") {
  SmPipe p;
  std::vector<SmPipe::Completion> ev;
  p.start(3, 1000.0, 1.0, 0, PipeArbitration::fair, 500, ev);
  const auto c = only(ev, 3);
  REQUIRE(c.at == 1500);
  ev.clear();
  REQUIRE(p.finish(3, c.version, 1500, ev));
  REQUIRE_FALSE(p.busy());
}

TEST_CASE("sm pipe: two blocks under fair arbitration share the rate and end together") {
  SmPipe p;
  std::vector<SmPipe::Completion> ev;
  p.start(0, 1000.0, 1.0, 0, PipeArbitration::fair, 0, ev);
  REQUIRE(only(ev, 0).at == 1000);
  ev.clear();
  p.start(1, 1000.0, 1.0, 1, PipeArbitration::fair, 0, ev);
  // Both now at 0.5: 2000 each; job 0's earlier event (version 1) is superseded.
  const auto a = only(ev, 0), b = only(ev, 1);
  REQUIRE(a.at == 2000);
  REQUIRE(b.at == 2000);
  std::vector<SmPipe::Completion> ev2;
  REQUIRE_FALSE(p.finish(0, 1, 1000, ev2));  // the stale event changes nothing
  REQUIRE_THAT(p.rate_of(0), WithinAbs(0.5, 1e-12));
  REQUIRE(p.finish(0, a.version, 2000, ev2));
  REQUIRE(p.finish(1, b.version, 2000, ev2));
}

TEST_CASE("sm pipe: under oldest-first the older block runs ahead, capped by its share") {
  // Shares 0.6: the older job gets 0.6, the younger the remaining 0.4.
  //   older: 1000 / 0.6 = 1666.67 -> ends at 1667
  //   younger by then: 1000 - 0.4 * 1667 = 333.2 left, alone at 0.6 -> 555.33 more -> 2223
  SmPipe p;
  std::vector<SmPipe::Completion> ev;
  p.start(7, 1000.0, 0.6, 10, PipeArbitration::oldest_first, 0, ev);
  p.start(8, 1000.0, 0.6, 11, PipeArbitration::oldest_first, 0, ev);
  REQUIRE_THAT(p.rate_of(7), WithinAbs(0.6, 1e-12));
  REQUIRE_THAT(p.rate_of(8), WithinAbs(0.4, 1e-12));
  SmPipe::Completion older{}, younger{};
  for (const auto& c : ev) (c.slot == 7 ? older : younger) = c;
  REQUIRE(older.at == 1667);
  REQUIRE(younger.at == 2500);
  ev.clear();
  REQUIRE(p.finish(7, older.version, older.at, ev));
  const auto y = only(ev, 8);
  REQUIRE(y.at == 2223);
}

TEST_CASE("sm pipe: fair water-filling gives a capped job its share and splits the rest") {
  SmPipe p;
  std::vector<SmPipe::Completion> ev;
  p.start(0, 300.0, 0.3, 0, PipeArbitration::fair, 0, ev);
  p.start(1, 700.0, 1.0, 1, PipeArbitration::fair, 0, ev);
  p.start(2, 700.0, 1.0, 2, PipeArbitration::fair, 0, ev);
  REQUIRE_THAT(p.rate_of(0), WithinAbs(0.3, 1e-12));
  REQUIRE_THAT(p.rate_of(1), WithinAbs(0.35, 1e-12));
  REQUIRE_THAT(p.rate_of(2), WithinAbs(0.35, 1e-12));
}

TEST_CASE("sm pipe: a block waiting for its data keeps its hold from the jobs, and gives it back") {
  SmPipe p;
  std::vector<SmPipe::Completion> ev;
  p.start(0, 1000.0, 1.0, 0, PipeArbitration::fair, 0, ev);
  REQUIRE(only(ev, 0).at == 1000);
  // At 200 ps slot 1 starts waiting and holds half the pipe: 800 ps of work left at rate 0.5.
  ev.clear();
  p.set_hold(1, 0.5, 200, ev);
  CHECK_THAT(p.rate_of(0), WithinAbs(0.5, 1e-12));
  REQUIRE(only(ev, 0).at == 1800);
  // Setting the same hold again changes nothing.
  ev.clear();
  p.set_hold(1, 0.5, 300, ev);
  CHECK(ev.empty());
  // At 600 ps its data is in: 600 ps of work left at the full rate again.
  ev.clear();
  p.set_hold(1, 0.0, 600, ev);
  CHECK_THAT(p.rate_of(0), WithinAbs(1.0, 1e-12));
  REQUIRE(only(ev, 0).at == 1200);
  // A job whose share is below what the hold leaves runs as before (oldest-first too).
  SmPipe q;
  ev.clear();
  q.start(0, 1000.0, 0.3, 0, PipeArbitration::oldest_first, 0, ev);
  q.set_hold(1, 0.5, 0, ev);
  CHECK_THAT(q.rate_of(0), WithinAbs(0.3, 1e-12));
}
