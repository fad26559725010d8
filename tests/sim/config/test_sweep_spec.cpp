// The sweep grammar: axes, ranges, zip groups, filters and the baseline, and their errors.
#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "sim/config/experiment.hpp"
#include "sim/config/expression.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {

const char* kBase = R"(name: t
workload: {kind: gemm, m: 256, n: 256, k: 128, dtype: fp16, tile: [128, 128, 64], stages: 2}
)";

ExperimentPlan plan_of(const std::string& sweep) { return load_plan_text(std::string(kBase) + sweep, "t.yaml", ".", {}); }

std::vector<std::string> labels(const ExperimentPlan& p) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < p.size(); ++i) out.push_back(p.label(i));
  return out;
}

std::string error_of(const std::string& sweep) {
  try {
    plan_of(sweep);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sweep: a full grid in file order, the first axis slowest", "[sweep]") {
  const auto p = plan_of("sweep:\n  workload.m: [128, 256]\n  order: [{kind: row}, {kind: grouped, group_m: 2}]\n");
  CHECK(labels(p) == std::vector<std::string>{"workload.m=128 order=row", "workload.m=128 order=grouped(group_m=2)",
                                              "workload.m=256 order=row", "workload.m=256 order=grouped(group_m=2)"});
  // Without `baseline`, the last axis is compared against its first value.
  CHECK(p.sweep.compare.axes == std::vector<std::size_t>{1});
  CHECK(p.sweep.compare.baseline == std::vector<std::uint32_t>{0});
  CHECK_FALSE(p.sweep.compare.from_file);
}

TEST_CASE("sweep: ranges by step and by factor include their end", "[sweep]") {
  CHECK(labels(plan_of("sweep:\n  workload.m: {from: 128, to: 512, step: 128}\n")) ==
        std::vector<std::string>{"workload.m=128", "workload.m=256", "workload.m=384", "workload.m=512"});
  CHECK(labels(plan_of("sweep:\n  workload.m: {from: 128, to: 1024, times: 2}\n")) ==
        std::vector<std::string>{"workload.m=128", "workload.m=256", "workload.m=512", "workload.m=1024"});
  // An end that is not reached exactly is not passed.
  CHECK(labels(plan_of("sweep:\n  workload.m: {from: 1024, to: 200, times: 0.5}\n")) ==
        std::vector<std::string>{"workload.m=1024", "workload.m=512", "workload.m=256"});
  CHECK_THAT(error_of("sweep:\n  workload.m: {from: 128, to: 512}\n"), Contains("exactly one of step"));
  CHECK_THAT(error_of("sweep:\n  workload.m: {from: 512, to: 128, step: 128}\n"), Contains("sweep.workload.m.step"));
  CHECK_THAT(error_of("sweep:\n  workload.m: {from: 128, to: 512, times: 1}\n"), Contains("sweep.workload.m.times"));
}

TEST_CASE("sweep: zip groups move together and are one axis", "[sweep]") {
  const auto p = plan_of(
      "sweep:\n  zip: {workload.n: [256, 384], workload.k: [128, 64]}\n  order: [{kind: row}, {kind: column}]\n");
  CHECK(labels(p) == std::vector<std::string>{"workload.n=256 workload.k=128 order=row",
                                              "workload.n=256 workload.k=128 order=column",
                                              "workload.n=384 workload.k=64 order=row",
                                              "workload.n=384 workload.k=64 order=column"});
  CHECK(p.sweep.axes.size() == 2);
  CHECK(p.sweep.axes[0].labels == std::vector<std::string>{"256,128", "384,64"});
  CHECK(p.build(3).workload->kernels[0].grid_n == 3);  // 384 / 128
  CHECK_THAT(error_of("sweep:\n  zip: {workload.n: [256, 384], workload.k: [128]}\n"),
             Contains("'workload.n' has 2 values but 'workload.k' has 1"));
  CHECK_THAT(error_of("sweep:\n  workload.n: [256]\n  zip: {workload.n: [256], workload.k: [128]}\n"),
             Contains("swept twice"));
}

TEST_CASE("sweep: exclude by values or expression, only_if by expression", "[sweep]") {
  const std::string axes = "sweep:\n  workload.m: [128, 256, 512]\n  order: [{kind: row}, {kind: grouped, group_m: 2}]\n";
  const auto ex = plan_of(axes + "  exclude: [{workload.m: 256, order: row}, \"workload.m > 300\"]\n");
  CHECK(labels(ex) == std::vector<std::string>{"workload.m=128 order=row", "workload.m=128 order=grouped(group_m=2)",
                                               "workload.m=256 order=grouped(group_m=2)"});
  CHECK(ex.sweep.grid_size == 6);
  // Keys outside the sweep are visible too, and map values compare by label or by parts.
  const auto only = plan_of(axes + "  only_if: [\"workload.m <= workload.n\", \"order.kind == 'grouped' or workload.m == 128\"]\n");
  CHECK(labels(only) == std::vector<std::string>{"workload.m=128 order=row", "workload.m=128 order=grouped(group_m=2)",
                                                 "workload.m=256 order=grouped(group_m=2)"});
  CHECK_THAT(error_of(axes + "  only_if: \"workload.mm > 1\"\n"), Contains("key 'workload.mm' is not set"));
  CHECK_THAT(error_of(axes + "  only_if: \"workload.m >\"\n"), Contains("t.yaml: sweep.only_if") && Contains("column 13"));
  CHECK_THAT(error_of(axes + "  only_if: \"workload.m + 1\"\n"), Contains("expected a condition, got a number"));
  // Deep nesting and huge expressions are refused, not a stack overflow (issue 17, D1).
  const std::string deep = std::string(30000, '(') + "1 == 1" + std::string(30000, ')');
  CHECK_THAT(error_of(axes + "  only_if: \"" + deep + "\"\n"), Contains("t.yaml: sweep.only_if") && Contains("more than 4096"));
  const std::string nested = std::string(100, '(') + "1 == 1" + std::string(100, ')');
  CHECK_THAT(error_of(axes + "  only_if: \"" + nested + "\"\n"), Contains("nested more than 64 deep"));
  std::string nots;
  for (int i = 0; i < 1000; ++i) nots += "not ";
  CHECK_THAT(error_of(axes + "  only_if: \"" + nots + "true\"\n"), Contains("nested more than 64 deep"));
  CHECK_THAT(error_of(axes + "  exclude: \"workload.m > 0\"\n"),
             Contains("leave no point"));
}

TEST_CASE("sweep: baseline by axis value, label or bare key", "[sweep]") {
  const std::string axes = "sweep:\n  order: [{kind: row}, {kind: grouped, group_m: 2}]\n  workload.m: [128, 256]\n";
  auto p = plan_of(axes + "  baseline: {order: grouped(group_m=2)}\n");
  CHECK(p.sweep.compare.axes == std::vector<std::size_t>{0});
  CHECK(p.sweep.compare.baseline == std::vector<std::uint32_t>{1});
  CHECK(p.sweep.compare.from_file);
  p = plan_of(axes + "  baseline: {order: {kind: grouped, group_m: 2}}\n");
  CHECK(p.sweep.compare.baseline == std::vector<std::uint32_t>{1});
  p = plan_of(axes + "  baseline: workload.m\n");
  CHECK(p.sweep.compare.axes == std::vector<std::size_t>{1});
  CHECK_THAT(error_of(axes + "  baseline: {order: hilbert}\n"), Contains("matches none of the axis's values (row, grouped(group_m=2))"));
  CHECK_THAT(error_of(axes + "  baseline: {arch: h100}\n"), Contains("is not a sweep axis (axes: order, workload.m)"));
}

TEST_CASE("sweep: a bad point is named before anything runs", "[sweep]") {
  const auto p = plan_of("sweep:\n  workload.m: [256, 0]\n");
  CHECK_NOTHROW(p.build(0));
  CHECK_THROWS_WITH(p.build(1), Contains("[sweep point workload.m=0]") && Contains("workload.m"));
}

TEST_CASE("sweep: the point hash follows the resolved configuration, not its spelling", "[sweep]") {
  const auto a = plan_of("sweep:\n  workload.m: [128, 256]\n");
  const auto b = load_plan_text("workload: {k: 128, n: 256, m: 256, kind: gemm, dtype: fp16, tile: [128, 128, 64], stages: 2}\nname: t\n",
                                "t.yaml", ".", {});
  CHECK(a.point_hash(1) == b.point_hash(0));
  CHECK(a.point_hash(0) != a.point_hash(1));
  const auto c = load_plan_text(kBase, "t.yaml", ".", {"arch_overrides.l2.bytes=1048576"});
  CHECK(c.point_hash(0) != a.point_hash(1));
}

TEST_CASE("sweep: points that differ only in the model share one workload", "[sweep]") {
  const auto p = plan_of("sweep:\n  arch_overrides.l2.bytes: [1048576, 2097152]\n  sim.seed: [1, 2]\n  order: [{kind: row}, {kind: column}]\n");
  sweep::WorkloadCache cache;
  std::vector<std::shared_ptr<const Workload>> w;
  for (std::size_t i = 0; i < p.size(); ++i) w.push_back(p.build(i, &cache).workload);
  CHECK(cache.builds() == 2);  // one per order
  CHECK(w[0] == w[2]);
  CHECK(w[0] == w[6]);
  CHECK(w[0] != w[1]);
}

TEST_CASE("sweep expressions: arithmetic, precedence and types", "[sweep]") {
  const YAML::Node point = YAML::Load("{a: 6, b: 4, s: 'x', o: {kind: grouped, group_m: 8}, q: '12'}");
  const auto holds = [&](const std::string& e) { return sweep::Expression(e, "t").holds(point, "p"); };
  CHECK(holds("a + b * 2 == 14"));
  CHECK(holds("(a + b) * 2 == 20"));
  CHECK(holds("a % b == 2 and -a < 0"));
  CHECK(holds("not a < b or false"));
  CHECK(holds("s == 'x' and o == \"grouped(group_m=8)\" and o.group_m >= 8"));
  CHECK(holds("q == '12'"));  // a quoted scalar stays a string
  CHECK_THROWS_WITH(holds("a == 'x'"), Contains("cannot compare a number with a string"));
  CHECK_THROWS_WITH(holds("a / 0 == 1"), Contains("division by zero"));
  CHECK_THROWS_WITH(sweep::Expression("a == (b", "t"), Contains("expected ')'"));
}
