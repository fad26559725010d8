// Aggregates, ranking and targets on hand-made comparisons, and Nsight Compute's hit-rate
// definition on hand-counted sectors.
#include <catch2/catch.hpp>

#include "sim/core/stats.hpp"
#include "sim/tools/validate/validation.hpp"

using namespace tilesim;

namespace {

CaseComparison make(const std::string& name, const std::string& group, double hit_m, double hit_s, double rd_m,
                    double rd_s, double t_m, double t_s) {
  CaseComparison c;
  c.name = name;
  c.group = group;
  c.subset = "validation";
  c.measured.hit_rate_pct = hit_m;
  c.simulated.hit_rate_pct = hit_s;
  c.measured.dram_read_bytes = rd_m;
  c.simulated.dram_read_bytes = rd_s;
  c.measured.dram_write_bytes = c.simulated.dram_write_bytes = 0;
  c.measured.duration_ns = t_m;
  c.simulated.duration_ns = t_s;
  return c;
}

}  // namespace

TEST_CASE("validation: lookup hit rate counts far reads twice and writes as hits", "[validate]") {
  // 100 read sectors, 60 hits; 40 crossed to the far half; 10 write sectors.
  MemCounters m;
  m.read_sectors = 100;
  m.read_hit_sectors = 60;
  m.fabric_sectors = 40;
  m.write_sectors = 10;
  REQUIRE(m.lookup_hit_rate() == Approx(70.0 / 150.0));
  REQUIRE(m.hit_rate() == Approx(60.0 / 110.0));
}

TEST_CASE("validation: errors, ranking and ties aggregate as defined", "[validate]") {
  // Group g: three policies. Measured times 100, 150, 101 (a and c within 2%: a tie).
  std::vector<CaseComparison> cs{make("g_a", "g", 80, 83, 100, 110, 100, 90),
                                 make("g_b", "g", 60, 58, 200, 150, 150, 160),
                                 make("g_c", "g", 70, 70, 100, 100, 101, 180)};
  const Aggregate a = aggregate(cs, "validation", 0.02);
  REQUIRE(a.cases == 3);
  REQUIRE(*a.hit_mae_pp == Approx((3 + 2 + 0) / 3.0));
  REQUIRE(*a.dram_read_mape_pct == Approx((10 + 25 + 0) / 3.0));
  REQUIRE(*a.duration_mape_pct == Approx((10 + 100.0 * 10 / 150 + 100.0 * 79 / 101) / 3));
  // Time pairs: (a,b) measured a<b, simulated 90<160: agree; (a,c) tie; (b,c) measured c<b,
  // simulated 180>160: disagree. DRAM pairs: (a,b) agree, (a,c) tie, (b,c) agree.
  REQUIRE(a.rank_duration.compared == 2);
  REQUIRE(a.rank_duration.agree == 1);
  REQUIRE(a.rank_duration.ties == 1);
  REQUIRE(a.rank_dram.compared == 2);
  REQUIRE(a.rank_dram.agree == 2);
  REQUIRE(*a.rank_agreement == Approx(3.0 / 4.0));
  // Another subset has none of these cases.
  REQUIRE(aggregate(cs, "calibration", 0.02).cases == 0);
  // The L2's read lookups (what the request coalescer left) only where both sides have them.
  REQUIRE_FALSE(a.l2_lookups_mape_pct);
  cs[0].measured.l2_read_lookups = 1000;
  cs[0].simulated.l2_read_lookups = 800;
  cs[1].measured.l2_read_lookups = 500;  // a simulation without the figure (a line from before it) is not counted
  cs[2].simulated.l2_read_lookups = 700;
  REQUIRE(*aggregate(cs, "validation", 0.02).l2_lookups_mape_pct == Approx(20.0));
  cs[1].simulated.l2_read_lookups = 550;
  REQUIRE(*aggregate(cs, "validation", 0.02).l2_lookups_mape_pct == Approx((20.0 + 10.0) / 2));

  Targets t;
  t.hit_mae_pp = 2.0;
  t.rank_agreement = 0.7;
  ValidationReport r;
  r.cases = cs;
  r.subsets["validation"] = a;
  REQUIRE(missed_targets(r, t).empty());
  t.hit_mae_pp = 1.0;
  REQUIRE(missed_targets(r, t).size() == 1);
  // A lookups target without lookups to compare is a miss, not a pass.
  t.hit_mae_pp.reset();
  t.l2_lookups_mape_pct = 5.0;
  REQUIRE(missed_targets(r, t).size() == 1);
  REQUIRE_THAT(missed_targets(r, t).front(), Catch::Contains("no cases"));
  r.subsets["validation"].l2_lookups_mape_pct = 4.0;
  REQUIRE(missed_targets(r, t).empty());
  r.subsets["validation"].l2_lookups_mape_pct = 6.0;
  REQUIRE_THAT(missed_targets(r, t).front(), Catch::Contains("L2 read lookups MAPE"));
}

TEST_CASE("validation: the capacity knee interpolates where the hit rate halves", "[validate]") {
  // Hit rate 90% up to 30 MiB, 60% at 40, 20% at 50: half of 90 = 45 lies between 40 and 50,
  // at 40 + (60 - 45) / (60 - 20) * 10 = 43.75 MiB. Simulated: 90, 90, 30 -> 40 + 45/60*10 = 47.5.
  std::vector<CaseComparison> cs;
  const double mib = 1024.0 * 1024.0;
  const double sizes[] = {30, 40, 50}, meas[] = {90, 60, 20}, sim[] = {90, 90, 30};
  for (int i = 0; i < 3; ++i) {
    CaseComparison c = make("s" + std::to_string(i), "s", meas[i], sim[i], 1, 1, 1, 1);
    c.stream_bytes = sizes[i] * mib;
    cs.push_back(c);
  }
  const Aggregate a = aggregate(cs, "validation", 0.02);
  REQUIRE(*a.knee_measured_mib == Approx(43.75));
  REQUIRE(*a.knee_simulated_mib == Approx(47.5));
  REQUIRE(*a.knee_error_mib == Approx(3.75));
  // Stream cases are not policy pairs.
  REQUIRE(a.rank_duration.compared + a.rank_duration.ties == 0);
}
