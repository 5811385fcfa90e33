#include "operators/strings/regex/pattern.hpp"

#include <cctype>
#include <cstdio>

#include "base/errors.hpp"

namespace varex::regex {

namespace {

ByteSet bytes_where(int (*predicate)(int)) {
  ByteSet s;
  for (int b = 0; b < 256; ++b) {
    if (predicate(b)) s.set(b);
  }
  return s;
}

ByteSet all_bytes() {
  ByteSet s;
  for (int b = 0; b < 256; ++b) s.set(b);
  return s;
}

int first_symbol(const ByteSet& s) {
  for (int b = 0; b < 256; ++b) {
    if (s.test(b)) return b;
  }
  return -1;
}

ByteSet one(int symbol) {
  ByteSet s;
  s.set(symbol);
  return s;
}

// `\s` as Perl and RE2 (the regex operator's reference) define it: tab, newline, form feed, carriage return
// and space, not the vertical tab that [[:space:]] and isspace() add (found by the fuzzer: `[a]\s` matched
// "a\v" here and not in RE2).
int is_perl_space(int b) {
  return b == '\t' || b == '\n' || b == '\f' || b == '\r' || b == ' ';
}

// ASCII classes only: bytes ≥ 128 belong to none, whatever the host's locale says.
int is_word(int b) {
  return b < 128 && (std::isalnum(b) || b == '_');
}
int ascii(int (*f)(int), int b) {
  return b < 128 && f(b);
}

ByteSet named_class(std::string_view name, std::size_t at) {
  struct Class {
    const char* name;
    int (*test)(int);
  };
  static const Class classes[] = {
      {"alpha", [](int b) { return ascii(std::isalpha, b); }},
      {"digit", [](int b) { return ascii(std::isdigit, b); }},
      {"alnum", [](int b) { return ascii(std::isalnum, b); }},
      {"upper", [](int b) { return ascii(std::isupper, b); }},
      {"lower", [](int b) { return ascii(std::islower, b); }},
      {"space", [](int b) { return ascii(std::isspace, b); }},
      {"punct", [](int b) { return ascii(std::ispunct, b); }},
      {"xdigit", [](int b) { return ascii(std::isxdigit, b); }},
      {"blank", [](int b) { return static_cast<int>(b == ' ' || b == '\t'); }},
      {"cntrl", [](int b) { return ascii(std::iscntrl, b); }},
      {"print", [](int b) { return ascii(std::isprint, b); }},
      {"graph", [](int b) { return ascii(std::isgraph, b); }},
  };
  for (const Class& c : classes) {
    if (name == c.name) return bytes_where(c.test);
  }
  throw UsageError("regex: unknown character class [:" + std::string(name) + ":] at offset " +
                   std::to_string(at));
}

class RegexParser {
 public:
  explicit RegexParser(std::string_view text) : text_(text) {}

  Pattern parse() {
    p_.root = alternation();
    if (pos_ < text_.size()) fail("unmatched ')'");
    return std::move(p_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError("regex: " + what + " at offset " + std::to_string(pos_) + " of '" + std::string(text_) +
                     "'");
  }
  bool done() const { return pos_ >= text_.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(text_[pos_]); }

  int add(Node n) {
    p_.nodes.push_back(std::move(n));
    return static_cast<int>(p_.nodes.size() - 1);
  }
  int bytes(const ByteSet& s) {
    Node n;
    n.kind = Node::Kind::Bytes;
    n.bytes = s;
    return add(std::move(n));
  }
  int anchor(Node::Kind kind) {
    Node n;
    n.kind = kind;
    return add(std::move(n));
  }

  int alternation() {
    std::vector<int> branches{concatenation()};
    while (!done() && peek() == '|') {
      ++pos_;
      branches.push_back(concatenation());
    }
    if (branches.size() == 1) return branches[0];
    Node n;
    n.kind = Node::Kind::Alternation;
    n.children = std::move(branches);
    return add(std::move(n));
  }

  int concatenation() {
    Node n;
    n.kind = Node::Kind::Concat;
    while (!done() && peek() != '|' && peek() != ')') n.children.push_back(repetition());
    if (n.children.empty()) return add(Node{});
    if (n.children.size() == 1) return n.children[0];
    return add(std::move(n));
  }

  int bound() {
    if (done() || !std::isdigit(peek())) fail("a repetition count was expected");
    // Engines read a count with a leading zero differently (RE2, the reference, takes "{01}" literally):
    // refused.
    if (peek() == '0' && pos_ + 1 < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))
      fail("a repetition count with a leading zero");
    int v = 0;
    while (!done() && std::isdigit(peek())) {
      v = v * 10 + (peek() - '0');
      if (v > 255) fail("repetition counts above 255 are not supported");
      ++pos_;
    }
    return v;
  }

  int repetition() {
    int atom_index = atom();
    while (!done()) {
      int min = 0, max = -1;
      const unsigned char c = peek();
      if (c == '*') {
        ++pos_;
      } else if (c == '+') {
        min = 1, ++pos_;
      } else if (c == '?') {
        max = 1, ++pos_;
      } else if (c == '{') {
        ++pos_;
        min = max = bound();
        if (!done() && peek() == ',') {
          ++pos_;
          max = !done() && peek() == '}' ? -1 : bound();
        }
        if (done() || peek() != '}') fail("'}' was expected");
        ++pos_;
        if (max >= 0 && max < min) fail("the repetition {m,n} needs m <= n");
      } else {
        break;
      }
      Node n;
      n.kind = Node::Kind::Repeat;
      n.children = {atom_index};
      n.min = min;
      n.max = max;
      atom_index = add(std::move(n));
    }
    return atom_index;
  }

  // What a backslash and the byte after it stand for.
  ByteSet escape() {
    if (done()) fail("the pattern ends with a backslash");
    const unsigned char c = peek();
    ++pos_;
    switch (c) {
      case 'd':
        return bytes_where([](int b) { return ascii(std::isdigit, b); });
      case 'D':
        return ~bytes_where([](int b) { return ascii(std::isdigit, b); }) & all_bytes();
      case 'w':
        return bytes_where(is_word);
      case 'W':
        return ~bytes_where(is_word) & all_bytes();
      case 's':
        return bytes_where(is_perl_space);
      case 'S':
        return ~bytes_where(is_perl_space) & all_bytes();
      case 'n':
        return one('\n');
      case 't':
        return one('\t');
      case 'r':
        return one('\r');
      case 'f':
        return one('\f');
      case 'v':
        return one('\v');
      case 'x': {
        int v = 0;
        for (int i = 0; i < 2; ++i) {
          if (done() || !std::isxdigit(peek())) fail("\\x needs two hexadecimal digits");
          const int d = std::isdigit(peek()) ? peek() - '0' : std::tolower(peek()) - 'a' + 10;
          v = v * 16 + d;
          ++pos_;
        }
        return one(v);
      }
      default:
        if (std::isalnum(c)) fail(std::string("unknown escape \\") + static_cast<char>(c));
        return one(c);
    }
  }

  ByteSet bracket() {
    bool negate = false;
    if (!done() && peek() == '^') negate = true, ++pos_;
    ByteSet s;
    bool first = true;
    for (;;) {
      if (done()) fail("unterminated bracket expression");
      unsigned char c = peek();
      if (c == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      if (c == '[' && pos_ + 1 < text_.size() && text_[pos_ + 1] == ':') {
        const std::size_t end = text_.find(":]", pos_ + 2);
        if (end == std::string_view::npos) fail("unterminated character class");
        s |= named_class(text_.substr(pos_ + 2, end - pos_ - 2), pos_);
        pos_ = end + 2;
        continue;
      }
      int lo;
      if (c == '\\') {
        ++pos_;
        const ByteSet e = escape();
        if (e.count() != 1) {
          s |= e;
          continue;
        }
        lo = first_symbol(e);
      } else {
        lo = c;
        ++pos_;
      }
      if (pos_ + 1 < text_.size() && peek() == '-' && text_[pos_ + 1] != ']') {
        ++pos_;
        int hi;
        if (peek() == '\\') {
          ++pos_;
          const ByteSet e = escape();
          if (e.count() != 1) fail("a range cannot end in a class");
          hi = first_symbol(e);
        } else {
          hi = peek();
          ++pos_;
        }
        if (hi < lo) fail("the range's end is below its start");
        for (int b = lo; b <= hi; ++b) s.set(b);
      } else {
        s.set(lo);
      }
    }
    return negate ? (~s & all_bytes()) : s;
  }

  int atom() {
    const unsigned char c = peek();
    switch (c) {
      case '(': {
        ++pos_;
        const int inner = done() || peek() != ')' ? alternation() : add(Node{});
        if (done() || peek() != ')') fail("')' was expected");
        ++pos_;
        return inner;
      }
      case '[':
        ++pos_;
        return bytes(bracket());
      case '.':
        ++pos_;
        return bytes(all_bytes());
      case '^':
        ++pos_;
        return anchor(Node::Kind::Begin);
      case '$':
        ++pos_;
        return anchor(Node::Kind::End);
      case '\\':
        ++pos_;
        return bytes(escape());
      case '*':
      case '+':
      case '?':
      case '{':
        fail(std::string("nothing to repeat before '") + static_cast<char>(c) + "'");
      default:
        ++pos_;
        return bytes(one(c));
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  Pattern p_;
};

}  // namespace

Pattern parse_regex(std::string_view text) {
  return RegexParser(text).parse();
}

Pattern parse_like(std::string_view text) {
  Pattern p;
  Node concat;
  concat.kind = Node::Kind::Concat;
  const auto add = [&](Node n) {
    p.nodes.push_back(std::move(n));
    return static_cast<int>(p.nodes.size() - 1);
  };
  const auto bytes = [](const ByteSet& s) {
    Node n;
    n.kind = Node::Kind::Bytes;
    n.bytes = s;
    return n;
  };
  Node begin, end;
  begin.kind = Node::Kind::Begin;
  end.kind = Node::Kind::End;
  concat.children.push_back(add(begin));
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '%') {
      Node star;
      star.kind = Node::Kind::Repeat;
      star.children = {add(bytes(all_bytes()))};
      star.min = 0;
      star.max = -1;
      concat.children.push_back(add(std::move(star)));
    } else if (c == '_') {
      concat.children.push_back(add(bytes(all_bytes())));
    } else if (c == '\\') {
      if (++i == text.size())
        throw UsageError("LIKE: the pattern '" + std::string(text) + "' ends with a backslash");
      concat.children.push_back(add(bytes(one(static_cast<unsigned char>(text[i])))));
    } else {
      concat.children.push_back(add(bytes(one(c))));
    }
  }
  concat.children.push_back(add(end));
  p.root = add(std::move(concat));
  return p;
}

std::string like_to_regex(std::string_view like) {
  std::string out = "^";
  for (std::size_t i = 0; i < like.size(); ++i) {
    const auto c = static_cast<unsigned char>(like[i]);
    if (c == '%') {
      out += ".*";
    } else if (c == '_') {
      out += ".";
    } else {
      if (c == '\\' && i + 1 < like.size()) ++i;
      const auto literal = static_cast<unsigned char>(like[i]);
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", literal);
      out += std::isalnum(literal) ? std::string(1, static_cast<char>(literal)) : std::string(hex);
    }
  }
  return out + "$";
}

}  // namespace varex::regex
