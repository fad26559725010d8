// Thread-block clusters on GPCs (Kernel::cluster_blocks, sm.gpcs): a cluster's blocks start
// together on distinct SMs of one GPC, and the clusters resident at once are what the
// hardware's measured (calibration/measurements/h200/cluster_map).
#include <catch2/catch.hpp>

#include <map>

#include "common/error.hpp"
#include "models/arch.hpp"
#include "sim/core/simulator.hpp"
#include "sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::test;
using Catch::Matchers::Contains;

namespace {

// `blocks` alike compute-bound blocks (10 steps of 1 us), one per SM, in clusters of `cluster`.
Workload clustered(std::uint32_t blocks, std::uint32_t cluster, std::uint32_t per_sm = 1) {
  Kernel k = toy_kernel(2);
  for (std::uint32_t b = 0; b < blocks; ++b) add_block(k, std::vector<std::uint32_t>(10, 0), 1000000);
  k.blocks_per_sm = per_sm;
  k.cluster_blocks = cluster;
  return one_kernel(std::move(k));
}

// Blocks that started with the first (the first wave).
std::uint32_t first_wave(const SimResult& r) {
  std::map<Time, std::uint32_t> starts;
  for (const BlockRecord& b : r.blocks) ++starts[b.start];
  return starts.begin()->second;
}

}  // namespace

TEST_CASE("cluster placement: a cluster's blocks start together on distinct SMs of one GPC", "[sim]") {
  ArchSpec arch = toy_arch(7);
  arch.sm.gpcs = {{0, 1, 2}, {3, 4, 5, 6}};
  const SimResult r = simulate(clustered(12, 2), arch, SimOptions{});
  REQUIRE(r.blocks.size() == 12);
  std::map<std::uint32_t, const BlockRecord*> by_position;
  for (const BlockRecord& b : r.blocks) by_position[b.position] = &b;
  const auto gpc_of = [&](std::uint32_t sm) { return sm < 3 ? 0 : 1; };
  for (std::uint32_t p = 0; p < 12; p += 2) {
    const BlockRecord& a = *by_position[p];
    const BlockRecord& b = *by_position[p + 1];
    CHECK(a.sm != b.sm);
    CHECK(gpc_of(a.sm) == gpc_of(b.sm));
    CHECK(a.start == b.start);
  }
  // Three SMs hold one cluster of two, four hold two: six blocks at once, not seven.
  CHECK(first_wave(r) == 6);
  // Without a GPC map the blocks are placed one by one, on every SM.
  CHECK(first_wave(simulate(clustered(12, 2), toy_arch(7), SimOptions{})) == 7);
}

TEST_CASE("cluster placement: a cluster larger than every GPC is refused up front", "[sim]") {
  ArchSpec arch = toy_arch(7);
  arch.sm.gpcs = {{0, 1, 2}, {3, 4, 5, 6}};
  CHECK_THROWS_AS(simulate(clustered(10, 5), arch, SimOptions{}), InputError);
  CHECK_THROWS_WITH(simulate(clustered(10, 5), arch, SimOptions{}), Contains("cluster of 5") && Contains("GPC"));
}

TEST_CASE("cluster placement: the h200 preset holds as many clusters at once as the GPU did", "[sim]") {
  const ArchSpec arch = load_arch("h200", YAML::Node(), "test");
  // cudaOccupancyMaxActiveClusters on the H200 (cluster_map.csv.gz), at 1 and 2 blocks per SM.
  const std::map<std::uint32_t, std::uint32_t> one = {{2, 66}, {3, 39}, {4, 30}, {6, 17}, {8, 15}, {9, 9}, {12, 7}, {16, 7}};
  const std::map<std::uint32_t, std::uint32_t> two = {{2, 132}, {3, 79}, {4, 62}, {6, 39}, {8, 30}, {9, 23}, {12, 16}, {16, 14}};
  for (const auto& [per_sm, table] : {std::pair{1u, one}, std::pair{2u, two}})
    for (const auto& [size, clusters] : table) {
      CAPTURE(per_sm, size);
      CHECK(first_wave(simulate(clustered(2 * clusters * size, size, per_sm), arch, SimOptions{})) == clusters * size);
    }
}

TEST_CASE("cluster placement: sm.gpcs is checked", "[sim][config]") {
  const auto arch_with = [](const std::string& gpcs) {
    const std::string yaml = R"(
name: toy
sm: {count: 4, clock_mhz: 1000, max_threads: 2048, max_blocks: 32, registers: 65536,
     shared_memory_bytes: 233472, max_shared_memory_per_block: 232448, gpcs: )" + gpcs + R"(}
compute: {flops_per_cycle: {fp16: 1000}, mainloop: mma_sync, mainloops: {mma_sync: {efficiency: 1.0, saturating_warps: 1, arbitration: fair}}}
l2: {bytes: 4096, partitions: 1, line_bytes: 128, sector_bytes: 32, ways: 4, hash: modulo, replacement: lru,
     hit_latency_ns: 100, bandwidth_gbps: 256}
dram: {bandwidth_gbps: 128, latency_ns: 200}
)";
    return parse_arch(ConfigNode(YAML::Load(yaml), "toy.yaml", ""));
  };
  CHECK(arch_with("[[0, 1], [2, 3]]").sm.gpcs.size() == 2);
  CHECK_THROWS_WITH(arch_with("[[0, 1], [1, 2]]"), Contains("toy.yaml") && Contains("two GPCs"));
  CHECK_THROWS_WITH(arch_with("[[0, 4]]"), Contains("toy.yaml") && Contains("does not exist"));
  CHECK_THROWS_WITH(arch_with("[0, 1]"), Contains("toy.yaml") && Contains("list of SM indices"));
  CHECK_THROWS_WITH(arch_with("7"), Contains("toy.yaml") && Contains("list of GPCs"));
}
