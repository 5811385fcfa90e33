#pragma once
#include <memory>
#include <vector>

#include "harness/engine.hpp"

namespace varex::harness {

// Empty when there is no NVIDIA driver: that is a machine without CUDA devices, not an error.
std::vector<DeviceInfo> enumerate_cuda_devices();
std::unique_ptr<Engine> open_cuda_engine(const DeviceInfo& device);
// An engine on an application's own CUDA context and stream (CUcontext, CUstream; a null stream is the
// context's default stream): neither is destroyed with the engine. Throws RuntimeError without a driver.
std::unique_ptr<Engine> attach_cuda_engine(void* context, void* stream);

// NVRTC alone (no driver, no GPU): compiles `source` for compute capability `arch` ("sm_90") and
// returns the size of the machine code. Lets the tests check every CUDA kernel variant on machines
// without a GPU. Throws CompileError.
std::size_t compile_cuda_offline(const KernelSource& source, const Defines& defines, const std::string& arch);

}  // namespace varex::harness
