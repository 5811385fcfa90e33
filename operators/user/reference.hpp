#pragma once
// A user operator's reference (docs/USER-OPERATORS.md says how each is called): a command of the user's that
// reads the workload's inputs from files and writes the outputs the kernels must produce, or a function of
// the user's shared library called with the inputs' and outputs' host memory. It shares no code with the
// device path: varex only hands it the inputs and compares what it wrote.
#include <cstdint>
#include <vector>

#include "base/workload.hpp"
#include "operators/user/declaration.hpp"

namespace varex::operators::user {

// The outputs d.reference computes from `inputs` (inputs[i] for d.inputs[i], 32-bit words), one vector per
// d.outputs entry, holding output_elements[o] words. `workload`: the values of d.workload_names for spec.
// UsageError (one line) where the command cannot run, fails or writes another number of bytes, or the library
// or its function cannot be loaded, or the function returns non-zero.
std::vector<std::vector<std::uint32_t>> reference_outputs(
    const Declaration& d, const std::vector<std::vector<std::uint32_t>>& inputs,
    const datasets::WorkloadSpec& spec, const std::vector<Value>& workload,
    const std::vector<std::uint64_t>& output_elements);

}  // namespace varex::operators::user
