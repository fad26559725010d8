#pragma once
// The small expression language of a sweep's `only_if` and `exclude` filters, evaluated
// against one resolved point:
//   workload.m <= workload.n and not (arch == 'a100' or order.kind == "hilbert")
// Operands: numbers, quoted strings, true/false, and dotted keys of the point's YAML (a
// mapping value reads as its label, e.g. `order == 'grouped(group_m=8)'`). Operators, loosest
// first: or, and, not, comparisons (== != < <= > >=), + -, * / %, unary -. A key that the
// point does not set is an error, so a typo cannot silently filter everything away.
#include <memory>
#include <string>
#include <variant>

#include <yaml-cpp/yaml.h>

namespace tilesim::sweep {

using Value = std::variant<double, std::string, bool>;

class Expression {
 public:
  /// Parses `text`; errors are InputError naming `where` (file and YAML path) and the column.
  Expression(const std::string& text, const std::string& where);
  ~Expression();
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;

  /// True when the expression holds for `point`. `point_label` names the point in errors.
  bool holds(const YAML::Node& point, const std::string& point_label) const;
  const std::string& text() const { return text_; }

  struct Node;

 private:
  std::string text_, where_;
  std::unique_ptr<Node> root_;
};

/// The value of a dotted key in a point: numbers as numbers, true/false as booleans, other
/// scalars as strings, mappings and lists as their sweep labels. False when not set.
bool lookup_key(const YAML::Node& point, const std::string& key, Value* out);

/// How sweep labels show a value: scalars as they are, mappings as kind(k=v,...).
std::string value_label(const YAML::Node& v);

}  // namespace tilesim::sweep
