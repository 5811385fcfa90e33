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
  bool cache_declared = false;    // cache_bytes set by the user (VAREX_LLC_BYTES), not reported
  std::uint64_t max_work_group = 0;
  std::string pci;   // PCI address "dddd:bb:dd.f" where the backend says, else empty
  std::string uuid;  // device UUID (CUDA, cl_khr_device_uuid) where the backend says, else empty
  // The physical device this (backend) view belongs to; the OpenCL and the CUDA view of one GPU share it.
  // Set by assign_physical_identities(): "pci dddd:bb:dd.f", else "uuid …", else the fallback "index K"
  // (the K-th device of this backend, platform and name). Empty only for devices recorded before varex
  // told identical devices apart (schema version 4).
  std::string physical;
  // How many devices of this machine the identity before schema version 4 could not tell apart from this
  // one (itself included): the store adopts an old device row only when this is 1.
  int twins = 1;
  std::string host;  // machine the device was found on

  // Identity that is stable across runs and distinguishes machines and physical devices when databases
  // are merged: the model key, the host and the physical identity.
  std::string uid() const;
  // The identity before schema version 4 (no physical part), which two identical devices shared.
  std::string legacy_uid() const;
  // What profiles match on: the same model through the same backend and driver, on any host.
  std::string model_key() const;

  nlohmann::json to_json() const;
  static DeviceInfo from_json(const nlohmann::json& j);
};

// Resolves a selector: "all", "cpu", "gpu", "accelerator", "opencl", "cuda", a device id ("ocl:0:0",
// "cuda:1"), an id on a host ("cuda:1@node7", as `varex best` prints it), or a comma list of these. The
// result keeps the order of `devices` and has no duplicates. Throws UsageError when a term is malformed,
// names a device that does not exist, or when nothing matches; `where` ends that message ("on this
// machine", "in varex.db").
std::vector<DeviceInfo> select_devices(const std::vector<DeviceInfo>& devices, std::string_view selector,
                                       std::string_view where = "on this machine");
// The devices `selector` matches, none included (a selector for devices another machine has); UsageError only
// for a selector that is not one.
std::vector<DeviceInfo> devices_matching(const std::vector<DeviceInfo>& devices, std::string_view selector);

std::string host_name();

// Fills `physical` (and `twins`) for every device of one machine: views that share a PCI address or a UUID
// are one physical device; a device with neither gets the documented fallback (its index among the devices
// of its backend, platform and name), so two identical devices stay two.
void assign_physical_identities(std::vector<DeviceInfo>& devices);

// "dddd:bb:dd.f" in lower-case hex, the form every backend's PCI address is brought to.
std::string format_pci(unsigned domain, unsigned bus, unsigned device, unsigned function);
// Parses a PCI address as drivers print it ("0000:3B:00.0", "00000000:3b:00.0", "3b:00.0") into
// format_pci's form; empty when it is not one.
std::string normalize_pci(std::string_view text);
// 16 bytes as "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; empty if all zero (a backend that knows none).
std::string format_uuid(const unsigned char (&bytes)[16]);

}  // namespace varex
