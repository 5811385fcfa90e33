#pragma once
// NVRTC, loaded at run time with dlopen like the driver (cuda_driver.hpp), so that a binary or the runtime
// library starts, and runs its OpenCL devices, on a machine without the CUDA toolkit. The members are named
// after NVRTC's functions, so calls read like the plain API.
#include <nvrtc.h>

#include <string>

namespace varex::harness {

struct NvrtcLibrary {
// clang-format off
#define VAREX_NVRTC_FUNCTIONS(X)                                                                           \
  X(nvrtcGetErrorString) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs) X(nvrtcCreateProgram)      \
  X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog)            \
  X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetPTXSize) X(nvrtcGetPTX)
// clang-format on
#define VAREX_NVRTC_MEMBER(fn) decltype(&::fn) fn = nullptr;
  VAREX_NVRTC_FUNCTIONS(VAREX_NVRTC_MEMBER)
#undef VAREX_NVRTC_MEMBER

  // The loaded library, or nullptr when none loads: $VAREX_NVRTC_LIBRARY where set, else NVRTC of the major
  // version varex was built with by its name (the loader's paths), else the file the build found.
  static const NvrtcLibrary* get();
  // Where it was looked for, for the error of a compile without it.
  static std::string searched();
};

}  // namespace varex::harness
