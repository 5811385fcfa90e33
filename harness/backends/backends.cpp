// The list of backends built into this binary.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/errors.hpp"
#include "harness/backends/opencl_engine.hpp"
#include "harness/engine.hpp"
#ifdef VAREX_HAVE_CUDA
#include "harness/backends/cuda_engine.hpp"
#endif

namespace varex::harness {

std::vector<DeviceInfo> enumerate_devices() {
  std::vector<DeviceInfo> out = enumerate_opencl_devices();
#ifdef VAREX_HAVE_CUDA
  const std::vector<DeviceInfo> cuda = enumerate_cuda_devices();
  out.insert(out.end(), cuda.begin(), cuda.end());
#endif
  assign_physical_identities(out);
  // NVIDIA's OpenCL reports a few MiB of "global memory cache" where the GPU has tens of MiB of L2; the
  // cache flush must know the real size, so take it from the same GPU's CUDA view.
  for (DeviceInfo& o : out) {
    for (const DeviceInfo& c : out) {
      if (o.backend == Backend::OpenCL && c.backend == Backend::Cuda && o.physical == c.physical)
        o.cache_bytes = std::max(o.cache_bytes, c.cache_bytes);
    }
  }
  // A virtual machine may report its host's last-level cache (a 2-core VM: 260 MiB), which sizes every cache
  // flush and the bandwidth probe: VAREX_LLC_BYTES sets the size to assume for every device.
  if (const char* llc = std::getenv("VAREX_LLC_BYTES")) {
    // Digits only: strtoull alone takes "-5" as 2^64 - 5 and saturates past 2^64, and either sizes a flush
    // buffer no machine has. 1 TiB is far above any cache.
    constexpr unsigned long long kMaxCacheBytes = 1ull << 40;
    const std::string_view text(llc);
    const bool digits = !text.empty() && text.size() <= 13 &&
                        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    const unsigned long long bytes = digits ? std::strtoull(llc, nullptr, 10) : 0;
    if (bytes == 0 || bytes > kMaxCacheBytes)
      throw UsageError(std::string("VAREX_LLC_BYTES=") + llc +
                       ": not a positive number of bytes (at most 2^40)");
    for (DeviceInfo& d : out) {
      d.cache_bytes = bytes;
      d.cache_declared = true;
    }
  }
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

bool offers_mapped_memory(const DeviceInfo& device) {
  return device.backend == Backend::Cuda || device.type == "cpu";
}

}  // namespace varex::harness
