#pragma once
// RE2 set to the string operators' regular expressions: POSIX syntax with the Perl classes, bytes
// (Latin-1), `^`/`$` at the ends of the string only, `.` matching any byte. Shared by the host reference,
// the CPU baseline's fallback and the tests.
#include <re2/re2.h>

namespace varex::harness {

RE2::Options re2_byte_options();

}  // namespace varex::harness
