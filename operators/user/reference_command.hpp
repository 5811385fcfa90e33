#pragma once
// A user operator's reference: a command of the user's that reads the workload's inputs and writes the
// output the kernel must produce (docs/USER-OPERATORS.md says how it is called). It shares no code with the
// device path: varex only generates the inputs it reads and compares what it writes.
#include <cstdint>
#include <vector>

#include "base/workload.hpp"
#include "operators/user/declaration.hpp"

namespace varex::operators::user {

// Runs d.reference_command in a fresh directory with the inputs (`inputs[i]` for d.inputs[i], 32-bit words)
// as little-endian files, and returns the `output_elements` words it wrote. UsageError (one line) where the
// command cannot run, fails, or writes another number of bytes.
std::vector<std::uint32_t> reference_output(const Declaration& d,
                                            const std::vector<std::vector<std::uint32_t>>& inputs,
                                            const datasets::WorkloadSpec& spec,
                                            std::uint64_t output_elements);

}  // namespace varex::operators::user
