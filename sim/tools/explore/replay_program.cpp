#include "sim/tools/explore/replay_program.hpp"

#include "sim/core/tile_rect.hpp"

namespace tilesim::explore {

ReplayProgram replay_program(const Workload& w, std::uint32_t kernel) {
  const Kernel& k = w.kernels.at(kernel);
  ReplayProgram p;
  p.block_first.reserve(k.blocks.size() + 1);
  p.block_first.push_back(0);
  p.cell_first.push_back(0);
  for (const Block& b : k.blocks) {
    for (std::uint32_t s = b.first_step; s < b.first_step + b.num_steps; ++s) {
      const Step& st = k.steps[s];
      for (AccessKind kind : {AccessKind::load, AccessKind::store})
        for (std::uint32_t i = st.first_access; i < st.first_access + st.num_accesses; ++i) {
          const TileAccess& a = k.accesses[i];
          if (a.kind == kind) p.requests.push_back({to_rect(w.tensors[a.tensor], a), kind == AccessKind::store});
        }
    }
    p.block_first.push_back(static_cast<std::uint32_t>(p.requests.size()));
  }
  return p;
}

void add_cell(ReplayProgram& p, const std::vector<Addr>& samples) {
  if (p.cell_first.empty()) p.cell_first.push_back(0);
  p.samples.insert(p.samples.end(), samples.begin(), samples.end());
  p.cell_first.push_back(static_cast<std::uint32_t>(p.samples.size()));
}

}  // namespace tilesim::explore
