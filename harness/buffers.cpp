#include "harness/buffers.hpp"

#include <algorithm>
#include <cstdlib>

#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::harness {

PageableHostBuffer::PageableHostBuffer(std::size_t bytes) : bytes_(bytes) {
  ptr_ = std::aligned_alloc(4096, (std::max<std::size_t>(bytes, 1) + 4095) / 4096 * 4096);
  if (!ptr_) throw RuntimeError("cannot allocate " + format_bytes(bytes) + " of host memory");
}

PageableHostBuffer::~PageableHostBuffer() {
  std::free(ptr_);
}

}  // namespace varex::harness
