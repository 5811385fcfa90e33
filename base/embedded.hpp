#pragma once
// Files compiled into the binary by cmake/embed_files.cmake (kernel sources, the report script), so that a
// build carried to another machine needs no source tree.
#include <cstddef>

namespace varex {

struct EmbeddedFile {
  const char* name;  // path below the embedding root, e.g. "opencl/selection.cl"
  const char* text;
};

}  // namespace varex
