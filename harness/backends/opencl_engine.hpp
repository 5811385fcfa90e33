#pragma once
#include <memory>
#include <vector>

#include "harness/engine.hpp"

namespace varex::harness {

std::vector<DeviceInfo> enumerate_opencl_devices();
std::unique_ptr<Engine> open_opencl_engine(const DeviceInfo& device);

}  // namespace varex::harness
