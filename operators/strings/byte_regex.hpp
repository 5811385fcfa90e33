#pragma once
// RE2 on the string operators' regular expressions over bytes: POSIX syntax with the Perl classes, `^`/`$`
// at the ends of the string only, `.` matching any byte. Shared by the host reference, the CPU baseline's
// fallback and the tests.
//
// Bytes are not given to RE2 as Latin-1: Debian's libre2 (2022-06-01) in Latin-1 mode misses matches of
// alternations whose branches share a prefix with a byte >= 0x80 (`\xe9q|\xe9` does not match "\xe9",
// found by tests/fuzz). The pattern and every string are read as Latin-1 and handed to RE2 as UTF-8, one
// code point per byte, where it matches correctly; ASCII text passes unchanged.
#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>
#include "operators/common/toolkit.hpp"

namespace varex::operators {

class ByteRegex {
 public:
  explicit ByteRegex(std::string_view pattern);
  bool ok() const { return re_->ok(); }
  const std::string& error() const { return re_->error(); }
  // Whether the pattern matches anywhere in `bytes`.
  bool search(std::string_view bytes) const;

 private:
  std::unique_ptr<RE2> re_;
};

}  // namespace varex::operators
