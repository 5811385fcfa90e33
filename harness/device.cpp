#include "harness/device.hpp"

#include <unistd.h>

#include <algorithm>

#include "harness/errors.hpp"
#include "harness/text.hpp"

namespace varex {

std::string to_string(Backend backend) {
  return backend == Backend::Cuda ? "cuda" : "opencl";
}

Backend backend_from_string(std::string_view name) {
  if (name == "cuda") return Backend::Cuda;
  if (name == "opencl") return Backend::OpenCL;
  throw UsageError("unknown backend '" + std::string(name) + "' (opencl or cuda)");
}

std::string DeviceInfo::uid() const {
  return to_string(backend) + "|" + platform + "|" + name + "|" + driver + "|" + host;
}

nlohmann::json DeviceInfo::to_json() const {
  return {{"id", id},
          {"backend", to_string(backend)},
          {"name", name},
          {"vendor", vendor},
          {"platform", platform},
          {"driver", driver},
          {"type", type},
          {"arch", arch},
          {"compute_units", compute_units},
          {"global_mem", global_mem},
          {"max_alloc", max_alloc},
          {"local_mem", local_mem},
          {"cache_bytes", cache_bytes},
          {"max_work_group", max_work_group},
          {"pci_bus", pci_bus},
          {"host", host}};
}

DeviceInfo DeviceInfo::from_json(const nlohmann::json& j) {
  DeviceInfo d;
  d.id = j.at("id").get<std::string>();
  d.backend = backend_from_string(j.at("backend").get<std::string>());
  d.name = j.value("name", "");
  d.vendor = j.value("vendor", "");
  d.platform = j.value("platform", "");
  d.driver = j.value("driver", "");
  d.type = j.value("type", "");
  d.arch = j.value("arch", "");
  d.compute_units = j.value("compute_units", 0u);
  d.global_mem = j.value("global_mem", std::uint64_t{0});
  d.max_alloc = j.value("max_alloc", std::uint64_t{0});
  d.local_mem = j.value("local_mem", std::uint64_t{0});
  d.cache_bytes = j.value("cache_bytes", std::uint64_t{0});
  d.max_work_group = j.value("max_work_group", std::uint64_t{0});
  d.pci_bus = j.value("pci_bus", -1);
  d.host = j.value("host", "");
  return d;
}

namespace {

bool is_device_id(std::string_view term) {
  auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (term.rfind("cuda:", 0) == 0) return digits(term.substr(5));
  if (term.rfind("ocl:", 0) == 0) {
    const auto parts = split(term.substr(4), ':');
    return parts.size() == 2 && digits(parts[0]) && digits(parts[1]);
  }
  return false;
}

std::string available(const std::vector<DeviceInfo>& devices) {
  if (devices.empty()) return "no devices were found";
  std::vector<std::string> ids;
  for (const auto& d : devices) ids.push_back(d.id);
  return "devices: " + join(ids, ", ");
}

}  // namespace

std::vector<DeviceInfo> select_devices(const std::vector<DeviceInfo>& devices, std::string_view selector) {
  std::vector<bool> chosen(devices.size(), false);
  const auto terms = split(selector, ',');
  for (const std::string& raw : terms) {
    const std::string term(trim(raw));
    bool keyword = true;
    auto matches = [&](const DeviceInfo& d) {
      if (term == "all") return true;
      if (term == "cpu" || term == "gpu" || term == "accelerator") return d.type == term;
      if (term == "opencl" || term == "cuda") return to_string(d.backend) == term;
      keyword = false;
      return d.id == term;
    };
    bool any = false;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (matches(devices[i])) chosen[i] = any = true;
    }
    if (devices.empty())
      keyword = term == "all" || term == "cpu" || term == "gpu" || term == "accelerator" ||
                term == "opencl" || term == "cuda";
    if (!keyword && !is_device_id(term)) {
      throw UsageError(
          "unknown device selector '" + term +
          "' (use all, cpu, gpu, opencl, cuda, an id such as ocl:0:0 or cuda:0, or a comma list)");
    }
    if (!any) {
      throw UsageError("no device matches '" + term + "' on this machine (" + available(devices) + ")");
    }
  }
  std::vector<DeviceInfo> out;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (chosen[i]) out.push_back(devices[i]);
  }
  return out;
}

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

}  // namespace varex
