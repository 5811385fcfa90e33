// The list of backends built into this binary.
#include "harness/backends/opencl_engine.hpp"
#include "harness/engine.hpp"
#include "harness/errors.hpp"
#ifdef VAREX_HAVE_CUDA
#include "harness/backends/cuda_engine.hpp"
#endif

namespace varex::harness {

std::vector<DeviceInfo> enumerate_devices() {
  std::vector<DeviceInfo> out = enumerate_opencl_devices();
#ifdef VAREX_HAVE_CUDA
  for (DeviceInfo& d : enumerate_cuda_devices()) out.push_back(std::move(d));
#endif
  return out;
}

std::unique_ptr<Engine> open_engine(const DeviceInfo& device) {
  if (device.backend == Backend::OpenCL) return open_opencl_engine(device);
#ifdef VAREX_HAVE_CUDA
  return open_cuda_engine(device);
#else
  throw UsageError("this varex was built without the CUDA backend; cannot open " + device.id);
#endif
}

}  // namespace varex::harness
