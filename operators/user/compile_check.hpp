#pragma once
// A user's kernel that does not compile is a bad declaration, not a failed measurement: before a command
// measures a user operator, its default variant (within the pins) is compiled on each device, and a compiler
// error becomes one line naming the user's file and line (UsageError, exit status 2). Variants that fail to
// compile only at other settings stay failed measurements, and the session goes on.
#include <map>
#include <string>

#include "base/device.hpp"
#include "base/workload.hpp"
#include "harness/operators/operator.hpp"
#include "variants/space.hpp"

namespace varex::operators::user {

// Whether `op` is a user operator (its kernels come from a directory).
bool is_user_operator(const harness::Operator& op);

// The first line of a compiler's message that reports an error (it names the file and line, as
// "my.cl:12:3: error: …" or "my.cu(12): error: …"), else its first line.
std::string first_compiler_error(const std::string& message);

// For a user operator: compiles the user's variant that a session on `device` starts with (the defaults
// with `pins` applied; nothing where that is not valid or not the user's). UsageError on a compile error.
void check_default_compiles(const harness::Operator& op, const DeviceInfo& device,
                            const datasets::WorkloadSpec& spec,
                            const std::map<std::string, std::string>& pins);

}  // namespace varex::operators::user
