#pragma once
// Comparing the points of a sweep: groups of points that share every axis value but the
// compared one(s), each point's speedup and DRAM ratio over the group's baseline, and the
// tables printed after a sweep (one per group, best first, and a speedup grid of groups by
// compared value, the form of the users' tables in seeds 003 and 004).
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "sim/config/sweep_spec.hpp"

namespace tilesim::sweep {

/// Adds a "comparison" object to every point object ({"group", "compared", "baseline",
/// "speedup", "dram_ratio", "rank"}) and returns the groups
/// [{"label", "baseline": index|null, "points": [indices, fastest first]}].
/// `points[i]` is point i's object with its "result".
nlohmann::json compare_points(const Sweep& sweep, std::vector<nlohmann::json>& points);

/// The comparison tables; nothing when the sweep has a single point.
void print_comparison(std::ostream& out, const Sweep& sweep, const std::vector<nlohmann::json>& points,
                      const nlohmann::json& groups);

/// The per-point summary CSV: index, hash, label, each axis key, group, compared, time, DRAM
/// bytes, hit rate, DRAM/bound, speedup, DRAM ratio, rank.
void write_summary_csv(std::ostream& out, const Sweep& sweep, const std::vector<nlohmann::json>& points);

/// Totals of a point object's result that the comparison uses.
double point_time_ns(const nlohmann::json& point);
std::uint64_t point_dram_bytes(const nlohmann::json& point);

}  // namespace tilesim::sweep
