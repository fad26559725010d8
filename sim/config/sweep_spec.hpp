#pragma once
// The `sweep:` section of an experiment: axes over dotted keys, combined as a full grid in file
// order (the first axis varies slowest), with
//   key: [v1, v2, ...]                    an axis
//   key: {from: A, to: B, step: S}        an arithmetic range (`to` included when reached)
//   key: {from: A, to: B, times: F}       a geometric range
//   zip: {k1: [...], k2: [...]}           keys that move together (one axis); or a list of such groups
//   exclude: [{key: value, ...}, "expr"]  drop points matching every listed value, or where expr holds
//   only_if: "expr" | ["expr", ...]       keep points where every expression holds
//   baseline: {key: value, ...} | key     the compared axis (axes) and the value the others are
//                                          compared with; a bare key means its first value
// Without `baseline`, points are compared along the last axis against its first value.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace tilesim {
class ConfigNode;
}

namespace tilesim::sweep {

struct SweepAxis {
  std::vector<std::string> keys;               ///< one key, or the keys of a zip group
  std::vector<std::vector<YAML::Node>> values;  ///< values[v][k]: value v of key k
  std::vector<std::string> labels;             ///< per value: its label ("16", "4096,14336")
  std::size_t size() const { return labels.size(); }
};

struct SweepPoint {
  std::vector<std::uint32_t> value;  ///< value index per axis
  std::string label;                 ///< "workload.m=16 order=row"
};

struct Comparison {
  std::vector<std::size_t> axes;       ///< the compared axes (empty: nothing to compare)
  std::vector<std::uint32_t> baseline;  ///< a value index per compared axis
  bool from_file = false;              ///< `baseline:` was given (else the default rule)
};

struct Sweep {
  std::vector<SweepAxis> axes;
  std::vector<SweepPoint> points;  ///< the points kept by the filters, in grid order
  Comparison compare;
  std::size_t grid_size = 1;       ///< points before filtering

  /// The (dotted key, value as YAML flow text) assignments that make point `p`.
  std::vector<std::pair<std::string, std::string>> assignments(const SweepPoint& p) const;
  /// "key=label" of the given axes of a point, space-separated.
  std::string describe(const SweepPoint& p, const std::vector<std::size_t>& axes) const;
};

/// Parses and expands `sweep` (null: no sweep, one point). `base` is the experiment with
/// overrides applied and without `sweep:`; filters are evaluated on it with each point's
/// assignments. Errors name the file and the YAML path.
Sweep expand_sweep(const ConfigNode* sweep, const YAML::Node& base, const std::string& file);

/// True when a point's value `v` is the `wanted` value: the same canonical value, or a scalar
/// naming its label (`row` for {kind: row}, `grouped(group_m=8)`).
bool value_matches(const YAML::Node& v, const YAML::Node& wanted);

}  // namespace tilesim::sweep
