#pragma once
// Kernel sources, embedded into the binary at build time (cmake/embed_kernels.cmake).
#include <cstddef>
#include <string>
#include <string_view>

#include "base/device.hpp"
#include "base/embedded.hpp"

namespace varex::harness {

namespace embedded {
extern const EmbeddedFile kFiles[];
extern const std::size_t kFileCount;
}  // namespace embedded

struct KernelSource {
  std::string name;  // "opencl/selection.cl"
  std::string_view text;
  std::string hash;  // stable hash of the text: part of every variant id and compile key
};

// The source of one operator family for a backend: "selection" -> opencl/selection.cl or
// cuda/selection.cu. Throws std::logic_error if the family has no source for that backend.
const KernelSource& kernel_source(Backend backend, std::string_view family);

}  // namespace varex::harness
