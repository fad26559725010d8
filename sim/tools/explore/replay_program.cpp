#include "sim/tools/explore/replay_program.hpp"

#include <algorithm>

#include "sim/core/tile_rect.hpp"

namespace tilesim::explore {

namespace {

// Appends block b's requests as it issues them alone: step by step, loads then stores.
void add_requests(const Workload& w, const ProgramView& b, std::vector<ReplayRequest>& out) {
  for (std::uint32_t s = 0; s < b.num_steps; ++s) {
    const Step& st = b.steps[s];
    for (AccessKind kind : {AccessKind::load, AccessKind::store})
      for (std::uint32_t i = st.first_access; i < st.first_access + st.num_accesses; ++i) {
        const TileAccess& a = b.accesses[i];
        if (a.kind == kind) out.push_back({to_rect(w.tensors[a.tensor], a), kind == AccessKind::store});
      }
  }
}

}  // namespace

ReplayProgram replay_program(const Workload& w, std::uint32_t kernel) {
  const Kernel& k = w.kernels.at(kernel);
  ReplayProgram p;
  std::vector<ReplayRequest> requests;
  for_each_program(k, [&](std::uint32_t, const ProgramView& b) {
    requests.clear();
    add_requests(w, b, requests);
    append_block(p, requests);
  });
  return p;
}

std::optional<ChainGrids> chain_grids(const Kernel& k) {
  ChainGrids g;
  std::uint32_t producer_m = 0;
  bool consumers = false;
  for (const Block& b : k.blocks) {
    if (b.tile_z == 0) {
      producer_m = std::max(producer_m, b.tile_m + 1);
      g.grid_n = std::max(g.grid_n, b.tile_n + 1);
    } else {
      consumers = true;
      g.grid_m = std::max(g.grid_m, b.tile_m + 1);
      g.consumer_n = std::max(g.consumer_n, b.tile_n + 1);
    }
  }
  if (!consumers || producer_m != g.grid_m || g.grid_n == 0) return std::nullopt;
  return g;
}

ReplayProgram chain_replay_program(const Workload& w, std::uint32_t kernel, const ChainGrids& g) {
  const Kernel& k = w.kernels.at(kernel);
  // Each tile's blocks, in block-index order.
  std::vector<std::vector<std::uint32_t>> blocks_of(g.tiles());
  for (std::uint32_t i = 0; i < k.blocks.size(); ++i) {
    const Block& b = k.blocks[i];
    const std::uint32_t tile =
        b.tile_z == 0 ? b.tile_m * g.grid_n + b.tile_n : g.producer_tiles() + b.tile_m * g.consumer_n + b.tile_n;
    blocks_of.at(tile).push_back(i);
  }
  ReplayProgram p;
  std::vector<ReplayRequest> requests;
  ProgramBuffer buf;
  for (const std::vector<std::uint32_t>& tile : blocks_of) {
    requests.clear();
    for (std::uint32_t i : tile) add_requests(w, k.program(i, buf), requests);
    append_block(p, requests);
  }
  return p;
}

void add_cell(ReplayProgram& p, const std::vector<Addr>& samples) {
  p.samples.insert(p.samples.end(), samples.begin(), samples.end());
  p.cell_first.push_back(static_cast<std::uint32_t>(p.samples.size()));
}

}  // namespace tilesim::explore
