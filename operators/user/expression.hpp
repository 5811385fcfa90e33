#pragma once
// The expressions of a user operator's declaration (docs/USER-OPERATORS.md): constraints between tunables,
// launch geometry, buffer sizes and derived defines. Integers (64-bit) and strings, C's operators with C's
// precedence, Python's spellings of the logical ones (and, or, not, //, **: Kernel Tuner's restrictions read
// as they are written), and a few functions. Names are resolved when the expression is parsed, so a name
// that is neither a tunable nor a workload parameter is refused with the declaration, not at the first
// variant that reaches it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/params.hpp"

namespace varex::operators::user {

using variants::Value;

// A parsed expression. Values of its names come in the order of the `names` it was parsed against.
class Expression {
 public:
  // UsageError ("expression 'TEXT': WHAT at column N") for text that does not parse or names something
  // not in `names`.
  static Expression parse(std::string_view text, const std::vector<std::string>& names);

  // UsageError for a type mismatch, a division by zero or an overflow of 64 bits.
  Value evaluate(const std::vector<Value>& values) const;
  std::int64_t integer(const std::vector<Value>& values) const;  // UsageError where the result is a string
  bool truth(const std::vector<Value>& values) const;            // non-zero integer or non-empty string

  const std::string& text() const { return text_; }
  // Whether the expression reads the name at this position of `names`.
  bool reads(std::size_t name) const;

  struct Node {
    enum class Kind { Number, String, Name, Unary, Binary, Ternary, Call } kind;
    std::int64_t number = 0;
    std::string text;           // a string literal, an operator or a function's name
    std::size_t slot = 0;       // a name's position
    std::vector<int> operands;  // node indices
  };

 private:
  Value eval(int node, const std::vector<Value>& values) const;
  [[noreturn]] void fail(const std::string& what) const;

  std::string text_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

}  // namespace varex::operators::user
