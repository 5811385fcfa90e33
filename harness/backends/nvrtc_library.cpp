#include "harness/backends/nvrtc_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace varex::harness {

namespace {

std::vector<std::string> nvrtc_candidates() {
  if (const char* chosen = std::getenv("VAREX_NVRTC_LIBRARY"); chosen && *chosen) return {chosen};
  std::vector<std::string> names{VAREX_NVRTC_SONAME, "libnvrtc.so"};
#ifdef VAREX_NVRTC_BUILD_PATH
  names.emplace_back(VAREX_NVRTC_BUILD_PATH);
#endif
  return names;
}

const NvrtcLibrary* load_nvrtc() {
  void* library = nullptr;
  for (const std::string& name : nvrtc_candidates()) {
    if ((library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
  }
  if (!library) return nullptr;
  static NvrtcLibrary nvrtc;
  bool complete = true;
#define VAREX_NVRTC_LOAD(fn)                                 \
  {                                                          \
    void* symbol = dlsym(library, #fn);                      \
    nvrtc.fn = reinterpret_cast<decltype(nvrtc.fn)>(symbol); \
    complete = complete && symbol != nullptr;                \
  }
  VAREX_NVRTC_FUNCTIONS(VAREX_NVRTC_LOAD)
#undef VAREX_NVRTC_LOAD
  return complete ? &nvrtc : nullptr;
}

}  // namespace

const NvrtcLibrary* NvrtcLibrary::get() {
  static const NvrtcLibrary* nvrtc = load_nvrtc();
  return nvrtc;
}

std::string NvrtcLibrary::searched() {
  std::string out;
  for (const std::string& name : nvrtc_candidates()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace varex::harness
