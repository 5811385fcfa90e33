#pragma once
// The two ways a varex command fails. The command line maps them to exit statuses.
#include <stdexcept>

namespace varex {

// Bad usage or bad input (unknown operator, malformed file, value out of range): one line, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure at run time that is not the user's input (driver, device, I/O): exit status 1.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace varex
