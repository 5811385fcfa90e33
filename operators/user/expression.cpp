#include "operators/user/expression.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "base/errors.hpp"

namespace varex::operators::user {

namespace {

using Node = Expression::Node;

// Deeper nesting than any declaration needs; the parser recurses, so a bound keeps a hostile text from
// exhausting the stack.
constexpr int kMostDepth = 200;

const std::vector<std::string>& functions() {
  static const std::vector<std::string> f{"min", "max", "ceil_div", "round_up", "log2", "abs", "next_pow2"};
  return f;
}

// A recursive-descent parser over C's precedence levels, from the ternary down to the primaries.
class Parser {
 public:
  Parser(std::string_view text, const std::vector<std::string>& names, std::vector<Node>& nodes)
      : text_(text), names_(names), nodes_(nodes) {}

  int parse() {
    const int root = ternary(0);
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError("expression '" + std::string(text_) + "': " + what + " at column " +
                     std::to_string(pos_ + 1));
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes `token` if it is next (a word only where no identifier character follows it).
  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    const bool word = std::isalpha(static_cast<unsigned char>(token[0]));
    const std::size_t end = pos_ + token.size();
    if (word && end < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
      return false;
    pos_ = end;
    return true;
  }

  void expect(std::string_view token) {
    if (!accept(token)) fail("expected '" + std::string(token) + "'");
  }

  int add(Node node) {
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  }

  int binary(std::string op, int left, int right) {
    return add({Node::Kind::Binary, 0, std::move(op), 0, {left, right}});
  }

  void descend(int depth) {
    if (depth > kMostDepth) fail("nested too deeply");
  }

  int ternary(int depth) {
    descend(depth);
    const int condition = logical_or(depth + 1);
    if (!accept("?")) return condition;
    const int then = ternary(depth + 1);
    expect(":");
    const int otherwise = ternary(depth + 1);
    return add({Node::Kind::Ternary, 0, "?", 0, {condition, then, otherwise}});
  }

  int logical_or(int depth) {
    int left = logical_and(depth);
    while (accept("||") || accept("or")) left = binary("||", left, logical_and(depth));
    return left;
  }

  int logical_and(int depth) {
    int left = comparison(depth);
    while (accept("&&") || accept("and")) left = binary("&&", left, comparison(depth));
    return left;
  }

  int comparison(int depth) {
    int left = additive(depth);
    while (true) {
      std::string op;
      for (const char* candidate : {"==", "!=", "<=", ">=", "<", ">"}) {
        if (accept(candidate)) {
          op = candidate;
          break;
        }
      }
      if (op.empty()) return left;
      left = binary(op, left, additive(depth));
    }
  }

  int additive(int depth) {
    int left = multiplicative(depth);
    while (true) {
      if (accept("+")) {
        left = binary("+", left, multiplicative(depth));
      } else if (accept("-")) {
        left = binary("-", left, multiplicative(depth));
      } else {
        return left;
      }
    }
  }

  int multiplicative(int depth) {
    int left = unary(depth);
    while (true) {
      std::string op;
      if (accept("**")) {  // not a product: power binds tighter, parsed in unary's operand
        fail("unexpected '**'");
      } else if (accept("*")) {
        op = "*";
      } else if (accept("//") || accept("/")) {
        op = "/";
      } else if (accept("%")) {
        op = "%";
      } else {
        return left;
      }
      left = binary(op, left, unary(depth));
    }
  }

  int unary(int depth) {
    descend(depth);
    if (accept("-")) return add({Node::Kind::Unary, 0, "-", 0, {unary(depth + 1)}});
    if (accept("!") || accept("not")) return add({Node::Kind::Unary, 0, "!", 0, {unary(depth + 1)}});
    return power(depth);
  }

  int power(int depth) {
    const int base = primary(depth);
    // Right-associative, as in Python: 2 ** 3 ** 2 is 2 ** 9.
    if (accept("**")) return binary("**", base, unary(depth + 1));
    return base;
  }

  int primary(int depth) {
    skip_space();
    if (pos_ >= text_.size()) fail("unexpected end");
    const char c = text_[pos_];
    if (accept("(")) {
      const int inner = ternary(depth + 1);
      expect(")");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) return number();
    if (c == '"' || c == '\'') return string_literal(c);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name_or_call(depth);
    fail("unexpected '" + std::string(1, c) + "'");
  }

  int number() {
    std::int64_t value = 0;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) {
        pos_ = start;
        fail("number out of range");
      }
      value = value * 10 + digit;
      ++pos_;
    }
    return add({Node::Kind::Number, value, "", 0, {}});
  }

  int string_literal(char quote) {
    const std::size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) ++pos_;
    if (pos_ >= text_.size()) {
      pos_ = start - 1;
      fail("unterminated string");
    }
    std::string s(text_.substr(start, pos_ - start));
    ++pos_;
    return add({Node::Kind::String, 0, std::move(s), 0, {}});
  }

  int name_or_call(int depth) {
    const std::size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    std::string word(text_.substr(start, pos_ - start));
    if (word == "True" || word == "true") return add({Node::Kind::Number, 1, "", 0, {}});
    if (word == "False" || word == "false") return add({Node::Kind::Number, 0, "", 0, {}});
    if (accept("(")) {
      if (std::find(functions().begin(), functions().end(), word) == functions().end()) {
        pos_ = start;
        fail("unknown function '" + word + "'");
      }
      std::vector<int> args;
      if (!accept(")")) {
        do {
          args.push_back(ternary(depth + 1));
        } while (accept(","));
        expect(")");
      }
      const std::size_t arity = word == "log2" || word == "abs" || word == "next_pow2" ? 1 : 2;
      if (args.size() != arity) {
        pos_ = start;
        fail(word + " takes " + std::to_string(arity) + " argument" + (arity == 1 ? "" : "s"));
      }
      return add({Node::Kind::Call, 0, word, 0, std::move(args)});
    }
    const auto it = std::find(names_.begin(), names_.end(), word);
    if (it == names_.end()) {
      pos_ = start;
      fail("unknown name '" + word + "'");
    }
    return add({Node::Kind::Name, 0, word, static_cast<std::size_t>(it - names_.begin()), {}});
  }

  std::string_view text_;
  const std::vector<std::string>& names_;
  std::vector<Node>& nodes_;
  std::size_t pos_ = 0;
};

bool overflows(const std::string& op, std::int64_t a, std::int64_t b, std::int64_t* out) {
  if (op == "+") return __builtin_add_overflow(a, b, out);
  if (op == "-") return __builtin_sub_overflow(a, b, out);
  return __builtin_mul_overflow(a, b, out);
}

}  // namespace

Expression Expression::parse(std::string_view text, const std::vector<std::string>& names) {
  Expression e;
  e.text_ = std::string(text);
  e.root_ = Parser(e.text_, names, e.nodes_).parse();
  return e;
}

void Expression::fail(const std::string& what) const {
  throw UsageError("expression '" + text_ + "': " + what);
}

bool Expression::reads(std::size_t name) const {
  return std::any_of(nodes_.begin(), nodes_.end(),
                     [&](const Node& n) { return n.kind == Node::Kind::Name && n.slot == name; });
}

Value Expression::evaluate(const std::vector<Value>& values) const {
  return eval(root_, values);
}

std::int64_t Expression::integer(const std::vector<Value>& values) const {
  const Value v = evaluate(values);
  if (!std::holds_alternative<std::int64_t>(v)) fail("is a string, not an integer");
  return std::get<std::int64_t>(v);
}

bool Expression::truth(const std::vector<Value>& values) const {
  const Value v = evaluate(values);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i != 0;
  return !std::get<std::string>(v).empty();
}

Value Expression::eval(int index, const std::vector<Value>& values) const {
  const Node& n = nodes_[static_cast<std::size_t>(index)];
  const auto as_int = [&](int operand) {
    const Value v = eval(operand, values);
    if (!std::holds_alternative<std::int64_t>(v)) fail("'" + n.text + "' of a string");
    return std::get<std::int64_t>(v);
  };
  const auto truth_of = [&](int operand) {
    const Value v = eval(operand, values);
    if (const auto* i = std::get_if<std::int64_t>(&v)) return *i != 0;
    return !std::get<std::string>(v).empty();
  };
  switch (n.kind) {
    case Node::Kind::Number:
      return n.number;
    case Node::Kind::String:
      return n.text;
    case Node::Kind::Name:
      if (n.slot >= values.size()) fail("no value for '" + n.text + "'");
      return values[n.slot];
    case Node::Kind::Ternary:
      return truth_of(n.operands[0]) ? eval(n.operands[1], values) : eval(n.operands[2], values);
    case Node::Kind::Unary: {
      if (n.text == "!") return std::int64_t{!truth_of(n.operands[0])};
      const std::int64_t v = as_int(n.operands[0]);
      if (v == std::numeric_limits<std::int64_t>::min()) fail("overflow");
      return -v;
    }
    case Node::Kind::Binary:
      break;
    case Node::Kind::Call: {
      const std::int64_t a = as_int(n.operands[0]);
      if (n.text == "log2") {
        if (a <= 0) fail("log2 of " + std::to_string(a));
        return std::int64_t{63 - __builtin_clzll(static_cast<unsigned long long>(a))};
      }
      if (n.text == "next_pow2") {  // the least power of two at or above a (1 for a <= 1)
        if (a > (std::int64_t{1} << 62)) fail("overflow");
        std::int64_t p = 1;
        while (p < a) p <<= 1;
        return p;
      }
      if (n.text == "abs") {
        if (a == std::numeric_limits<std::int64_t>::min()) fail("overflow");
        return a < 0 ? -a : a;
      }
      const std::int64_t b = as_int(n.operands[1]);
      if (n.text == "min") return std::min(a, b);
      if (n.text == "max") return std::max(a, b);
      if (b <= 0 || a < 0) fail(n.text + " of " + std::to_string(a) + " by " + std::to_string(b));
      const std::int64_t up = (a / b + (a % b != 0));
      std::int64_t product = 0;
      if (n.text == "ceil_div") return up;
      if (__builtin_mul_overflow(up, b, &product)) fail("overflow");
      return product;  // round_up
    }
  }
  const std::string& op = n.text;
  if (op == "&&") return std::int64_t{truth_of(n.operands[0]) && truth_of(n.operands[1])};
  if (op == "||") return std::int64_t{truth_of(n.operands[0]) || truth_of(n.operands[1])};
  const Value left = eval(n.operands[0], values);
  const Value right = eval(n.operands[1], values);
  if (op == "==") return std::int64_t{left == right};
  if (op == "!=") return std::int64_t{left != right};
  if (left.index() != right.index()) fail("'" + op + "' of a string and an integer");
  if (op == "<") return std::int64_t{left < right};
  if (op == "<=") return std::int64_t{left <= right};
  if (op == ">") return std::int64_t{left > right};
  if (op == ">=") return std::int64_t{left >= right};
  if (!std::holds_alternative<std::int64_t>(left)) fail("'" + op + "' of strings");
  const std::int64_t a = std::get<std::int64_t>(left), b = std::get<std::int64_t>(right);
  std::int64_t out = 0;
  if (op == "+" || op == "-" || op == "*") {
    if (overflows(op, a, b, &out)) fail("overflow");
    return out;
  }
  if (op == "/" || op == "%") {
    if (b == 0) fail("division by zero");
    if (a == std::numeric_limits<std::int64_t>::min() && b == -1) fail("overflow");
    return op == "/" ? a / b : a % b;
  }
  // **: non-negative exponents only. Bases 0 and ±1 take any exponent; any other overflows 64 bits within
  // 63 multiplications, so the loop is short.
  if (b < 0) fail("negative exponent");
  if (a == 0) return std::int64_t{b == 0};
  if (a == 1) return std::int64_t{1};
  if (a == -1) return std::int64_t{b % 2 ? -1 : 1};
  std::int64_t result = 1;
  for (std::int64_t i = 0; i < b; ++i) {
    if (__builtin_mul_overflow(result, a, &result)) fail("overflow");
  }
  return result;
}

}  // namespace varex::operators::user
