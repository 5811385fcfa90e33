#pragma once
// Shared fixtures: the OpenCL CPU device (PoCL), scratch files and running the varex binary.
#include <string>
#include <vector>

#include "harness/device.hpp"
#include "harness/engine.hpp"

namespace varex::test {

// The first OpenCL CPU device; the test fails (not skips) without one, since CI installs PoCL.
const DeviceInfo& cpu_device();
harness::Engine& cpu_engine();

// A fresh directory under the test's temporary root.
std::string scratch_dir(const std::string& name);

struct CommandResult {
  int status = -1;
  std::string out;
  std::string err;
};
// Runs the varex binary with `args` (no shell), capturing its output.
CommandResult run_varex(const std::vector<std::string>& args);

// Starts the varex binary in the background; `finish` waits for it.
struct Background {
  int pid = -1;
  std::string out_path, err_path;
  CommandResult finish();
};
Background start_varex(const std::vector<std::string>& args);

}  // namespace varex::test
