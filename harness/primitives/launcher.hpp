#pragma once
// How the host blocks of the shared device primitives (kernels/common/) enqueue their work: through a
// Launcher, so that an operator runs them inside its own program and kernel sequence (its timings, its
// labels), and a standalone user on kernels/primitives.cl with per-kernel timings.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/measurement.hpp"
#include "harness/engine.hpp"

namespace varex::harness::primitives {

using Timings = std::vector<KernelTiming>;

struct Launcher {
  // Enqueues `kernel` of the program that holds the primitive's kernels. A launch of no work-items is
  // the launcher's to skip.
  std::function<void(const std::string& kernel, const LaunchShape& shape, const std::vector<KernelArg>& args)>
      launch;
  // Fills the first `bytes` of a buffer with a 32-bit pattern.
  std::function<void(DeviceBuffer& buffer, std::uint32_t pattern, std::size_t bytes)> fill;
};

// Launches on `program` through `engine`, waiting for each launch and adding its device time to `timings`
// under the kernel's name ("fill" for fills). Skips launches of no work-items and fills of no bytes.
Launcher timed(Engine& engine, const Program& program, Timings& timings);

// kernels/primitives.cl compiled for `engine` with `defines` (cached by the engine).
const Program& primitives_program(Engine& engine, const Defines& defines);

}  // namespace varex::harness::primitives
