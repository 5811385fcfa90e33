#include "harness/backends/cuda_driver.hpp"

#include <dlfcn.h>

namespace varex::harness {

namespace {

#define VAREX_STRINGIFY2(x) #x
#define VAREX_STRINGIFY(x) VAREX_STRINGIFY2(x)

const CudaDriver* load() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) return nullptr;
  static CudaDriver driver;
  bool complete = true;
  // Try the versioned name cuda.h maps to first, then the plain one that older drivers export.
#define VAREX_CUDA_LOAD(fn)                                    \
  {                                                            \
    void* symbol = dlsym(library, VAREX_STRINGIFY(fn));        \
    if (!symbol) symbol = dlsym(library, #fn);                 \
    driver.fn = reinterpret_cast<decltype(driver.fn)>(symbol); \
    complete = complete && symbol != nullptr;                  \
  }
  VAREX_CUDA_FUNCTIONS(VAREX_CUDA_LOAD)
#undef VAREX_CUDA_LOAD
  if (!complete || driver.cuInit(0) != CUDA_SUCCESS) return nullptr;
  return &driver;
}

}  // namespace

const CudaDriver* CudaDriver::get() {
  static const CudaDriver* driver = load();
  return driver;
}

std::string CudaDriver::describe(CUresult code) const {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(code, &name);
  cuGetErrorString(code, &text);
  return std::string(name ? name : "CUDA_ERROR") + " (" + (text ? text : "unknown") + ")";
}

}  // namespace varex::harness
