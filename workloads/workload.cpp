#include "workloads/workload.hpp"

#include "common/error.hpp"
#include "common/registry.hpp"
#include "models/occupancy.hpp"

namespace tilesim {

using WorkloadRegistry = Registry<WorkloadBuilder>;

bool register_workload(const std::string& kind, std::string description, WorkloadBuilder builder) {
  return WorkloadRegistry::instance().add(kind, std::move(description), std::move(builder));
}

std::vector<std::string> workload_kinds() { return WorkloadRegistry::instance().names(); }
std::vector<NamedPolicy> workload_kinds_described() { return WorkloadRegistry::instance().described(); }

Workload build_workload(const WorkloadContext& ctx) {
  ctx.workload.expect_map();
  const std::string kind = ctx.workload.choice("kind", workload_kinds());
  return WorkloadRegistry::instance().at(kind)(ctx);
}

Addr DeviceAllocator::allocate(std::uint64_t bytes) {
  constexpr Addr kAlign = Addr{2} << 20;
  const Addr a = next_;
  next_ = round_up<Addr>(next_ + std::max<std::uint64_t>(bytes, 1), kAlign);
  return a;
}

std::uint32_t add_matrix(Workload& w, DeviceAllocator& alloc, const std::string& name, std::uint32_t rows,
                         std::uint32_t cols, std::uint16_t elem_bits, bool col_major, std::uint32_t batch,
                         std::uint64_t ld) {
  Tensor t;
  t.name = name;
  t.rows = rows;
  t.cols = cols;
  t.batch = batch;
  t.elem_bits = elem_bits;
  t.col_major = col_major;
  t.ld = ld ? ld : (col_major ? rows : cols);
  t.batch_stride = t.bytes_per_batch();
  t.base = alloc.allocate(t.footprint());
  w.tensors.push_back(t);
  return static_cast<std::uint32_t>(w.tensors.size() - 1);
}

std::uint32_t resident_programs(const ArchSpec& arch, const BlockResources& resources, std::uint32_t blocks_per_sm,
                                const std::string& kernel) {
  return arch.sm.count * compute_occupancy(arch, resources, blocks_per_sm, kernel).blocks_per_sm;
}

std::uint32_t parse_persistent(const ConfigNode& n, const ArchSpec& arch, const BlockResources& resources,
                               std::uint32_t blocks_per_sm, const std::string& kernel) {
  const auto p = n.find("persistent");
  if (!p) return 0;
  // auto: every SM full, as Triton's persistent matmul and FlashAttention-3 launch.
  if (p->is_scalar() && p->as_string() == "auto") return resident_programs(arch, resources, blocks_per_sm, kernel);
  return static_cast<std::uint32_t>(p->as_integer(1, 1 << 24));
}

std::uint32_t parse_blocks_per_sm(const ConfigNode& n, const ArchSpec& arch, const BlockResources& resources,
                                  const std::string& kernel, const std::string& fallback_key) {
  const auto blocks = static_cast<std::uint32_t>(n.integer_or("blocks_per_sm", 0, 0, arch.sm.max_blocks));
  try {
    compute_occupancy(arch, resources, blocks, kernel);
  } catch (const InputError& e) {
    const std::string what = e.what();
    n.fail_key(blocks ? "blocks_per_sm" : fallback_key, what.substr(what.find(": ") + 2));
  }
  return blocks;
}

MainLoopChoice parse_mainloop(const ConfigNode& n, const ArchSpec& arch) {
  MainLoopChoice c;
  auto node = n.find("mainloop");
  if (!node) return c;
  std::string name;
  if (node->is_map()) {
    node->allow_keys({"kind", "efficiency", "serialized", "fragments", "l2_prefetch"});
    name = node->string("kind");
    c.efficiency = node->number_or("efficiency", 0, 0.01, 1.0);
    c.serialized = node->boolean_or("serialized", false);
    c.single_fragments = node->choice_or("fragments", "double", {"double", "single"}) == "single";
    if (node->has("l2_prefetch")) {
      const std::string p = node->choice_or("l2_prefetch", "none", {"none", "64", "128"});
      c.l2_prefetch = p == "none" ? 0 : static_cast<std::uint32_t>(std::stoul(p));
    }
  } else {
    name = node->as_string();
  }
  const auto kind = mainloop_from_name(name);
  if (!kind || !arch.compute.mainloop(*kind).supported)
    (node->is_map() ? node->at("kind") : *node)
        .fail("expected a main-loop kind " + arch.name + " runs (" + arch.compute.supported_mainloops() + "), got '" +
              name + "'");
  c.kind = kind;
  if (c.single_fragments && *kind != MainLoop::mma_sync)
    node->fail_key("fragments", "only a warp-level mma_sync loop loads its own fragments; " + name + " does not");
  if (c.l2_prefetch && arch.compute.mainloop(*kind).bulk_copies)
    node->fail_key("l2_prefetch", "main loop " + name + " loads with bulk copies (TMA), which take no prefetch size");
  if (c.serialized && arch.compute.mainloop(*kind).serialized_wait_cycles <= 0)
    node->fail_key("serialized", "main loop " + name + " on " + arch.name +
                                     " has no serialized_wait_cycles (only wgmma main loops measured waiting for each MMA run serialised)");
  return c;
}

ConfigNode order_node_or_row(const WorkloadContext& ctx) {
  return ctx.order ? *ctx.order : ConfigNode(YAML::Load("{kind: row}"), ctx.workload.file(), "order");
}

void require_stream_sync(const WorkloadContext& ctx) {
  if (ctx.sync) {
    ctx.sync->allow_keys({"kind"});
    ctx.sync->choice("kind", {"stream"});
  }
}

}  // namespace tilesim
