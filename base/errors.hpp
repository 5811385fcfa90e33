#pragma once
// The ways a varex command fails. The command line maps them to exit statuses (cli/main.cpp).
#include <stdexcept>

namespace varex {

// Bad usage or bad input (unknown operator, malformed file, value out of range): one line, exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Another process runs the same session (a second identical command): exit status 3, so that a script can
// wait or retry. A usage error for everything else that handles one.
class BusyError : public UsageError {
 public:
  using UsageError::UsageError;
};

// A failure at run time that is not the user's input (driver, device, I/O): exit status 1.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace varex
