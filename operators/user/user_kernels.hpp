#pragma once
// A user operator's kernels, whatever workload they run on (its own inputs, or a built-in operator's buffers
// through its contract): the space the declaration gives, a variant decoded once into defines, launch shapes
// and scalar arguments, and the kernels launched in order on the run's buffers by name.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/kernel_source.hpp"
#include "operators/common/toolkit.hpp"
#include "operators/user/declaration.hpp"

namespace varex::operators::user {

// Registers the declaration's source under "user/NAME" (its kernel family); UsageError where an include does
// not resolve.
std::string add_user_source(const Declaration& d);

// The tunables and constraints of the declaration. The constraints read `d`, which must outlive them. On a
// device that cannot compile the declaration's language (CUDA C++ on OpenCL) a constraint no variant
// meets; the generic device (no id: the space's shape for --set and the store) takes every variant.
std::vector<variants::Tunable> user_tunables(const Declaration& d);
std::vector<variants::Constraint> user_constraints(const Declaration& d, const DeviceInfo& device);
// Why the declaration's kernels cannot run on `device`; empty where they can.
std::string language_refusal(const Declaration& d, const DeviceInfo& device);

// The tunables' values of a variant (their defaults without one), in the declaration's order.
std::vector<Value> tunable_values(const Declaration& d, const variants::Params* params);
// A compile-time tunable is a define of its own name; then the declaration's derived defines.
Defines user_defines(const Declaration& d, const variants::Params& params);

// A variant decoded once on a workload (the values of its names, Declaration::workload_names): its defines,
// each kernel's launch shape and scalar arguments, and each scratch buffer's elements. A variant whose
// geometry or arguments cannot be computed (a division by zero, a value out of its type's range) fails to
// launch: one failed measurement, and the session goes on.
struct UserVariant {
  UserVariant(const Declaration& d, const variants::Params& params, const std::vector<Value>& workload);
  struct Launch {
    LaunchShape shape;
    std::vector<KernelArg> scalars;  // per argument; a buffer's is filled in at the launch
  };
  Defines defines;
  std::vector<Launch> launches;        // per kernel
  std::vector<std::uint64_t> scratch;  // elements per scratch buffer
};

// A buffer set to a 32-bit word before the kernels run (timed with them).
struct Clear {
  DeviceBuffer* buffer;
  std::uint32_t word;
  std::uint64_t bytes;
};

// The user's kernels on one prepared run: its scratch buffers (grown to what a variant needs, kept between
// executions), the program from the engine's cache by its defines, and the kernels in order.
class UserKernels {
 public:
  UserKernels(Engine& engine, const Declaration& d, std::string family)
      : engine_(engine), d_(d), family_(std::move(family)) {}
  CompileInfo compile(const Defines& defines);
  // Clears `clears` and the scratch buffers that declare a word, then runs the kernels on `buffers` (each
  // argument's buffer by name; the scratch buffers are these kernels' own).
  ExecutionTimes execute(const UserVariant& variant, const std::map<std::string, DeviceBuffer*>& buffers,
                         const std::vector<Clear>& clears);
  std::uint64_t scratch_bytes() const;

 private:
  const harness::KernelSource& source() const;
  Engine& engine_;
  const Declaration& d_;
  std::string family_;
  std::vector<std::unique_ptr<DeviceBuffer>> scratch_;  // per scratch buffer; null until first needed
};

}  // namespace varex::operators::user
