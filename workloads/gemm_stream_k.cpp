// The stream-K GEMM kernel: CUTLASS 3's persistent programs each run their pieces (k-tile ranges
// of output tiles, workloads/stream_k.cpp) back to back. A piece that covers a whole tile ends in
// the epilogue; the pieces of a split tile meet in a workspace, as the scheduler's fixup does
// (sm90_tile_scheduler_stream_k.hpp lines 425-552 at 7107b05):
//   - the piece with k-tile 0 stores its fp32 partial tile there and posts the tile's semaphore;
//   - a middle piece waits for the pieces before it in k order (deterministic) or for the first
//     (nondeterministic), adds its partial in the L2 (red.add: a store of the tile from the SM)
//     and posts;
//   - the final piece waits for all before it, loads the partial and runs the epilogue.
// The semaphore counts pieces here where CUTLASS's lock counts k-tiles: in k order the two wait
// for the same moment. Pieces on padded tiles (outside the problem) compute without loads and
// store nothing but their partials.
#include <algorithm>
#include <map>

#include "workloads/gemm.hpp"

namespace tilesim {

namespace {

struct Piece {
  std::uint32_t program = 0;
  StreamKUnit unit;
};

// Per split tile (k range not the whole of K): its workspace slot and how many pieces precede
// each of its pieces in k order.
struct SplitTiles {
  std::map<std::uint32_t, std::uint32_t> slot;                                  // tile -> slot
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> before;     // (tile, k_begin) -> pieces
};

SplitTiles split_tiles(const StreamKPlan& plan, std::uint32_t kt) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> starts;
  for (const auto& units : plan.programs)
    for (const StreamKUnit& u : units)
      if (u.k_end - u.k_begin != kt) starts[u.tile].push_back(u.k_begin);
  SplitTiles s;
  for (auto& [tile, ks] : starts) {
    const auto slot = static_cast<std::uint32_t>(s.slot.size());
    s.slot[tile] = slot;
    std::sort(ks.begin(), ks.end());
    for (std::uint32_t i = 0; i < ks.size(); ++i) s.before[{tile, ks[i]}] = i;
  }
  return s;
}

}  // namespace

void add_stream_k_kernel(const GemmSpec& g, const GemmOperands& ops, const std::vector<TileCoord>& seq,
                         const StreamKPlan& plan, Workload& w, DeviceAllocator& alloc, const std::string& name) {
  const std::uint32_t kt = g.tiles_k();
  const SplitTiles split = split_tiles(plan, kt);
  // The workspace: one fp32 accumulator tile per split tile.
  std::uint32_t workspace = kNoTensor;
  if (!split.slot.empty()) {
    Tensor t;
    t.name = name + ".workspace";
    t.rows = static_cast<std::uint32_t>(split.slot.size()) * g.bm;
    t.cols = g.bn;
    t.elem_bits = 32;
    t.ld = t.cols;
    t.batch_stride = t.bytes_per_batch();
    t.base = alloc.allocate(t.footprint());
    w.tensors.push_back(t);
    workspace = static_cast<std::uint32_t>(w.tensors.size() - 1);
  }
  const std::uint32_t sem_base = w.num_semaphores;
  w.num_semaphores += static_cast<std::uint32_t>(split.slot.size());

  Kernel K = gemm_kernel_shell(g, ops, name);
  K.grid_m = 1;
  K.grid_n = static_cast<std::uint32_t>(plan.programs.size());
  K.grid_z = 1;
  const std::uint64_t operand_sets = ops.b2 == kNoTensor ? 1 : 2;
  const std::uint64_t step_flops = 2ull * g.bm * g.bn * g.bk * operand_sets;
  for (std::uint32_t p = 0; p < plan.programs.size(); ++p) {
    Block b;
    b.first_step = static_cast<std::uint32_t>(K.steps.size());
    b.tile_n = p;
    for (const StreamKUnit& u : plan.programs[p]) {
      const TileCoord t = seq.at(u.tile);
      const bool real = is_tile(t);
      if (real) {
        append_k_steps(K, g, ops, 0, t.m, t.n, u.k_begin, u.k_end);
      } else {
        for (std::uint32_t kk = u.k_begin; kk < u.k_end; ++kk) {
          Step s;
          s.first_access = static_cast<std::uint32_t>(K.accesses.size());
          s.flops = step_flops;
          K.steps.push_back(s);
        }
      }
      const bool whole = u.k_end - u.k_begin == kt, final = u.k_end == kt;
      Step e;
      e.first_access = static_cast<std::uint32_t>(K.accesses.size());
      if (!whole) {
        const std::uint32_t slot = split.slot.at(u.tile), before = split.before.at({u.tile, u.k_begin});
        const TileAccess partial{workspace, 0, slot * g.bm, 0, g.bm, g.bn, AccessKind::store};
        if (before > 0) {
          e.wait_sem = sem_base + slot;
          e.wait_value = final || g.stream_k.deterministic ? before : 1;
        }
        if (final) {
          TileAccess load = partial;
          load.kind = AccessKind::load;
          K.accesses.push_back(load);
        } else {
          K.accesses.push_back(partial);
          e.post_sem = sem_base + slot;
        }
      }
      if (final && real) {
        const std::uint32_t m0 = t.m * g.bm, n0 = t.n * g.bn;
        K.accesses.push_back({ops.c, 0, m0, n0, std::min(g.bm, g.m - m0), std::min(g.bn, g.n - n0), AccessKind::store});
      }
      if (final) e.epilogue_elems = g.bm * g.bn;
      e.num_accesses = static_cast<std::uint32_t>(K.accesses.size()) - e.first_access;
      K.steps.push_back(e);
    }
    b.num_steps = static_cast<std::uint32_t>(K.steps.size()) - b.first_step;
    K.blocks.push_back(b);
  }
  K.dispatch.resize(K.blocks.size());
  for (std::uint32_t p = 0; p < K.dispatch.size(); ++p) K.dispatch[p] = p;
  w.kernels.push_back(std::move(K));
}

}  // namespace tilesim
