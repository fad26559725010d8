// `dataflow`: block-index dataflow inside one fused kernel. Blocks take tickets in dispatch
// order and become producer or consumer tiles; a consumer's k-steps spin on the semaphore of
// the producer tile they read. The interleaving decides when a row's consumer tiles are
// dispatched: `after: row` (once the row's last producer tile is), `after: half_row` (once half
// of them are), `rows: r` (after every r complete rows), or `after: start` (all consumers
// first: with more consumers than the GPU holds this deadlocks, which the simulator reports).
// The producer order inside is the experiment's launch order over the producer grid, unless that
// order is a chain order file (`order: {kind: file}`, as order-search --chain writes it), which
// then gives every ticket.
#include <algorithm>

#include "common/error.hpp"
#include "workloads/sync/sync.hpp"

namespace tilesim {

namespace {

// Appends `src`'s blocks, steps and accesses to `dst`, returning the block index offset.
std::uint32_t append_blocks(Kernel& dst, const Kernel& src, std::uint32_t z_offset) {
  const auto block_base = static_cast<std::uint32_t>(dst.blocks.size());
  const auto step_base = static_cast<std::uint32_t>(dst.steps.size());
  const auto access_base = static_cast<std::uint32_t>(dst.accesses.size());
  for (Block b : src.blocks) {
    b.first_step += step_base;
    b.tile_z += z_offset;
    dst.blocks.push_back(b);
  }
  for (Step s : src.steps) {
    s.first_access += access_base;
    dst.steps.push_back(s);
  }
  dst.accesses.insert(dst.accesses.end(), src.accesses.begin(), src.accesses.end());
  return block_base;
}

// The fused kernel's tickets in a chain order file's sequence: each entry's blocks (split-K
// slices in order) at its place.
void chain_dispatch(const ChainOrder& c, const ChainPair& p, const Kernel& prod, const Kernel& cons,
                    std::uint32_t prod_base, std::uint32_t cons_base, Kernel& f) {
  if (c.grid_m != p.tiles_m || c.grid_n != p.producer_tiles_n || c.consumer_n != cons.grid_n)
    throw InputError(c.name + ":" + std::to_string(c.header_line) + ": the order is for a " + std::to_string(c.grid_m) +
                     "x" + std::to_string(c.grid_n) + " producer and " + std::to_string(c.grid_m) + "x" +
                     std::to_string(c.consumer_n) + " consumer tile grid but the workload's are " +
                     std::to_string(p.tiles_m) + "x" + std::to_string(p.producer_tiles_n) + " and " +
                     std::to_string(p.tiles_m) + "x" + std::to_string(cons.grid_n));
  const auto tiles_of = [](const Kernel& k, std::uint32_t base) {
    std::vector<std::vector<std::uint32_t>> at(static_cast<std::size_t>(k.grid_m) * k.grid_n);
    for (std::uint32_t b = 0; b < k.blocks.size(); ++b)
      at[static_cast<std::size_t>(k.blocks[b].tile_m) * k.grid_n + k.blocks[b].tile_n].push_back(base + b);
    return at;
  };
  const auto prod_at = tiles_of(prod, prod_base), cons_at = tiles_of(cons, cons_base);
  for (const ChainOrderEntry& e : c.entries) {
    const auto& blocks = e.consumer ? cons_at[static_cast<std::size_t>(e.m) * cons.grid_n + e.n]
                                    : prod_at[static_cast<std::size_t>(e.m) * prod.grid_n + e.n];
    f.dispatch.insert(f.dispatch.end(), blocks.begin(), blocks.end());
  }
}

void dataflow(const ConfigNode& sync, ChainPair& p, Workload& out) {
  sync.allow_keys({"kind", "after", "rows", "blocks_per_sm"});
  if (sync.has("after") && sync.has("rows")) sync.fail_key("rows", "give either `after` or `rows`, not both");
  if (p.chain_order && (sync.has("after") || sync.has("rows")))
    sync.fail_key(sync.has("after") ? "after" : "rows",
                  "the chain order file '" + p.chain_order->name + "' gives the interleaving; drop this key");
  const std::string after = sync.choice_or("after", "row", {"row", "half_row", "start"});
  const std::uint32_t rows = sync.has("rows") ? static_cast<std::uint32_t>(sync.integer("rows", 1, 1 << 20)) : 0;

  Kernel prod = std::move(p.producers.back());
  p.producers.pop_back();
  Kernel& cons = p.consumer;
  sync_detail::tile_waits(sync, p, out, prod, cons);

  Kernel f;
  f.name = "dataflow";
  f.stream = p.producer_stream;
  f.compute_dtype = prod.compute_dtype;
  f.mainloop = prod.mainloop;  // one kernel, one main-loop kind: the producer's
  f.mainloop_efficiency = prod.mainloop_efficiency;
  f.single_fragments = prod.single_fragments;
  f.l2_prefetch_bytes = prod.l2_prefetch_bytes;
  f.serialized_mma_cols = prod.serialized_mma_cols;
  f.stages = std::max(prod.stages, cons.stages);
  // One fused kernel: every block reserves what the larger of the two programs needs.
  f.resources.threads = std::max(prod.resources.threads, cons.resources.threads);
  f.resources.regs_per_thread = std::max(prod.resources.regs_per_thread, cons.resources.regs_per_thread);
  // One pipeline depth for both programs: reserve that many stages of the larger per-stage
  // footprint (a block does not know in advance which program its ticket gives it).
  const std::uint64_t per_stage = std::max(prod.resources.smem_bytes / prod.stages, cons.resources.smem_bytes / cons.stages);
  f.resources.smem_bytes = per_stage * f.stages;
  f.blocks_per_sm = static_cast<std::uint32_t>(sync.integer_or("blocks_per_sm", 0, 0, 1024));
  f.total_flops = prod.total_flops + cons.total_flops;
  const std::uint32_t prod_base = append_blocks(f, prod, 0);
  const std::uint32_t cons_base = append_blocks(f, cons, prod.grid_z);
  f.grid_m = 1;
  f.grid_n = static_cast<std::uint32_t>(f.blocks.size());
  f.grid_z = 1;

  if (p.chain_order) {
    chain_dispatch(*p.chain_order, p, prod, cons, prod_base, cons_base, f);
    sync_detail::append_producers(p, out, p.producer_stream);
    out.kernels.push_back(std::move(f));
    return;
  }
  // Consumer blocks of each row, in block-index order.
  std::vector<std::vector<std::uint32_t>> row_consumers(p.tiles_m);
  for (std::uint32_t b = 0; b < cons.blocks.size(); ++b) row_consumers[cons.blocks[b].tile_m].push_back(cons_base + b);
  std::vector<std::uint32_t> per_row(p.tiles_m, 0);
  const std::uint32_t half = (p.producer_tiles_n + 1) / 2;
  std::vector<bool> emitted(p.tiles_m, false);
  const auto emit_row = [&](std::uint32_t m) {
    if (emitted[m]) return;
    emitted[m] = true;
    f.dispatch.insert(f.dispatch.end(), row_consumers[m].begin(), row_consumers[m].end());
  };
  if (after == "start" && !rows)
    for (std::uint32_t m = 0; m < p.tiles_m; ++m) emit_row(m);
  for (const std::uint32_t pb : prod.dispatch) {
    if (pb == kNoBlock) continue;  // a fused kernel hands out tickets only to real tiles
    f.dispatch.push_back(prod_base + pb);
    const std::uint32_t m = prod.blocks[pb].tile_m;
    ++per_row[m];
    if (rows) {
      // Rows are grouped [g*r, g*r + r); a group's consumers follow its last producer tile.
      const std::uint32_t g0 = m / rows * rows, g1 = std::min(p.tiles_m, g0 + rows);
      bool complete = true;
      for (std::uint32_t r = g0; r < g1; ++r) complete = complete && per_row[r] == p.producer_tiles_n;
      if (complete)
        for (std::uint32_t r = g0; r < g1; ++r) emit_row(r);
    } else if (after == "row" && per_row[m] == p.producer_tiles_n) {
      emit_row(m);
    } else if (after == "half_row" && per_row[m] == half) {
      emit_row(m);
    }
  }
  for (std::uint32_t m = 0; m < p.tiles_m; ++m) emit_row(m);  // rows never completed (none, normally)

  sync_detail::append_producers(p, out, p.producer_stream);  // earlier producers (a separate gate) run first
  out.kernels.push_back(std::move(f));
}

const bool registered = register_sync("dataflow",
    "one fused kernel whose blocks take producer or consumer tiles by ticket", dataflow);

}  // namespace

}  // namespace tilesim
