#pragma once
// What varex knows about a device, and the selectors that pick devices on the command line.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace varex {

enum class Backend { OpenCL, Cuda };
std::string to_string(Backend backend);
Backend backend_from_string(std::string_view name);

struct DeviceInfo {
  std::string id;  // "ocl:P:D" (OpenCL platform P, device D) or "cuda:N"; valid on this machine only
  Backend backend = Backend::OpenCL;
  std::string name;
  std::string vendor;
  std::string platform;  // OpenCL platform name, "CUDA" for the CUDA backend
  std::string driver;    // driver version string
  std::string type;      // "cpu", "gpu" or "accelerator"
  std::string arch;      // architecture key: "sm_90" for NVIDIA devices, the OpenCL device version otherwise
  std::uint32_t compute_units = 0;
  std::uint64_t global_mem = 0;
  std::uint64_t max_alloc = 0;    // largest single buffer
  std::uint64_t local_mem = 0;    // per work-group (shared memory per block)
  std::uint64_t cache_bytes = 0;  // last-level cache the device reports (0 if unknown)
  std::uint64_t max_work_group = 0;
  int pci_bus = -1;  // PCI bus of the device where the backend says (-1 if unknown)
  std::string host;  // machine the device was found on

  // Identity that is stable across runs and distinguishes machines when databases are merged.
  std::string uid() const;

  nlohmann::json to_json() const;
  static DeviceInfo from_json(const nlohmann::json& j);
};

// Resolves a selector: "all", "cpu", "gpu", "accelerator", "opencl", "cuda", a device id, or a comma
// list of these. The result keeps enumeration order and has no duplicates. Throws UsageError when a term
// is malformed, names a device that does not exist, or when nothing matches.
std::vector<DeviceInfo> select_devices(const std::vector<DeviceInfo>& devices, std::string_view selector);

std::string host_name();

}  // namespace varex
