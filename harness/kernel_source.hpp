#pragma once
// Kernel sources, embedded into the binary at build time (cmake/embed_files.cmake).
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
  std::string name;  // "selection.cl"
  std::string text;  // with every `#include "…"` of an embedded file replaced by that file, once
  std::string hash;  // stable hash of the text: part of every variant id and compile key
};

// The source of one operator family: "selection" -> kernels/selection.cl, one source that both backends
// compile through kernels/common/portable.h. Throws std::logic_error if the family has no source.
const KernelSource& kernel_source(Backend backend, std::string_view family);

// A family whose source is not embedded (a user operator's kernel, read from its directory): kernel_source()
// returns it from now on. With `file`, the text carries #line markers, so that a compiler's error names that
// file and its line. std::logic_error for an include that is not embedded or a family that is there already.
const KernelSource& add_kernel_source(std::string_view family, std::string_view text,
                                      const std::string& file = {});

// `text` with its `#include "name"` lines replaced by the embedded files they name (each at most once,
// as if every header had an include guard). Throws std::logic_error for an include that is not embedded.
std::string resolve_includes(std::string_view text);

}  // namespace varex::harness
