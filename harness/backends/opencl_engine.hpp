#pragma once
#include <memory>
#include <vector>

#include "harness/engine.hpp"

namespace varex::harness {

std::vector<DeviceInfo> enumerate_opencl_devices();
std::unique_ptr<Engine> open_opencl_engine(const DeviceInfo& device);
// An engine on an application's own OpenCL objects (cl_context, cl_device_id, cl_command_queue, retained
// while the engine lives): kernels run on that queue, on buffers of that context. Throws RuntimeError when
// the device is not among the platforms' devices or the queue is not of that context and device.
std::unique_ptr<Engine> attach_opencl_engine(void* context, void* device, void* queue);

}  // namespace varex::harness
