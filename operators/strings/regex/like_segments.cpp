#include "operators/strings/regex/like_segments.hpp"

#include <string>

#include "base/errors.hpp"

namespace varex::regex {

LikeSegments like_segments(std::string_view pattern) {
  LikeSegments s;
  s.starts.push_back(0);
  bool open = false;  // a segment has tokens and no `%` has closed it yet
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const auto c = static_cast<unsigned char>(pattern[i]);
    if (c == '%') {
      if (i == 0) s.anchored_start = false;
      s.has_percent = true;
      if (open) s.starts.push_back(static_cast<std::uint32_t>(s.tokens.size()));
      open = false;
      continue;
    }
    if (c == '\\') {
      if (++i == pattern.size())
        throw UsageError("LIKE: the pattern '" + std::string(pattern) + "' ends with a backslash");
      s.tokens.push_back(static_cast<unsigned char>(pattern[i]));
    } else {
      s.tokens.push_back(c == '_' ? kAnyByte : c);
    }
    open = true;
  }
  if (open) s.starts.push_back(static_cast<std::uint32_t>(s.tokens.size()));
  // An unescaped `%` last (an escaped one is a token and leaves `open` set).
  if (!open && s.has_percent) s.anchored_end = false;
  if (s.tokens.empty()) s.anchored_start = s.anchored_end = !s.has_percent;
  return s;
}

bool LikeSegments::matches(std::string_view text) const {
  const std::size_t total = tokens.size(), n = text.size();
  if (segments() == 0) return has_percent || n == 0;
  if (n < total || (!has_percent && n != total)) return false;
  std::size_t at = 0;  // where the next segment may start
  for (std::size_t k = 0; k < segments(); ++k) {
    const std::size_t first = starts[k], length = starts[k + 1] - first;
    const bool fixed_start = k == 0 && anchored_start, fixed_end = k + 1 == segments() && anchored_end;
    if (n - at < total - first) return false;
    if (fixed_end) at = n - (total - first);
    for (;; ++at) {
      if (n - at < total - first) return false;
      std::size_t j = 0;
      while (j < length &&
             (tokens[first + j] == kAnyByte || tokens[first + j] == static_cast<unsigned char>(text[at + j])))
        ++j;
      if (j == length) break;
      if (fixed_start || fixed_end) return false;
    }
    at += length;
  }
  return true;
}

std::vector<std::int32_t> LikeSegments::image() const {
  const auto count = static_cast<std::int32_t>(segments());
  const auto total = static_cast<std::int32_t>(tokens.size());
  std::vector<std::int32_t> out(kSegHeader, 0);
  out[0] = total;
  out[1] = count;
  out[2] = (anchored_start ? kSegAnchoredStart : 0) | (anchored_end ? kSegAnchoredEnd : 0) |
           (has_percent ? kSegHasPercent : 0);
  out[3] = kSegHeader;
  out[4] = kSegHeader + count + 1;
  out.insert(out.end(), starts.begin(), starts.end());
  for (std::int32_t k = 0; k < count; ++k) {
    for (std::uint32_t t = starts[k]; t < starts[k + 1]; ++t)
      out.push_back(tokens[t] | (t + 1 == starts[k + 1] ? kSegLastToken : 0) | (k << kSegNumberShift));
  }
  return out;
}

}  // namespace varex::regex
