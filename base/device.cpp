#include "base/device.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>

#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex {

std::string to_string(Backend backend) {
  return backend == Backend::Cuda ? "cuda" : "opencl";
}

Backend backend_from_string(std::string_view name) {
  if (name == "cuda") return Backend::Cuda;
  if (name == "opencl") return Backend::OpenCL;
  throw UsageError("unknown backend '" + std::string(name) + "' (opencl or cuda)");
}

std::string DeviceInfo::legacy_uid() const {
  return to_string(backend) + "|" + platform + "|" + name + "|" + driver + "|" + host;
}

std::string DeviceInfo::uid() const {
  return physical.empty() ? legacy_uid() : legacy_uid() + "|" + physical;
}

std::string DeviceInfo::model_key() const {
  return to_string(backend) + "|" + vendor + "|" + name + "|" + arch + "|" + driver;
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
          {"cache_declared", cache_declared},
          {"max_work_group", max_work_group},
          {"pci", pci},
          {"uuid", uuid},
          {"physical", physical},
          {"twins", twins},
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
  d.cache_declared = j.value("cache_declared", false);
  d.max_work_group = j.value("max_work_group", std::uint64_t{0});
  d.pci = j.value("pci", "");
  d.uuid = j.value("uuid", "");
  d.physical = j.value("physical", "");
  d.twins = j.value("twins", 1);
  d.host = j.value("host", "");
  return d;
}

namespace {

bool is_device_id(std::string_view term) {
  if (const auto at = term.find('@'); at != std::string_view::npos) {
    return at + 1 < term.size() && is_device_id(term.substr(0, at));
  }
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

bool is_keyword(std::string_view term) {
  return term == "all" || term == "cpu" || term == "gpu" || term == "accelerator" || term == "opencl" ||
         term == "cuda";
}

std::string available(const std::vector<DeviceInfo>& devices) {
  if (devices.empty()) return "no devices were found";
  std::vector<std::string> ids;
  for (const auto& d : devices) {
    // Hosts only where the list spans several (a merged database).
    const bool hosts =
        std::any_of(devices.begin(), devices.end(), [&](const DeviceInfo& o) { return o.host != d.host; });
    const std::string id = hosts ? d.id + "@" + d.host : d.id;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return "devices: " + join(ids, ", ");
}

}  // namespace

namespace {

std::vector<DeviceInfo> match_devices(const std::vector<DeviceInfo>& devices, std::string_view selector,
                                      std::string_view where, bool each_term_matches) {
  std::vector<bool> chosen(devices.size(), false);
  for (const std::string& raw : split(selector, ',')) {
    const std::string term(trim(raw));
    if (!is_keyword(term) && !is_device_id(term)) {
      throw UsageError(
          "unknown device selector '" + term +
          "' (use all, cpu, gpu, opencl, cuda, an id such as ocl:0:0 or cuda:0, id@host, or a comma list)");
    }
    auto matches = [&](const DeviceInfo& d) {
      if (term == "all") return true;
      if (term == "cpu" || term == "gpu" || term == "accelerator") return d.type == term;
      if (term == "opencl" || term == "cuda") return to_string(d.backend) == term;
      if (const auto at = term.find('@'); at != std::string::npos)
        return d.id == term.substr(0, at) && d.host == term.substr(at + 1);
      return d.id == term;
    };
    bool any = false;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (matches(devices[i])) chosen[i] = any = true;
    }
    if (!any && each_term_matches) {
      throw UsageError("no device matches '" + term + "' " + std::string(where) + " (" + available(devices) +
                       ")");
    }
  }
  std::vector<DeviceInfo> out;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (chosen[i]) out.push_back(devices[i]);
  }
  return out;
}

}  // namespace

std::vector<DeviceInfo> select_devices(const std::vector<DeviceInfo>& devices, std::string_view selector,
                                       std::string_view where) {
  return match_devices(devices, selector, where, true);
}

std::vector<DeviceInfo> devices_matching(const std::vector<DeviceInfo>& devices, std::string_view selector) {
  return match_devices(devices, selector, "", false);
}

void assign_physical_identities(std::vector<DeviceInfo>& devices) {
  // A view that knows only the UUID takes the PCI address of a view with the same UUID.
  for (DeviceInfo& d : devices) {
    if (!d.pci.empty() || d.uuid.empty()) continue;
    for (const DeviceInfo& other : devices) {
      if (other.uuid == d.uuid && !other.pci.empty()) d.pci = other.pci;
    }
  }
  std::map<std::string, int> seen;
  for (DeviceInfo& d : devices) {
    if (!d.pci.empty()) {
      d.physical = "pci " + d.pci;
    } else if (!d.uuid.empty()) {
      d.physical = "uuid " + d.uuid;
    } else {
      d.physical = "index " + std::to_string(seen[to_string(d.backend) + "|" + d.platform + "|" + d.name]++);
    }
  }
  // One platform never shows one physical device twice, unless it was told to (PoCL with
  // POCL_DEVICES="pthread pthread" shows the host's CPU as two devices): such views stay apart.
  std::map<std::string, int> repeats;
  for (DeviceInfo& d : devices) {
    const int k = repeats[to_string(d.backend) + "|" + d.platform + "|" + d.physical]++;
    if (k > 0) d.physical += " #" + std::to_string(k);
  }
  for (DeviceInfo& d : devices) {
    d.twins = static_cast<int>(std::count_if(devices.begin(), devices.end(), [&](const DeviceInfo& o) {
      return o.legacy_uid() == d.legacy_uid();
    }));
  }
}

std::string format_pci(unsigned domain, unsigned bus, unsigned device, unsigned function) {
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", domain & 0xffffu, bus & 0xffu, device & 0x1fu,
                function & 0x7u);
  return text;
}

std::string normalize_pci(std::string_view text) {
  // [domain:]bus:device.function, each part hexadecimal.
  const auto dot = text.rfind('.');
  if (dot == std::string_view::npos) return "";
  auto parts = split(text.substr(0, dot), ':');
  if (parts.size() == 2) parts.insert(parts.begin(), "0");
  if (parts.size() != 3) return "";
  parts.push_back(std::string(text.substr(dot + 1)));
  unsigned values[4];
  for (int i = 0; i < 4; ++i) {
    const std::string& p = parts[i];
    if (p.empty() || p.size() > 8 || p.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
      return "";
    values[i] = static_cast<unsigned>(std::stoul(p, nullptr, 16));
  }
  return format_pci(values[0], values[1], values[2], values[3]);
}

std::string format_uuid(const unsigned char (&bytes)[16]) {
  if (std::all_of(std::begin(bytes), std::end(bytes), [](unsigned char b) { return b == 0; })) return "";
  std::string out;
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
    out += hex;
  }
  return out;
}

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

}  // namespace varex
