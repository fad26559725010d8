#include "sim/tools/explore/manual_data.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "common/base64.hpp"
#include "models/cache/hash/hash.hpp"
#include "models/cache/replacement/replacement.hpp"
#include "sim/config/canonical.hpp"
#include "sim/tools/explore/replay_program.hpp"

namespace tilesim::explore {

using nlohmann::json;

namespace {

std::string scalar(const YAML::Node& n, const char* key) {
  return n && n.IsMap() && n[key] && n[key].IsScalar() ? n[key].as<std::string>() : "";
}

// Why the point's workload has no manual mode ("" when it has one); `chain` says which kind.
std::string manual_kind(const YAML::Node& y, bool& chain) {
  const std::string kind = scalar(y["workload"], "kind");
  chain = kind == "ffn";
  if (chain) {
    if (scalar(y["sync"], "kind") != "dataflow")
      return "manual mode takes an FFN only under `sync: {kind: dataflow}` (one fused kernel whose tiles a chain "
             "order file orders)";
    return "";
  }
  if (kind != "gemm") return "manual mode needs a single GEMM (workload kind: gemm) or an FFN under sync: dataflow";
  if (y["workload"]["batch"] && y["workload"]["batch"].as<std::uint64_t>() > 1) return "manual mode needs a GEMM with batch 1";
  if (y["workload"]["split_k"] && y["workload"]["split_k"].as<std::uint64_t>() > 1)
    return "manual mode needs a GEMM without split-K";
  return "";
}

}  // namespace

std::string manual_experiment_yaml(const ExperimentPlan& plan, std::size_t point, std::string& why) {
  YAML::Node y = plan.point_yaml(point);
  bool chain = false;
  why = manual_kind(y, chain);
  if (!why.empty()) return "";
  for (const char* k : {"sweep", "tune", "validate"}) y.remove(k);
  // A relative arch file is relative to the experiment; the exported file may live anywhere.
  if (y["arch"] && y["arch"].IsScalar()) {
    const std::string arch = y["arch"].as<std::string>();
    if (!arch_preset_yaml(arch).IsDefined())
      y["arch"] = std::filesystem::absolute(std::filesystem::path(plan.base_dir) / arch).lexically_normal().string();
  }
  YAML::Node order(YAML::NodeType::Map);
  order["kind"] = "file";
  order["path"] = "@ORDER_FILE@";
  y["order"] = order;
  y["arch_overrides"]["sm"]["count"] = 1;
  y["arch_overrides"]["sm"]["partition_map"] = "interleaved";  // SM 0 sits next to partition 0
  y["arch_overrides"]["sm"]["l2_port_fast_sms"] = YAML::Node(YAML::NodeType::Sequence);  // names SMs of the full part
  y["arch_overrides"]["sm"]["gpcs"] = YAML::Node(YAML::NodeType::Sequence);              // so does this
  y["arch_overrides"]["sm"]["gpcs_joined"] = YAML::Node(YAML::NodeType::Sequence);       // the point's own joins would name the emptied map's groups
  if (chain) {
    // The chain order file gives the interleaving (dataflow refuses after/rows beside it), and
    // the fused kernel's occupancy is the sync's key, not the workload's.
    y["sync"].remove("after");
    y["sync"].remove("rows");
    y["sync"]["blocks_per_sm"] = 1;
  } else {
    y["workload"]["blocks_per_sm"] = 1;
  }
  y["name"] = plan.name + "-manual";
  return "# tilesim explore: the manual order of " + plan.file + ", run one block at a time on one SM\n" +
         yaml_document(y);
}

json manual_l2_json(const L2Spec& l2) {
  // The wasm module numbers hashes and policies by their place in each family's list.
  static const std::vector<std::string> kHashes = hash_names(), kRepl = replacement_names();
  const auto id = [](const std::vector<std::string>& names, const std::string& n) {
    return static_cast<int>(std::find(names.begin(), names.end(), n) - names.begin());
  };
  return {{"bytes", l2.bytes},
          {"partitions", l2.partitions},
          {"line_bytes", l2.line_bytes},
          {"sector_bytes", l2.sector_bytes},
          {"ways", l2.ways},
          {"hash", l2.hash},
          {"replacement", l2.replacement},
          {"far_copy", l2.far_copy},
          {"hash_id", id(kHashes, l2.hash)},
          {"replacement_id", id(kRepl, l2.replacement)}};
}

namespace {

std::string too_large(const char* what, std::uint64_t tiles) {
  return "manual mode is offered for grids of up to " + std::to_string(kMaxManualTiles) + " tiles (" + what + " has " +
         std::to_string(tiles) + ")";
}

// The program of the point's workload, and its `manual` fields that differ by kind; `why` set
// (and nothing else) when the workload does not fit the mode.
ReplayProgram manual_program(const Workload& w, bool chain_yaml, json& m, std::string& why) {
  if (chain_yaml) {
    const std::optional<ChainGrids> g = w.kernels.size() == 1 ? chain_grids(w.kernels[0]) : std::nullopt;
    if (!g) {
      why = "manual mode needs the FFN as one fused dataflow kernel (a separate gate kernel runs before it here)";
      return {};
    }
    if (g->producer_tiles() > kMaxManualTiles) why = too_large("the producer", g->producer_tiles());
    if (std::uint64_t{g->grid_m} * g->consumer_n > kMaxManualTiles) why = too_large("the consumer", g->grid_m * g->consumer_n);
    if (!why.empty()) return {};
    m = {{"grid_m", g->grid_m}, {"grid_n", g->grid_n}, {"chain", {{"consumer_n", g->consumer_n}}},
         {"order_file", "manual_chain_order.txt"}};
    return chain_replay_program(w, 0, *g);
  }
  const Kernel& k = w.kernels[0];
  if (k.num_blocks() > kMaxManualTiles) {
    why = too_large("this one", k.num_blocks());
    return {};
  }
  m = {{"grid_m", k.grid_m}, {"grid_n", k.grid_n}, {"chain", nullptr}, {"order_file", "manual_order.txt"}};
  return replay_program(w, 0);
}

}  // namespace

void add_manual(json& v, const ExperimentPlan& plan, std::size_t point, const ExperimentPoint& p,
                const std::vector<std::vector<Addr>>& samples) {
  std::string why;
  const std::string manual_yaml = manual_experiment_yaml(plan, point, why);
  json m;
  ReplayProgram prog;
  // manual_experiment_yaml accepts an FFN only under dataflow: then the manual order is a chain.
  if (why.empty()) prog = manual_program(*p.workload, scalar(plan.point_yaml(point)["workload"], "kind") == "ffn", m, why);
  if (!why.empty()) {
    v["manual"] = nullptr;
    v["manual_note"] = why;
    return;
  }
  for (const std::vector<Addr>& cell : samples) add_cell(prog, cell);
  const std::vector<std::uint32_t> words = pack_program(prog);
  m["kernel"] = 0;
  m["l2"] = manual_l2_json(p.arch.l2);
  m["partition"] = 0;
  m["seed"] = p.options.seed;
  m["program"] = base64_encode(words.data(), words.size() * sizeof(std::uint32_t));
  m["experiment_yaml"] = manual_yaml;
  v["manual"] = std::move(m);
  v["manual_note"] = "";
}

}  // namespace tilesim::explore
