#pragma once
// The CUDA driver API, loaded at run time with dlopen so that the binary starts (and reports zero CUDA
// devices) on machines without an NVIDIA driver. cuda.h maps versioned entry points (cuMemAlloc ->
// cuMemAlloc_v2); the members below are named after the same macros, so calls read like the plain API.
#include <cuda.h>

#include <string>

namespace varex::harness {

struct CudaDriver {
// clang-format off
#define VAREX_CUDA_FUNCTIONS(X)                                                                            \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)                    \
  X(cuDeviceGetUuid) X(cuDeviceGetPCIBusId) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                    \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxGetDevice)                                \
  X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)       \
  X(cuMemAlloc) X(cuMemFree) X(cuMemHostAlloc) X(cuMemHostGetDevicePointer) X(cuMemFreeHost)               \
  X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemsetD32Async)                      \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)                                             \
  X(cuFuncGetAttribute) X(cuLaunchKernel) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)              \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuGetErrorName) X(cuGetErrorString)
// clang-format on
#define VAREX_CUDA_MEMBER(fn) decltype(&::fn) fn = nullptr;
  VAREX_CUDA_FUNCTIONS(VAREX_CUDA_MEMBER)
#undef VAREX_CUDA_MEMBER

  // The loaded and initialised driver, or nullptr when there is none (no library, or cuInit fails).
  static const CudaDriver* get();
  std::string describe(CUresult code) const;
};

}  // namespace varex::harness
