// The policy families as tables (issue 17): a registry refuses a name twice and describes every
// name; every family's names, wherever they live, come with a description.
#include <catch2/catch.hpp>

#include <functional>
#include <stdexcept>

#include "common/policy_list.hpp"
#include "common/registry.hpp"
#include "models/cache/hash/hash.hpp"
#include "models/cache/replacement/family.hpp"
#include "sim/core/simulator.hpp"
#include "workloads/orders/order.hpp"
#include "workloads/sync/sync.hpp"
#include "workloads/workload.hpp"

using namespace tilesim;

TEST_CASE("a registry refuses a name registered twice and keeps the first", "[registry]") {
  Registry<int> r;
  CHECK(r.add("b", "the second letter", 2));
  CHECK(r.add("a", "the first letter", 1));
  CHECK_THROWS_MATCHES(r.add("a", "again", 3), std::logic_error, Catch::Matchers::Message(
                                                                      "registry: the name 'a' is registered twice"));
  CHECK(r.at("a") == 1);
  CHECK(r.names() == std::vector<std::string>{"a", "b"});
  const auto d = r.described();
  REQUIRE(d.size() == 2);
  CHECK(d[0].name == "a");
  CHECK(d[0].description == "the first letter");
}

TEST_CASE("every policy of every family has a description", "[registry]") {
  const std::vector<std::pair<const char*, std::function<std::vector<NamedPolicy>()>>> families{
      {"workload", workload_kinds_described}, {"order", order_kinds_described},   {"sync", sync_kinds_described},
      {"replacement", replacement_policies},  {"hash", hash_policies},            {"dispatch", dispatch_rules}};
  for (const auto& [family, list] : families) {
    INFO(family);
    const std::vector<NamedPolicy> policies = list();
    CHECK(policies.size() >= 2);
    for (const NamedPolicy& p : policies) {
      INFO(p.name);
      CHECK_FALSE(p.name.empty());
      CHECK(p.description.size() > 10);
    }
  }
  // The run-time registries hold what the generators and builders look names up in.
  CHECK(workload_kinds() == std::vector<std::string>{"attention", "ffn", "gemm", "layer", "stream"});
  CHECK(sync_kinds() == std::vector<std::string>{"dataflow", "rowsync", "stream", "stridedsync", "tilesync"});
  CHECK(order_kinds().size() == 9);
}

TEST_CASE("a compile-time family resolves names to positions and builds the policy there", "[registry]") {
  using P = ReplacementPolicies;
  CHECK(P::names() == std::vector<std::string>{"lru", "fifo", "srrip", "random"});
  CHECK(P::index_of("srrip") == 2);
  CHECK(P::index_of("mru") == P::size);
  CHECK(std::holds_alternative<SrripPolicy>(P::make(2, std::uint64_t{7})));
  // The seed reaches the policy that takes one: two seeds give two victim sequences.
  auto a = std::get<RandomPolicy>(P::make(3, std::uint64_t{1}));
  auto b = std::get<RandomPolicy>(P::make(3, std::uint64_t{2}));
  std::uint8_t meta[16] = {};
  bool differ = false;
  for (int i = 0; i < 16; ++i) differ = differ || a.victim(meta, 16) != b.victim(meta, 16);
  CHECK(differ);
}

TEST_CASE("the dispatch rules resolve by name", "[registry]") {
  CHECK(dispatch_names() == std::vector<std::string>{"oldest_kernel", "round_robin"});
  CHECK(dispatch_rule("round_robin") == SimOptions::Dispatch::round_robin);
  CHECK(dispatch_rule("oldest_kernel") == SimOptions::Dispatch::oldest_kernel);
  CHECK_THROWS_AS(dispatch_rule("fastest"), std::logic_error);
}
