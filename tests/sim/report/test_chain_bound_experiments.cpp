// The chain bound is a lower bound on every shipped experiment with a GEMM chain: each point of
// each experiments/*.yaml whose workload is an FFN, shrunk so that the suite stays fast, is
// simulated and its DRAM traffic compared with the bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "sim/config/experiment.hpp"
#include "sim/report/bounds.hpp"
#include "sim/report/chain_bound.hpp"
#include "workloads/model_presets.hpp"

using namespace tilesim;
namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kShrink = 8;  // d and f shrink 8x, the L2 64x: sqrt(S)/d, the bound's regime, stays

// The point with d and f divided by kShrink, at most 256 rows, and an L2 kShrink^2 times smaller
// (rounded down to what the arch's sets allow).
void shrink(YAML::Node& y) {
  YAML::Node wl = y["workload"];
  std::uint32_t d = 0, f = 0;
  if (wl["model"]) {
    const ModelPreset* p = find_model_preset(wl["model"].as<std::string>());
    REQUIRE(p);
    d = p->d;
    f = p->f;
  }
  if (wl["d"]) d = wl["d"].as<std::uint32_t>();
  if (wl["f"]) f = wl["f"].as<std::uint32_t>();
  wl["d"] = std::max<std::uint32_t>(d / kShrink, 64);
  wl["f"] = std::max<std::uint32_t>(f / kShrink, 64);
  wl["m"] = std::min<std::uint32_t>(wl["m"].as<std::uint32_t>(), 256);
  const YAML::Node overrides = y["arch_overrides"] ? y["arch_overrides"] : YAML::Node(YAML::NodeType::Map);
  const ArchSpec a = load_arch(y["arch"] ? y["arch"].as<std::string>() : "h100", overrides, "shrink");
  const std::uint64_t unit = std::uint64_t{a.l2.line_bytes} * a.l2.ways * a.l2.partitions;
  y["arch_overrides"]["l2"]["bytes"] = std::max(unit, a.l2.bytes / (kShrink * kShrink) / unit * unit);
}

}  // namespace

TEST_CASE("chain bound: never above the simulated DRAM traffic of the shipped FFN experiments", "[report][experiments]") {
  const fs::path dir = fs::path(TILESIM_TEST_DIR).parent_path() / "experiments";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::size_t checked = 0, above_compulsory = 0;
  for (const fs::path& file : files) {
    const ExperimentPlan plan = load_plan(file.string(), {});
    for (std::size_t i = 0; i < plan.size(); ++i) {
      YAML::Node y = plan.point_yaml(i);
      // kind: layer (being written) holds GEMM chains too: shrink it here once it lands.
      if (!y["workload"] || y["workload"]["kind"].as<std::string>() != "ffn") continue;
      shrink(y);
      const Experiment e = load_experiment_text(YAML::Dump(y), file.string(), dir.string(), {});
      const ExperimentPoint& p = e.points.at(0);
      if (find_gemm_chains(*p.workload).empty()) continue;
      const RunBounds b = compute_traffic_bounds(*p.workload, p.arch.l2.bytes, infer_gemm_shapes(*p.workload));
      SimResult r;
      try {
        r = simulate(*p.workload, p.arch, p.options);
      } catch (const std::exception& ex) {
        // `after: start` is there to deadlock (ffn_bad_dataflow.yaml): nothing to compare.
        INFO(file.filename().string() << " " << plan.label(i) << ": " << ex.what());
        CHECK(std::string(ex.what()).find("deadlock") != std::string::npos);
        continue;
      }
      std::uint64_t dram = 0;
      for (const KernelStats& k : r.kernels) dram += k.mem.dram_read_bytes + k.mem.dram_write_bytes;
      INFO(file.filename().string() << " " << plan.label(i) << ": chain bound " << b.total.chain_io_bound_bytes
                                    << " B, compulsory " << b.total.compulsory_bytes << " B, DRAM " << dram << " B");
      CHECK(b.total.chain_io_bound_bytes <= dram);
      CHECK(b.total.bound_bytes() <= dram);
      ++checked;
      if (b.total.chain_io_bound_bytes > b.total.compulsory_bytes) ++above_compulsory;
    }
  }
  CHECK(checked >= 100);
  // The comparison must exercise the bound where it exceeds the compulsory traffic somewhere.
  CHECK(above_compulsory > 0);
}
