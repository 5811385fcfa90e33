#include "harness/backends/vendor_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace varex::harness {

namespace {

const varex_vendor_table* load_vendor_table() {
#if VAREX_HAVE_VENDOR
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("VAREX_VENDOR_LIBRARY")) candidates.emplace_back(path);
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    candidates.push_back((exe.parent_path() / "libvarex_cub.so").string());
    candidates.push_back((exe.parent_path().parent_path() / "libvarex_cub.so").string());  // build/tests
    candidates.push_back((exe.parent_path().parent_path() / "lib" / "libvarex_cub.so").string());
  }
  // Beside the binary or library this code is linked into: the runtime library (lib/libvarex_runtime.so)
  // finds lib/libvarex_cub.so inside an application whose executable is elsewhere.
  Dl_info self{};
  if (dladdr(reinterpret_cast<const void*>(&load), &self) && self.dli_fname) {
    const std::filesystem::path here = std::filesystem::absolute(self.dli_fname, error);
    if (!error) candidates.push_back((here.parent_path() / "libvarex_cub.so").string());
  }
  for (const std::string& path : candidates) {
    if (!std::filesystem::exists(path)) continue;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) continue;
    const auto entry = reinterpret_cast<const varex_vendor_table* (*)()>(dlsym(handle, "varex_vendor"));
    const varex_vendor_table* table = entry ? entry() : nullptr;
    if (table && table->abi == VAREX_VENDOR_ABI) return table;  // kept loaded for the process's life
    dlclose(handle);
  }
#endif
  return nullptr;
}

}  // namespace

const varex_vendor_table* vendor_library() {
  static const varex_vendor_table* const table = load_vendor_table();
  return table;
}

bool has_vendor_library(const DeviceInfo& device) {
  return device.backend == Backend::Cuda && vendor_library() != nullptr;
}

}  // namespace varex::harness
