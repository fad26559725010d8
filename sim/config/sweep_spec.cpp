#include "sim/config/sweep_spec.hpp"

#include <cmath>
#include <optional>

#include "common/config_node.hpp"
#include "common/error.hpp"
#include "sim/config/canonical.hpp"
#include "sim/config/expression.hpp"

namespace tilesim::sweep {

namespace {

constexpr std::size_t kMaxPoints = 1000000;
constexpr std::size_t kMaxRange = 100000;

// A YAML scalar node of a number, integral when it is one (so labels read 1024, not 1024.0).
YAML::Node number_node(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9e15) return YAML::Node(static_cast<long long>(v));
  return YAML::Node(v);
}

// The values of one key: a non-empty list, or a {from, to, step|times} range.
std::vector<YAML::Node> axis_values(const ConfigNode& n) {
  std::vector<YAML::Node> out;
  if (n.is_sequence()) {
    if (n.size() == 0) n.fail("expected a non-empty list of values or a range {from, to, step|times}");
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(n.raw()[i]);
    return out;
  }
  if (!n.is_map()) n.fail("expected a list of values or a range {from, to, step|times}");
  n.allow_keys({"from", "to", "step", "times"});
  const double from = n.number("from", -1e18, 1e18), to = n.number("to", -1e18, 1e18);
  const bool step = n.has("step"), times = n.has("times");
  if (step == times) n.fail("a range needs exactly one of step (arithmetic) or times (geometric)");
  if (step) {
    const double s = n.number("step", -1e18, 1e18);
    if (s == 0 || (to - from) * s < 0) n.fail_key("step", "must be non-zero and lead from 'from' towards 'to'");
    if (std::fabs((to - from) / s) >= kMaxRange) n.fail("a range of more than 100000 values");
    // Counting steps, not accumulating, keeps 0.1-steps exact to the last value.
    const auto count = static_cast<std::size_t>(std::floor((to - from) / s + 1e-9)) + 1;
    for (std::size_t i = 0; i < count; ++i) out.push_back(number_node(from + static_cast<double>(i) * s));
  } else {
    const double f = n.number("times", 1e-18, 1e18);
    if (f == 1 || from == 0 || (to / from) <= 0 || (f > 1) != (std::fabs(to) >= std::fabs(from)))
      n.fail_key("times", "must be a factor other than 1 that leads from 'from' (non-zero) towards 'to'");
    double v = from;
    for (std::size_t i = 0; f > 1 ? std::fabs(v) <= std::fabs(to) * (1 + 1e-12) : std::fabs(v) >= std::fabs(to) * (1 - 1e-12);
         ++i, v = from * std::pow(f, static_cast<double>(i))) {
      if (out.size() >= kMaxRange) n.fail("a range of more than 100000 values");
      out.push_back(number_node(v));
    }
  }
  return out;
}

SweepAxis zip_axis(const ConfigNode& group) {
  if (!group.is_map() || group.size() == 0) group.fail("expected a mapping of keys to lists that move together");
  SweepAxis axis;
  std::vector<std::vector<YAML::Node>> per_key;
  for (const std::string& key : group.keys()) {
    per_key.push_back(axis_values(group.at(key)));
    if (per_key.size() > 1 && per_key.back().size() != per_key.front().size())
      group.fail("zip: '" + axis.keys.front() + "' has " + std::to_string(per_key.front().size()) + " values but '" +
                 key + "' has " + std::to_string(per_key.back().size()) + "; keys that move together need as many");
    axis.keys.push_back(key);
  }
  for (std::size_t v = 0; v < per_key.front().size(); ++v) {
    std::vector<YAML::Node> values;
    std::string label;
    for (std::size_t k = 0; k < per_key.size(); ++k) {
      values.push_back(per_key[k][v]);
      label += (k ? "," : "") + value_label(per_key[k][v]);
    }
    axis.values.push_back(values);
    axis.labels.push_back(label);
  }
  return axis;
}

// The node at a dotted key of a point, or an undefined one.
YAML::Node node_at(const YAML::Node& root, const std::string& key) {
  YAML::Node n(root);
  for (const std::string& part : split_dotted_key(key)) {
    if (!n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node child = n[part];
    if (!child.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
    n.reset(child);
  }
  return n;
}

// One `exclude` entry: all of a mapping's key values, or an expression.
struct Filter {
  std::vector<std::pair<std::string, YAML::Node>> values;
  std::optional<Expression> expr;
  bool matches(const YAML::Node& point, const std::string& label) const {
    if (expr) return expr->holds(point, label);
    for (const auto& [key, wanted] : values) {
      const YAML::Node v = node_at(point, key);
      if (!v.IsDefined() || !value_matches(v, wanted)) return false;
    }
    return true;
  }
};

std::vector<Filter> parse_filters(const ConfigNode& n, bool expressions_only) {
  std::vector<Filter> out;
  const auto one = [&](const ConfigNode& e) {
    Filter f;
    if (e.is_scalar()) {
      f.expr.emplace(e.as_string(), e.file() + ": " + e.path());
    } else if (e.is_map() && !expressions_only) {
      for (const std::string& key : e.keys()) f.values.emplace_back(key, e.raw()[key]);
    } else {
      e.fail(expressions_only ? "expected an expression string, e.g. \"workload.m <= workload.n\""
                              : "expected a mapping of key: value to match, or an expression string");
    }
    out.push_back(std::move(f));
  };
  if (n.is_sequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) one(n.element(i));
  } else {
    one(n);
  }
  return out;
}

std::size_t axis_of_key(const std::vector<SweepAxis>& axes, const std::string& key, std::size_t* key_index) {
  for (std::size_t a = 0; a < axes.size(); ++a)
    for (std::size_t k = 0; k < axes[a].keys.size(); ++k)
      if (axes[a].keys[k] == key) {
        *key_index = k;
        return a;
      }
  return axes.size();
}

Comparison parse_baseline(const ConfigNode& n, const std::vector<SweepAxis>& axes) {
  std::string names;
  for (const auto& a : axes)
    for (const auto& k : a.keys) names += (names.empty() ? "" : ", ") + k;
  Comparison c;
  c.from_file = true;
  std::size_t k = 0;
  if (n.is_scalar()) {  // a bare key: that axis, its first value
    const std::size_t a = axis_of_key(axes, n.as_string(), &k);
    if (a == axes.size()) n.fail("'" + n.as_string() + "' is not a sweep axis (axes: " + names + ")");
    c.axes.push_back(a);
    c.baseline.push_back(0);
    return c;
  }
  if (!n.is_map() || n.size() == 0) n.fail("expected an axis key, or a mapping of axis keys to their baseline values");
  for (const std::string& key : n.keys()) {
    const std::size_t a = axis_of_key(axes, key, &k);
    if (a == axes.size()) n.fail_key(key, "is not a sweep axis (axes: " + names + ")");
    std::optional<std::uint32_t> found;
    for (std::uint32_t v = 0; v < axes[a].size() && !found; ++v)
      if (value_matches(axes[a].values[v][k], n.raw()[key])) found = v;
    if (!found) {
      std::string values;
      for (std::size_t v = 0; v < axes[a].size(); ++v) values += (v ? ", " : "") + value_label(axes[a].values[v][k]);
      n.fail_key(key, "matches none of the axis's values (" + values + ")");
    }
    bool seen = false;  // two keys of one zip group must name the same value
    for (std::size_t i = 0; i < c.axes.size(); ++i)
      if (c.axes[i] == a) {
        seen = true;
        if (c.baseline[i] != *found) n.fail_key(key, "names another value of its zip group than the key before it");
      }
    if (!seen) {
      c.axes.push_back(a);
      c.baseline.push_back(*found);
    }
  }
  return c;
}

}  // namespace

bool value_matches(const YAML::Node& v, const YAML::Node& wanted) {
  if (canonical_text(v) == canonical_text(wanted)) return true;
  return wanted.IsScalar() && value_label(v) == wanted.Scalar();
}

std::vector<std::pair<std::string, std::string>> Sweep::assignments(const SweepPoint& p) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t a = 0; a < axes.size(); ++a)
    for (std::size_t k = 0; k < axes[a].keys.size(); ++k) {
      YAML::Emitter em;
      em << YAML::Flow << axes[a].values[p.value[a]][k];
      out.emplace_back(axes[a].keys[k], em.c_str());
    }
  return out;
}

std::string Sweep::describe(const SweepPoint& p, const std::vector<std::size_t>& which) const {
  std::string s;
  for (const std::size_t a : which)
    for (std::size_t k = 0; k < axes[a].keys.size(); ++k)
      s += (s.empty() ? "" : " ") + axes[a].keys[k] + "=" + value_label(axes[a].values[p.value[a]][k]);
  return s;
}

Sweep expand_sweep(const ConfigNode* sweep_node, const YAML::Node& base, const std::string& file) {
  Sweep s;
  std::vector<Filter> exclude, only_if;
  std::optional<ConfigNode> baseline;
  if (sweep_node) {
    sweep_node->expect_map();
    for (const std::string& key : sweep_node->keys()) {
      const ConfigNode n = sweep_node->at(key);
      if (key == "zip") {
        if (n.is_sequence()) {
          if (n.size() == 0) n.fail("expected a zip group or a non-empty list of them");
          for (std::size_t i = 0; i < n.size(); ++i) s.axes.push_back(zip_axis(n.element(i)));
        } else {
          s.axes.push_back(zip_axis(n));
        }
      } else if (key == "exclude") {
        exclude = parse_filters(n, false);
      } else if (key == "only_if") {
        only_if = parse_filters(n, true);
      } else if (key == "baseline") {
        baseline = n;
      } else {
        SweepAxis axis;
        axis.keys = {key};
        for (const YAML::Node& v : axis_values(n)) {
          axis.values.push_back({v});
          axis.labels.push_back(value_label(v));
        }
        s.axes.push_back(std::move(axis));
      }
    }
    std::size_t k = 0;
    for (std::size_t a = 0; a < s.axes.size(); ++a)
      for (const std::string& key : s.axes[a].keys)
        if (axis_of_key(s.axes, key, &k) != a)
          sweep_node->fail("the key '" + key + "' is swept twice (as an axis and in a zip group, or in two groups)");
  }
  for (const auto& a : s.axes) {
    s.grid_size *= a.size();
    if (s.grid_size > kMaxPoints)
      throw InputError(file + ": sweep: more than " + std::to_string(kMaxPoints) + " points in the grid");
  }
  if (baseline) {
    s.compare = parse_baseline(*baseline, s.axes);
  } else if (!s.axes.empty()) {
    s.compare.axes = {s.axes.size() - 1};
    s.compare.baseline = {0};
  }

  const bool filtered = !exclude.empty() || !only_if.empty();
  for (std::size_t i = 0; i < s.grid_size; ++i) {
    SweepPoint p;
    p.value.resize(s.axes.size());
    std::size_t rest = i;
    for (std::size_t a = s.axes.size(); a-- > 0;) {
      p.value[a] = static_cast<std::uint32_t>(rest % s.axes[a].size());
      rest /= s.axes[a].size();
    }
    std::vector<std::size_t> all(s.axes.size());
    for (std::size_t a = 0; a < all.size(); ++a) all[a] = a;
    p.label = s.describe(p, all);
    if (filtered) {
      YAML::Node point = YAML::Clone(base);
      for (const auto& [key, value] : s.assignments(p)) apply_override(point, key + "=" + value);
      bool keep = true;
      for (const Filter& f : exclude) keep = keep && !f.matches(point, p.label);
      for (const Filter& f : only_if) keep = keep && f.matches(point, p.label);
      if (!keep) continue;
    }
    s.points.push_back(std::move(p));
  }
  if (s.points.empty()) throw InputError(file + ": sweep: the filters (exclude, only_if) leave no point to run");
  return s;
}

}  // namespace tilesim::sweep
