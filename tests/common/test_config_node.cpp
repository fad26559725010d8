#include <catch2/catch.hpp>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "common/files.hpp"
#include "common/utf8.hpp"

using namespace tilesim;
using Catch::Matchers::Contains;

namespace {
ConfigNode node(const char* yaml, const char* path = "workload") {
  return ConfigNode(YAML::Load(yaml), "exp.yaml", path);
}
}  // namespace

TEST_CASE("unknown keys are named with their dotted path", "[config]") {
  const ConfigNode n = node("{kind: gemm, mm: 5}");
  REQUIRE_THROWS_WITH(n.allow_keys({"kind", "m"}), Contains("exp.yaml: workload.mm") && Contains("unknown key"));
}

TEST_CASE("duplicate and non-name keys are refused (issue 17, D4 and D10)", "[config]") {
  REQUIRE_THROWS_WITH(node("{m: 512, m: 4096}").allow_keys({"m"}), Contains("workload.m") && Contains("duplicate key"));
  REQUIRE_THROWS_WITH(node("{? {a: 1} : 2}").allow_keys({"m"}), Contains("workload") && Contains("expected a key name"));
  CHECK_NOTHROW(node("{m: 512, n: 4096}").allow_keys({"m", "n"}));
}

TEST_CASE("integers are range-checked and typed", "[config]") {
  const ConfigNode n = node("{m: 4096, bad: 12x, neg: -3, hex: 0x10}");
  CHECK(n.integer("m", 1, 1 << 20) == 4096);
  CHECK(n.integer("hex", 0, 100) == 16);
  REQUIRE_THROWS_WITH(n.integer("bad", 1, 100), Contains("workload.bad") && Contains("expected an integer"));
  REQUIRE_THROWS_WITH(n.integer("neg", 1, 100), Contains("workload.neg") && Contains("[1, 100]"));
  REQUIRE_THROWS_WITH(n.integer("missing", 1, 100), Contains("workload.missing") && Contains("missing required key"));
  CHECK(n.integer_or("missing", 7, 1, 100) == 7);
  // YAML 1.2: a leading zero is still decimal, 0o is octal; a quoted number is a string.
  const ConfigNode y = node("{lead: 0512, oct: 0o17, quoted: \"512\", single: '64'}");
  CHECK(y.integer("lead", 0, 1000) == 512);
  CHECK(y.integer("oct", 0, 100) == 15);
  REQUIRE_THROWS_WITH(y.integer("quoted", 0, 1000), Contains("workload.quoted") && Contains("the string"));
  REQUIRE_THROWS_WITH(y.integer("single", 0, 1000), Contains("workload.single") && Contains("the string"));
}

TEST_CASE("byte counts accept units", "[config]") {
  const ConfigNode n = node("{a: 4096, b: 16 MiB, c: 2KB, d: 3 parsecs}");
  CHECK(n.bytes("a", 0, ~0ull) == 4096);
  CHECK(n.bytes("b", 0, ~0ull) == 16ull << 20);
  CHECK(n.bytes("c", 0, ~0ull) == 2000);
  REQUIRE_THROWS_WITH(n.bytes("d", 0, ~0ull), Contains("unknown byte unit"));
}

TEST_CASE("choices list what was expected", "[config]") {
  const ConfigNode n = node("{dtype: fp17}");
  REQUIRE_THROWS_WITH(n.choice("dtype", {"fp16", "bf16"}), Contains("workload.dtype") && Contains("fp16, bf16"));
}

TEST_CASE("set overrides create nested keys and parse YAML values", "[config]") {
  YAML::Node root = YAML::Load("{workload: {m: 1}}");
  apply_override(root, "workload.m=4096");
  apply_override(root, "order={kind: grouped, group_m: 8}");
  apply_override(root, "sim.warm_l2=true");
  CHECK(root["workload"]["m"].as<int>() == 4096);
  CHECK(root["order"]["group_m"].as<int>() == 8);
  CHECK(root["sim"]["warm_l2"].as<bool>());
  REQUIRE_THROWS_AS(apply_override(root, "novalue"), InputError);
  REQUIRE_THROWS_WITH(apply_override(root, "workload.m.x=1"), Contains("not a mapping"));
}

TEST_CASE("merge_yaml overlays mappings key by key", "[config]") {
  const YAML::Node merged = merge_yaml(YAML::Load("{l2: {ways: 16, bytes: 100}, sm: {count: 2}}"),
                                       YAML::Load("{l2: {ways: 8}}"));
  CHECK(merged["l2"]["ways"].as<int>() == 8);
  CHECK(merged["l2"]["bytes"].as<int>() == 100);
  CHECK(merged["sm"]["count"].as<int>() == 2);
}

TEST_CASE("YAML syntax errors name the file and line", "[config]") {
  REQUIRE_THROWS_WITH(load_yaml_text("a: 1\nb: [1, 2\n", "exp.yaml"), Contains("exp.yaml (line"));
  REQUIRE_THROWS_WITH(load_yaml_file("/nonexistent/x.yaml"), Contains("cannot open"));
}

TEST_CASE("a --set value's errors name the --set and no line of the file (issue 17, D14)", "[config]") {
  YAML::Node root = YAML::Load("{workload: {m: 1}}");
  // A syntax error in the one-line value: its column, not "(line 1)".
  REQUIRE_THROWS_WITH(apply_override(root, "workload.m=[1"),
                      Contains("--set workload.m: YAML syntax error at column") && !Contains("(line"));
  // A value read later carries no source position: the messages name the key, not a line of
  // the experiment file the value never was on.
  apply_override(root, "workload.m=-5");
  REQUIRE_THROWS_WITH(ConfigNode(root, "exp.yaml", "").at("workload").integer("m", 1, 100),
                      Contains("exp.yaml: workload.m: expected an integer in [1, 100], got -5") && !Contains("(line"));
  // A quoted value stays a string, and a repeated key in a mapping value is refused as in a file.
  apply_override(root, "workload.m=\"512\"");
  REQUIRE_THROWS_WITH(ConfigNode(root, "exp.yaml", "").at("workload").integer("m", 1, 1000),
                      Contains("got the string \"512\""));
  REQUIRE_THROWS_WITH(apply_override(root, "order={kind: row, kind: column}"), Contains("key 'kind' given twice"));
}

TEST_CASE("text that is not UTF-8 is refused where it is read (issue 17, D3)", "[config]") {
  REQUIRE_THROWS_WITH(load_yaml_text("name: ok\ndescription: \"d\xc3\x28\"\n", "exp.yaml"),
                      Contains("exp.yaml (line 2)") && Contains("not valid UTF-8"));
  REQUIRE_THROWS_WITH(load_yaml_text("name: \"\xff\"\n", "exp.yaml"), Contains("not valid UTF-8"));
  CHECK_NOTHROW(load_yaml_text("name: \"r\xc3\xa9sum\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80\"\n", "exp.yaml"));  // résumé → 🚀
  // Overlong forms and surrogates are not UTF-8 either.
  CHECK_FALSE(valid_utf8("\xc0\xaf"));
  CHECK_FALSE(valid_utf8("\xed\xa0\x80"));
  CHECK_FALSE(valid_utf8("\xf4\x90\x80\x80"));
  CHECK(valid_utf8("plain ascii"));
}

TEST_CASE("nested aliases that expand past a configuration's size are refused (issue 17, D2)", "[config]") {
  // Ten levels of ten aliases each: 10^10 values from a few hundred bytes.
  std::string doc = "a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
  for (int i = 1; i < 10; ++i) {
    doc += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) doc += (j ? ", *a" : "*a") + std::to_string(i - 1);
    doc += "]\n";
  }
  REQUIRE_THROWS_WITH(load_yaml_text(doc, "exp.yaml"), Contains("exp.yaml") && Contains("nested aliases"));
  // A few aliases are fine.
  CHECK_NOTHROW(load_yaml_text("a: &x [1, 2]\nb: *x\nc: *x\n", "exp.yaml"));
}

TEST_CASE("input files that never end or are not files are refused (issue 17, D12)", "[config]") {
  // /dev/zero used to be read without limit.
  REQUIRE_THROWS_WITH(read_text_file("/dev/zero"), Contains("/dev/zero: not a regular file"));
  REQUIRE_THROWS_WITH(load_yaml_file("/dev/zero"), Contains("/dev/zero: not a regular file"));
  REQUIRE_THROWS_WITH(read_text_file("/tmp"), Contains("/tmp: is a folder"));
  REQUIRE_THROWS_WITH(check_input_file("/dev/zero", 1 << 20, /*allow_pipe=*/true), Contains("not a regular file"));
  // A regular file over the cap names its size.
  const std::string path = "/proc/self/exe";  // a regular file (a link to the test binary) of some MB
  REQUIRE_THROWS_WITH(check_input_file(path, 1000), Contains("more than the 1000"));
  CHECK_NOTHROW(check_input_file(path, kMaxTextInputBytes));
  CHECK_NOTHROW(check_input_file("/nonexistent/file", 10));  // opening it fails later, with the caller's message
}

TEST_CASE("a mapping key that is not a name is refused wherever it is (issue 17, fuzzing)", "[config]") {
  // Found by fuzz_experiment: a complex key inside a sweep axis's value reached code that reads
  // keys as strings, and yaml-cpp's "bad conversion" came out as an internal error (exit 1).
  REQUIRE_THROWS_WITH(load_yaml_text("sweep:\n  order: [{? {a: 1} : 2}, {kind: row}]\n", "exp.yaml"),
                      Contains("exp.yaml (line 2)") && Contains("a mapping key must be a name, got a mapping"));
  REQUIRE_THROWS_WITH(load_yaml_text("a: {? [1, 2] : x}\n", "exp.yaml"), Contains("got a list"));
}
