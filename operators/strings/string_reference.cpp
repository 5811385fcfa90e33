#include "operators/strings/string_reference.hpp"

#include "operators/strings/byte_regex.hpp"

#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/int_columns.hpp"

namespace varex::operators {

namespace {

bool ascii(std::string_view bytes) {
  for (const char c : bytes) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

RE2::Options utf8_options() {
  RE2::Options o;
  o.set_posix_syntax(true);
  o.set_perl_classes(true);
  o.set_encoding(RE2::Options::EncodingUTF8);
  o.set_one_line(true);
  o.set_dot_nl(true);
  o.set_log_errors(false);
  return o;
}

}  // namespace

ByteRegex::ByteRegex(std::string_view pattern)
    : re_(std::make_unique<RE2>(latin1_to_utf8(pattern), utf8_options())) {}

bool ByteRegex::search(std::string_view bytes) const {
  if (ascii(bytes)) return RE2::PartialMatch(re2::StringPiece(bytes.data(), bytes.size()), *re_);
  const std::string text = latin1_to_utf8(bytes);
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

bool like_matches(std::string_view pattern, std::string_view text) {
  // Greedy matching with one backtrack point: the last `%` seen and where its match ended.
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star = ++p;
      resume = t;
      continue;
    }
    if (p < pattern.size()) {
      const bool escaped = pattern[p] == '\\' && p + 1 < pattern.size();
      const char want = escaped ? pattern[p + 1] : pattern[p];
      if ((!escaped && want == '_') || want == text[t]) {
        p += escaped ? 2 : 1;
        ++t;
        continue;
      }
    }
    if (star == std::string_view::npos) return false;
    p = star;
    t = ++resume;
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

std::vector<std::uint8_t> string_reference(StringOp op, const std::string& operand,
                                           const datasets::StringColumn& column) {
  const std::uint64_t rows = column.rows();
  std::vector<std::uint8_t> bitmap((rows + 7) / 8, 0);
  std::unique_ptr<ByteRegex> re;
  if (op == StringOp::Regex) {
    re = std::make_unique<ByteRegex>(operand);
    if (!re->ok()) throw UsageError("regex: the reference (RE2) rejects '" + operand + "': " + re->error());
  }
  // Threads own whole bytes of the bitmap: ranges of rows start at multiples of 8.
  datasets::parallel_rows((rows + 7) / 8, [&](std::uint64_t first_byte, std::uint64_t last_byte) {
    for (std::uint64_t r = first_byte * 8; r < std::min(rows, last_byte * 8); ++r) {
      const std::string_view s = column.at(r);
      bool match = false;
      switch (op) {
        case StringOp::Equal:
          match = s == operand;
          break;
        case StringOp::Prefix:
          match = s.substr(0, operand.size()) == operand;
          break;
        case StringOp::Like:
          match = like_matches(operand, s);
          break;
        case StringOp::Regex:
          match = re->search(s);
          break;
      }
      if (match) bitmap[r / 8] |= static_cast<std::uint8_t>(1u << (r % 8));
    }
  });
  return bitmap;
}

}  // namespace varex::operators
