#pragma once
// The boolean queries of Govindaraju's predicates (document 004, sec. 4.1-4.3): a conjunction of clauses,
// each a disjunction of predicates `a op c` or `a op b` over signed 32-bit attributes a0, a1, …, with op
// one of = != < <= > >= and NOT folded into the operator. Parsed from text such as
//   (a0 < 10 or a1 >= a2) and a3 != 7
// Keywords and, or, not are case-insensitive; a disjunction of several predicates beside other clauses
// must stand in parentheses (the query is a conjunction of clauses, never anything else); a constant
// may stand left of the operator (10 > a0 is a0 < 10).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "operators/common/toolkit.hpp"

namespace varex::operators {

enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge };
std::string to_string(CompareOp op);                      // "=", "!=", "<", …
CompareOp compare_op_from_string(std::string_view text);  // UsageError for anything else ("==" is "=")
CompareOp negated(CompareOp op);                          // not (x < y) is x >= y
CompareOp mirrored(CompareOp op);                         // c < a is a > c
// x op y, on the host (the references).
template <typename T>
bool compares(T x, CompareOp op, T y) {
  switch (op) {
    case CompareOp::Eq:
      return x == y;
    case CompareOp::Ne:
      return x != y;
    case CompareOp::Lt:
      return x < y;
    case CompareOp::Le:
      return x <= y;
    case CompareOp::Gt:
      return x > y;
    case CompareOp::Ge:
      return x >= y;
  }
  return false;
}

struct Predicate {
  std::uint32_t attribute = 0;
  CompareOp op = CompareOp::Eq;
  bool rhs_is_attribute = false;
  std::int64_t rhs = 0;  // an attribute index, or an int32 constant
};

struct Clause {
  std::vector<Predicate> any;  // holds when one of them holds
};

struct Cnf {
  std::vector<Clause> all;  // holds when every clause holds; none: every row

  // UsageError naming what is wrong and where; an attribute at or past `attributes` is one (0: any).
  static Cnf parse(std::string_view text, std::uint32_t attributes);
  std::string to_string() const;  // canonical text, parsed back to the same query
  nlohmann::json to_json() const { return to_string(); }
  static Cnf from_json(const nlohmann::json& j) { return parse(j.get<std::string>(), 0); }
  // The largest attribute index the query names, plus one (0: none).
  std::uint32_t attributes_used() const;
  // How many distinct attributes the query reads, counting `also` (an attribute read beside it) too.
  std::uint32_t attributes_read(std::optional<std::uint32_t> also = std::nullopt) const;
  std::size_t predicates() const;
};

// The kernels' form of a clause: an expression over A(c) (attribute c of the row at hand) without spaces,
// so that it can travel as a preprocessor define: "(A(0)<10)|(A(1)>=A(2))".
std::string kernel_expression(const Clause& clause);
// A signed 32-bit constant as C source ("(-2147483647-1)" for the smallest).
std::string kernel_int(std::int64_t value);

}  // namespace varex::operators
