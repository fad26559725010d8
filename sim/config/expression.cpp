#include "sim/config/expression.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "common/config_node.hpp"
#include "common/error.hpp"

namespace tilesim::sweep {

std::string value_label(const YAML::Node& v) {
  if (v.IsScalar()) return v.Scalar();
  if (v.IsSequence()) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + value_label(v[i]);
    return s + "]";
  }
  if (v.IsMap()) {
    std::string kind, params;
    for (const auto& kv : v) {
      const std::string k = kv.first.as<std::string>();
      if (k == "kind") kind = value_label(kv.second);
      else params += (params.empty() ? "" : ",") + k + "=" + value_label(kv.second);
    }
    return params.empty() ? kind : kind + "(" + params + ")";
  }
  return "~";
}

bool lookup_key(const YAML::Node& point, const std::string& key, Value* out) {
  YAML::Node n(point);
  for (const std::string& part : split_dotted_key(key)) {
    if (!n.IsMap()) return false;
    const YAML::Node child = n[part];
    if (!child.IsDefined() || child.IsNull()) return false;
    n.reset(child);  // rebinding, not assignment: `n = child` would overwrite the tree
  }
  if (!n.IsScalar()) {
    *out = value_label(n);
    return true;
  }
  const std::string& s = n.Scalar();
  if (n.Tag() != "!") {  // a quoted scalar stays a string
    if (s == "true" || s == "false") {
      *out = s == "true";
      return true;
    }
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d)) {
      *out = d;
      return true;
    }
  }
  *out = s;
  return true;
}

// ---- syntax tree ----

struct Expression::Node {
  enum class Op { number, string, boolean, key, neg, not_, and_, or_, add, sub, mul, div, mod, eq, ne, lt, le, gt, ge };
  Op op;
  double number = 0;
  std::string text;  // string literal or key
  std::unique_ptr<Node> a, b;
};

namespace {

using Node = Expression::Node;
using Op = Node::Op;

std::unique_ptr<Node> leaf(Op op) {
  auto n = std::make_unique<Node>();
  n->op = op;
  return n;
}

std::unique_ptr<Node> binary(Op op, std::unique_ptr<Node> a, std::unique_ptr<Node> b) {
  auto n = leaf(op);
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

// Recursive descent over the text; every error names the column.
class Parser {
 public:
  Parser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  std::unique_ptr<Node> parse() {
    // Bounded, so that no input can exhaust the stack of this parser, the evaluator or the
    // tree's destructor (all recursive): a chain of k operators is k nodes deep.
    if (s_.size() > kMaxLength)
      throw InputError(where_ + ": expression of " + std::to_string(s_.size()) + " characters, more than " +
                       std::to_string(kMaxLength) + " allowed");
    auto n = parse_or();
    skip();
    if (pos_ != s_.size()) fail("unexpected '" + s_.substr(pos_, 1) + "'");
    return n;
  }

 private:
  static constexpr std::size_t kMaxLength = 4096;
  static constexpr int kMaxNesting = 64;
  // One level of nesting (parentheses, `not`, unary minus) for as long as it lives.
  struct Nest {
    explicit Nest(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxNesting) p_.fail("nested more than " + std::to_string(kMaxNesting) + " deep");
    }
    ~Nest() { --p_.depth_; }
    Parser& p_;
  };
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(where_ + ": in expression \"" + s_ + "\" at column " + std::to_string(pos_ + 1) + ": " + what);
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool word(const char* w) {  // a keyword, not the prefix of a key
    skip();
    const std::size_t n = std::char_traits<char>::length(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    const std::size_t e = pos_ + n;
    if (e < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_' || s_[e] == '.')) return false;
    pos_ = e;
    return true;
  }
  bool sym(const char* t) {
    skip();
    const std::size_t n = std::char_traits<char>::length(t);
    if (s_.compare(pos_, n, t) != 0) return false;
    pos_ += n;
    return true;
  }

  std::unique_ptr<Node> parse_or() {
    auto n = parse_and();
    while (word("or")) n = binary(Op::or_, std::move(n), parse_and());
    return n;
  }
  std::unique_ptr<Node> parse_and() {
    auto n = parse_not();
    while (word("and")) n = binary(Op::and_, std::move(n), parse_not());
    return n;
  }
  std::unique_ptr<Node> parse_not() {
    if (word("not")) {
      const Nest nest(*this);
      auto n = leaf(Op::not_);
      n->a = parse_not();
      return n;
    }
    return parse_cmp();
  }
  std::unique_ptr<Node> parse_cmp() {
    auto n = parse_sum();
    static const std::pair<const char*, Op> ops[] = {{"==", Op::eq}, {"!=", Op::ne}, {"<=", Op::le},
                                                     {">=", Op::ge}, {"<", Op::lt},  {">", Op::gt}};
    for (const auto& [t, op] : ops)
      if (sym(t)) return binary(op, std::move(n), parse_sum());
    return n;
  }
  std::unique_ptr<Node> parse_sum() {
    auto n = parse_prod();
    for (;;) {
      if (sym("+")) n = binary(Op::add, std::move(n), parse_prod());
      else if (sym("-")) n = binary(Op::sub, std::move(n), parse_prod());
      else return n;
    }
  }
  std::unique_ptr<Node> parse_prod() {
    auto n = parse_unary();
    for (;;) {
      if (sym("*")) n = binary(Op::mul, std::move(n), parse_unary());
      else if (sym("/")) n = binary(Op::div, std::move(n), parse_unary());
      else if (sym("%")) n = binary(Op::mod, std::move(n), parse_unary());
      else return n;
    }
  }
  std::unique_ptr<Node> parse_unary() {
    if (sym("-")) {
      const Nest nest(*this);
      auto n = leaf(Op::neg);
      n->a = parse_unary();
      return n;
    }
    return parse_atom();
  }
  std::unique_ptr<Node> parse_atom() {
    skip();
    if (pos_ >= s_.size()) fail("expected a value, found the end");
    const char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      const Nest nest(*this);
      auto n = parse_or();
      if (!sym(")")) fail("expected ')'");
      return n;
    }
    if (c == '\'' || c == '"') {
      const std::size_t close = s_.find(c, pos_ + 1);
      if (close == std::string::npos) fail("unterminated string");
      auto n = leaf(Op::string);
      n->text = s_.substr(pos_ + 1, close - pos_ - 1);
      pos_ = close + 1;
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      char* end = nullptr;
      auto n = leaf(Op::number);
      n->number = std::strtod(s_.c_str() + pos_, &end);
      pos_ = static_cast<std::size_t>(end - s_.c_str());
      return n;
    }
    for (const bool b : {true, false})
      if (word(b ? "true" : "false")) {
        auto n = leaf(Op::boolean);
        n->number = b ? 1 : 0;
        return n;
      }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.'))
        ++pos_;
      auto n = leaf(Op::key);
      n->text = s_.substr(start, pos_ - start);
      return n;
    }
    fail("expected a number, a 'string', a key or '('");
  }

  const std::string& s_;
  const std::string& where_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

const char* type_name(const Value& v) {
  return std::holds_alternative<double>(v) ? "a number" : std::holds_alternative<bool>(v) ? "a boolean" : "a string";
}

struct Evaluator {
  const YAML::Node& point;
  const std::string& where;
  const std::string& text;
  const std::string& label;

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(where + ": in expression \"" + text + "\" for sweep point " + label + ": " + what);
  }
  double number(const Node& n) const {
    const Value v = eval(n);
    if (!std::holds_alternative<double>(v)) fail(std::string("expected a number, got ") + type_name(v));
    return std::get<double>(v);
  }
  bool truth(const Node& n) const {
    const Value v = eval(n);
    if (!std::holds_alternative<bool>(v)) fail(std::string("expected a condition, got ") + type_name(v));
    return std::get<bool>(v);
  }
  Value eval(const Node& n) const {
    switch (n.op) {
      case Op::number: return n.number;
      case Op::string: return n.text;
      case Op::boolean: return n.number != 0;
      case Op::key: {
        Value v;
        if (!lookup_key(point, n.text, &v)) fail("key '" + n.text + "' is not set");
        return v;
      }
      case Op::neg: return -number(*n.a);
      case Op::not_: return !truth(*n.a);
      case Op::and_: return truth(*n.a) && truth(*n.b);
      case Op::or_: return truth(*n.a) || truth(*n.b);
      case Op::add: return number(*n.a) + number(*n.b);
      case Op::sub: return number(*n.a) - number(*n.b);
      case Op::mul: return number(*n.a) * number(*n.b);
      case Op::div: {
        const double d = number(*n.b);
        if (d == 0) fail("division by zero");
        return number(*n.a) / d;
      }
      case Op::mod: {
        const double d = number(*n.b);
        if (d == 0) fail("division by zero");
        return std::fmod(number(*n.a), d);
      }
      default: break;
    }
    const Value a = eval(*n.a), b = eval(*n.b);
    if (a.index() != b.index())
      fail(std::string("cannot compare ") + type_name(a) + " with " + type_name(b));
    switch (n.op) {
      case Op::eq: return a == b;
      case Op::ne: return a != b;
      case Op::lt: return a < b;
      case Op::le: return a <= b;
      case Op::gt: return a > b;
      default: return a >= b;
    }
  }
};

}  // namespace

Expression::Expression(const std::string& text, const std::string& where)
    : text_(text), where_(where), root_(Parser(text_, where_).parse()) {}
Expression::~Expression() = default;
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;

bool Expression::holds(const YAML::Node& point, const std::string& point_label) const {
  return Evaluator{point, where_, text_, point_label}.truth(*root_);
}

}  // namespace tilesim::sweep
