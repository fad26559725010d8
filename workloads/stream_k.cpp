// CUTLASS 3 stream-K decomposition, transcribed for clusters of one block and one batch. [P90]
// is include/cutlass/gemm/kernel/tile_scheduler_params.h, [S90] sm90_tile_scheduler_stream_k.hpp,
// both at CUTLASS 7107b05; docs/stream_k.md walks through them.
#include "workloads/stream_k.hpp"

#include <algorithm>

namespace tilesim {

namespace {

constexpr std::uint64_t kMinItersPerSkUnit = 8;  // [P90:467]
constexpr std::uint64_t kMaxSkGroups = 8;        // [P90:470]

// get_num_sk_tiles [P90:1065-1112]: the last full wave and the partial one, when the partial
// wave is short (under half, for the heuristic) and K is long enough to split.
std::uint64_t num_sk_tiles(std::uint64_t tiles, std::uint64_t wave, std::uint64_t kt, StreamKMode mode) {
  if (mode == StreamKMode::data_parallel || mode == StreamKMode::split_k) return 0;
  const std::uint64_t full_waves = tiles / wave, total_waves = (tiles + wave - 1) / wave;
  const std::uint64_t dp_waves = full_waves > 1 ? full_waves - 1 : 0;
  if (full_waves == total_waves || kt <= kMinItersPerSkUnit) return 0;
  if (mode == StreamKMode::heuristic && 2 * (tiles - full_waves * wave) >= wave) return 0;
  return tiles - dp_waves * wave;
}

// calculate_groups [P90:642-718]: the most groups (at most 8, at most the tiles along the raster's
// minor side) that divide the units and the tiles evenly, else the largest that divides the units.
std::uint64_t sk_groups(std::uint64_t max_groups, std::uint64_t sk_tiles, std::uint64_t sk_units, std::uint64_t kt) {
  std::uint64_t g = std::min(max_groups, kMaxSkGroups), fallback = 0;
  const auto too_small = [&](std::uint64_t n) { return (sk_tiles / n * kt) / (sk_units / n) < kMinItersPerSkUnit; };
  const auto valid = [&](std::uint64_t n) { return sk_units % n == 0 && !too_small(n); };
  const auto ideal = [&](std::uint64_t n) { return valid(n) && sk_tiles % n == 0; };
  while (g > 1 && !ideal(g)) {
    if (fallback == 0 && valid(g)) fallback = g;
    --g;
  }
  return g == 1 && fallback > 0 ? fallback : g;
}

// The scheduler's state after set_params [P90:936-1007].
struct Params {
  std::uint64_t kt = 0, groups = 1, sk_tiles = 0, sk_units = 0, sk_units_per_group = 1, clusters_mnl = 0;
  std::uint64_t splits = 1, units_per_problem = 0, big_units = 0, big_groups = 0, k_tiles_per_sk_unit = 0;
};

Params select(const StreamKRequest& r, StreamKMode& mode) {
  Params p;
  p.kt = r.k_tiles;
  const std::uint64_t tiles = std::uint64_t{r.tiles_m} * r.tiles_n, wave = r.programs;
  std::uint64_t splits = 1;
  mode = StreamKMode::data_parallel;
  if (r.mode == StreamKMode::split_k || (r.mode == StreamKMode::heuristic && r.splits > 1)) {
    splits = std::min<std::uint64_t>({r.splits, r.programs, p.kt});  // adjust_split_count [P90:1594-1619]
    mode = splits > 1 ? StreamKMode::split_k : StreamKMode::data_parallel;
  } else {
    const std::uint64_t sk_tiles = num_sk_tiles(tiles, wave, p.kt, r.mode);
    const std::uint64_t sk_units = std::min(wave, p.kt * sk_tiles / kMinItersPerSkUnit);  // [P90:1114-1139]
    if (r.mode != StreamKMode::data_parallel && sk_tiles > 0 && sk_units > 0) {
      const std::uint64_t groups = sk_groups(r.along_m ? r.tiles_m : r.tiles_n, sk_tiles, sk_units, p.kt);
      if (r.mode == StreamKMode::heuristic && sk_tiles < sk_units && sk_units % sk_tiles == 0) {
        splits = sk_units / sk_tiles;  // every tile split evenly: split-K [P90:919-925]
        mode = StreamKMode::split_k;
      } else {
        // set_params_stream_k [P90:1536-1582]
        const std::uint64_t upg = sk_units / groups, k_per_group = p.kt * (sk_tiles / groups);
        p.groups = groups;
        p.sk_units_per_group = upg;
        p.clusters_mnl = sk_units;
        p.units_per_problem = tiles - sk_tiles + sk_units;
        p.big_units = k_per_group % sk_units;
        p.big_groups = sk_tiles % groups;
        p.sk_tiles = sk_tiles;
        p.sk_units = sk_units;
        p.k_tiles_per_sk_unit = k_per_group / upg;
        mode = StreamKMode::stream_k;
        return p;
      }
    }
  }
  // set_params_basic [P90:1500-1533]: split-K over every tile, or data-parallel (one split).
  p.splits = splits;
  p.clusters_mnl = tiles;
  p.units_per_problem = tiles;
  p.big_units = p.kt % splits;
  p.k_tiles_per_sk_unit = p.kt / splits;
  return p;
}

// get_current_work_iter_start... [S90:763-903]: the first k-tile (in its group's iteration
// space) and the count of a stream-K or split-K unit; `group` is set.
void unit_range(const Params& p, std::uint64_t linear, std::uint64_t& start, std::uint64_t& count, std::uint64_t& group) {
  std::uint64_t in_group = linear / p.groups;
  group = linear % p.groups;
  const std::uint64_t tiles_in_group = p.sk_tiles / p.groups + (group < p.big_groups ? 1 : 0);
  const std::uint64_t k_in_group = tiles_in_group * p.kt;
  const std::uint64_t k_per_unit = k_in_group / p.sk_units_per_group;
  const std::uint64_t big_in_group = k_in_group - k_per_unit * p.sk_units_per_group;
  const std::uint64_t split = in_group / p.clusters_mnl;
  in_group %= p.clusters_mnl;
  const bool split_k = p.splits > 1;
  const std::uint64_t lhs = split_k ? split : in_group, rhs = split_k ? p.big_units : big_in_group;
  const std::uint64_t mult = split_k ? p.kt : k_per_unit, per = split_k ? p.k_tiles_per_sk_unit : k_per_unit;
  start = mult * in_group + per * split;
  count = per;
  if (lhs < rhs) {
    start += lhs;
    ++count;
  } else {
    start += rhs;
  }
  if (split_k) return;
  // No piece of a tile shorter than 8 k-tiles: a unit starting or ending just past a tile
  // boundary moves the boundary piece to its neighbour (both sides apply the same rule).
  const std::uint64_t r = start % p.kt;
  if (r < kMinItersPerSkUnit) {
    start -= r;
    count += r;
  } else if (r > p.kt - kMinItersPerSkUnit) {
    const std::uint64_t adjust = p.kt - r;
    start += adjust;
    count = count > adjust ? count - adjust : 0;
  }
  const std::uint64_t e = (start + count) % p.kt;
  if (e < kMinItersPerSkUnit) count = count > e ? count - e : 0;
  else if (e > p.kt - kMinItersPerSkUnit) count += p.kt - e;
}

}  // namespace

const char* stream_k_mode_name(StreamKMode m) {
  switch (m) {
    case StreamKMode::heuristic: return "heuristic";
    case StreamKMode::stream_k: return "stream_k";
    case StreamKMode::split_k: return "split_k";
    case StreamKMode::data_parallel: return "data_parallel";
  }
  return "?";
}

StreamKPlan plan_stream_k(const StreamKRequest& r) {
  StreamKPlan plan;
  const Params p = select(r, plan.mode);
  plan.sk_tiles = static_cast<std::uint32_t>(p.sk_tiles);
  plan.sk_units = static_cast<std::uint32_t>(p.sk_units);
  plan.splits = static_cast<std::uint32_t>(p.splits);
  plan.groups = static_cast<std::uint32_t>(p.groups);
  plan.k_tiles_per_sk_unit = static_cast<std::uint32_t>(p.k_tiles_per_sk_unit);
  plan.big_units = static_cast<std::uint32_t>(p.big_units);
  plan.big_groups = static_cast<std::uint32_t>(p.big_groups);
  plan.programs.resize(r.programs);
  const std::uint64_t total = p.units_per_problem * p.splits;
  for (std::uint64_t prog = 0; prog < r.programs; ++prog) {
    auto& units = plan.programs[prog];
    // Program prog runs units prog, prog + G, ... [S90:326-328].
    for (std::uint64_t linear = prog; linear < total; linear += r.programs) {
      if (linear >= p.sk_units && p.splits == 1) {  // data-parallel [S90:1027-1033]
        units.push_back({static_cast<std::uint32_t>(linear - p.sk_units + p.sk_tiles), 0, r.k_tiles});
        continue;
      }
      std::uint64_t start = 0, remaining = 0, group = 0;
      unit_range(p, linear, start, remaining, group);
      if (remaining == 0) break;  // an empty unit is an invalid work tile: the program ends [S90:108-113]
      // The unit walks its k-tiles backwards, from the tile holding its last one [S90:907-966].
      while (remaining > 0) {
        const std::uint64_t end = start + remaining - 1, t = end / p.kt, first = t * p.kt;
        const std::uint64_t lo = std::max(first, start), hi = std::min(first + p.kt, end + 1);
        units.push_back({static_cast<std::uint32_t>(t * p.groups + group), static_cast<std::uint32_t>(lo - first),
                         static_cast<std::uint32_t>(hi - first)});
        remaining -= hi - lo;
      }
    }
  }
  return plan;
}

}  // namespace tilesim
