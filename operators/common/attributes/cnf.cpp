#include "operators/common/attributes/cnf.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>

#include "base/errors.hpp"

namespace varex::operators {

namespace {

struct Token {
  enum Kind { Attribute, Number, Op, Open, Close, And, Or, Not, End } kind;
  std::string text;
  std::size_t at;  // offset in the query
  std::int64_t value = 0;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

[[noreturn]] void fail(std::string_view query, std::size_t at, const std::string& what) {
  throw UsageError("query where: " + what + " at offset " + std::to_string(at) + " of '" +
                   std::string(query) + "'");
}

std::vector<Token> tokenize(std::string_view q) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < q.size()) {
    const char c = q[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '(' || c == ')') {
      out.push_back({c == '(' ? Token::Open : Token::Close, std::string(1, c), i});
      ++i;
    } else if (std::string_view("=!<>").find(c) != std::string_view::npos) {
      std::size_t n = 1;
      if (i + 1 < q.size() && q[i + 1] == '=') n = 2;
      if (c == '<' && i + 1 < q.size() && q[i + 1] == '>') n = 2;
      out.push_back({Token::Op, std::string(q.substr(i, n)), i});
      i += n;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+') {
      std::size_t j = i + 1;
      while (j < q.size() && std::isdigit(static_cast<unsigned char>(q[j]))) ++j;
      std::int64_t v = 0;
      const char* first = q.data() + i + (c == '+' ? 1 : 0);
      const auto [ptr, ec] = std::from_chars(first, q.data() + j, v);
      if (ec != std::errc() || ptr != q.data() + j)
        fail(q, i, "'" + std::string(q.substr(i, j - i)) + "' is no integer");
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
        fail(q, i, std::string(q.substr(i, j - i)) + " does not fit in a 32-bit integer");
      }
      out.push_back({Token::Number, std::string(q.substr(i, j - i)), i, v});
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < q.size() && (std::isalnum(static_cast<unsigned char>(q[j])) || q[j] == '_')) ++j;
      const std::string word = lower(q.substr(i, j - i));
      if (word == "and") {
        out.push_back({Token::And, word, i});
      } else if (word == "or") {
        out.push_back({Token::Or, word, i});
      } else if (word == "not") {
        out.push_back({Token::Not, word, i});
      } else if (word.size() > 1 && word[0] == 'a' &&
                 std::all_of(word.begin() + 1, word.end(), [](char d) { return std::isdigit(d); }) &&
                 word.size() < 6) {
        out.push_back({Token::Attribute, word, i, std::stoll(word.substr(1))});
      } else {
        fail(q, i, "'" + std::string(q.substr(i, j - i)) + "' is no attribute (a0, a1, …) or keyword");
      }
      i = j;
    } else {
      fail(q, i, std::string("unexpected character '") + c + "'");
    }
  }
  out.push_back({Token::End, "end", q.size()});
  return out;
}

class Parser {
 public:
  Parser(std::string_view query, std::uint32_t attributes)
      : q_(query), attributes_(attributes), tokens_(tokenize(query)) {}

  Cnf parse() {
    Cnf cnf;
    if (peek().kind == Token::End) fail(q_, 0, "empty query");
    bool bare_or = false;
    do {
      Clause clause = parse_clause(bare_or);
      cnf.all.push_back(std::move(clause));
    } while (accept(Token::And));
    if (peek().kind == Token::Or || (bare_or && cnf.all.size() > 1)) {
      fail(q_, peek().kind == Token::Or ? peek().at : 0,
           "a disjunction beside other clauses must stand in parentheses: the query is a conjunction of "
           "clauses");
    }
    if (peek().kind != Token::End) fail(q_, peek().at, "unexpected '" + peek().text + "'");
    return cnf;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  bool accept(Token::Kind kind) {
    if (peek().kind != kind) return false;
    ++pos_;
    return true;
  }

  // A clause: a parenthesised disjunction, or predicates joined by `or` (bare: only as the whole query).
  Clause parse_clause(bool& bare_or) {
    Clause clause;
    if (peek().kind == Token::Open && is_parenthesised_disjunction()) {
      ++pos_;
      do clause.any.push_back(parse_literal());
      while (accept(Token::Or));
      if (!accept(Token::Close)) fail(q_, peek().at, "missing ')'");
      return clause;
    }
    clause.any.push_back(parse_literal());
    while (accept(Token::Or)) {
      bare_or = true;
      clause.any.push_back(parse_literal());
    }
    return clause;
  }

  // Whether the '(' at pos_ opens a disjunction rather than one parenthesised literal: it holds an `or`
  // at its own depth.
  bool is_parenthesised_disjunction() const {
    int depth = 0;
    for (std::size_t i = pos_; i < tokens_.size(); ++i) {
      if (tokens_[i].kind == Token::Open) ++depth;
      if (tokens_[i].kind == Token::Close && --depth == 0) return false;
      if (tokens_[i].kind == Token::And && depth >= 1) {
        fail(q_, tokens_[i].at, "'and' inside parentheses: the query must be a conjunction of clauses");
      }
      if (tokens_[i].kind == Token::Or && depth == 1) return true;
    }
    return false;
  }

  // [not] predicate, [not] ( literal ).
  Predicate parse_literal() {
    if (accept(Token::Not)) {
      Predicate p = parse_literal();
      p.op = negated(p.op);
      return p;
    }
    if (accept(Token::Open)) {
      Predicate p = parse_literal();
      if (!accept(Token::Close)) fail(q_, peek().at, "missing ')'");
      return p;
    }
    const Token left = operand();
    const Token& op_token = peek();
    if (op_token.kind != Token::Op) fail(q_, op_token.at, "expected a comparison (= != < <= > >=)");
    ++pos_;
    const CompareOp op = op_of(op_token);
    const Token right = operand();
    if (left.kind == Token::Number && right.kind == Token::Number) {
      fail(q_, left.at, "a predicate compares an attribute, not two constants");
    }
    Predicate p;
    if (left.kind == Token::Attribute) {
      p.attribute = static_cast<std::uint32_t>(left.value);
      p.op = op;
      p.rhs_is_attribute = right.kind == Token::Attribute;
      p.rhs = right.value;
    } else {
      p.attribute = static_cast<std::uint32_t>(right.value);
      p.op = mirrored(op);
      p.rhs = left.value;
    }
    return p;
  }

  CompareOp op_of(const Token& t) const {
    try {
      return compare_op_from_string(t.text);
    } catch (const UsageError&) {
      fail(q_, t.at, "'" + t.text + "' is no comparison (= != < <= > >=)");
    }
  }

  Token operand() {
    const Token t = peek();
    if (t.kind != Token::Attribute && t.kind != Token::Number) {
      fail(q_, t.at, "expected an attribute (a0, a1, …) or an integer, got '" + t.text + "'");
    }
    if (t.kind == Token::Attribute && attributes_ && t.value >= attributes_) {
      fail(q_, t.at,
           t.text + " is no attribute of these records (a0 to a" + std::to_string(attributes_ - 1) + ")");
    }
    ++pos_;
    return t;
  }

  std::string_view q_;
  std::uint32_t attributes_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string to_string(CompareOp op) {
  switch (op) {
    case CompareOp::Eq:
      return "=";
    case CompareOp::Ne:
      return "!=";
    case CompareOp::Lt:
      return "<";
    case CompareOp::Le:
      return "<=";
    case CompareOp::Gt:
      return ">";
    case CompareOp::Ge:
      return ">=";
  }
  return "?";
}

CompareOp compare_op_from_string(std::string_view text) {
  if (text == "=" || text == "==") return CompareOp::Eq;
  if (text == "!=" || text == "<>") return CompareOp::Ne;
  if (text == "<") return CompareOp::Lt;
  if (text == "<=") return CompareOp::Le;
  if (text == ">") return CompareOp::Gt;
  if (text == ">=") return CompareOp::Ge;
  throw UsageError("'" + std::string(text) + "' is no comparison (= != < <= > >=)");
}

CompareOp negated(CompareOp op) {
  switch (op) {
    case CompareOp::Eq:
      return CompareOp::Ne;
    case CompareOp::Ne:
      return CompareOp::Eq;
    case CompareOp::Lt:
      return CompareOp::Ge;
    case CompareOp::Le:
      return CompareOp::Gt;
    case CompareOp::Gt:
      return CompareOp::Le;
    case CompareOp::Ge:
      return CompareOp::Lt;
  }
  return op;
}

CompareOp mirrored(CompareOp op) {
  switch (op) {
    case CompareOp::Lt:
      return CompareOp::Gt;
    case CompareOp::Le:
      return CompareOp::Ge;
    case CompareOp::Gt:
      return CompareOp::Lt;
    case CompareOp::Ge:
      return CompareOp::Le;
    default:
      return op;
  }
}

Cnf Cnf::parse(std::string_view text, std::uint32_t attributes) {
  return Parser(text, attributes).parse();
}

std::string Cnf::to_string() const {
  std::string out;
  for (std::size_t c = 0; c < all.size(); ++c) {
    if (c) out += " and ";
    const bool parens = all[c].any.size() > 1 && all.size() > 1;
    if (parens) out += "(";
    for (std::size_t i = 0; i < all[c].any.size(); ++i) {
      const Predicate& p = all[c].any[i];
      if (i) out += " or ";
      out += "a" + std::to_string(p.attribute) + " " + operators::to_string(p.op) + " " +
             (p.rhs_is_attribute ? "a" : "") + std::to_string(p.rhs);
    }
    if (parens) out += ")";
  }
  return out;
}

std::uint32_t Cnf::attributes_used() const {
  std::uint32_t used = 0;
  for (const Clause& c : all) {
    for (const Predicate& p : c.any) {
      used = std::max(used, p.attribute + 1);
      if (p.rhs_is_attribute) used = std::max(used, static_cast<std::uint32_t>(p.rhs) + 1);
    }
  }
  return used;
}

std::uint32_t Cnf::attributes_read(std::optional<std::uint32_t> also) const {
  std::vector<bool> read(std::max(attributes_used(), also ? *also + 1 : 0u), false);
  if (also) read[*also] = true;
  for (const Clause& c : all) {
    for (const Predicate& p : c.any) {
      read[p.attribute] = true;
      if (p.rhs_is_attribute) read[static_cast<std::size_t>(p.rhs)] = true;
    }
  }
  return static_cast<std::uint32_t>(std::count(read.begin(), read.end(), true));
}

std::size_t Cnf::predicates() const {
  std::size_t n = 0;
  for (const Clause& c : all) n += c.any.size();
  return n;
}

std::string kernel_int(std::int64_t value) {
  if (value == std::numeric_limits<std::int32_t>::min()) return "(-2147483647-1)";
  return value < 0 ? "(" + std::to_string(value) + ")" : std::to_string(value);
}

std::string kernel_expression(const Clause& clause) {
  std::string out;
  for (const Predicate& p : clause.any) {
    if (!out.empty()) out += "|";
    out += "(A(" + std::to_string(p.attribute) + ")" + (p.op == CompareOp::Eq ? "==" : to_string(p.op));
    out += p.rhs_is_attribute ? "A(" + std::to_string(p.rhs) + ")" : kernel_int(p.rhs);
    out += ")";
  }
  return out.empty() ? "1" : out;
}

}  // namespace varex::operators
