#include "harness/kernel_source.hpp"

#include <map>
#include <mutex>
#include <stdexcept>

#include "base/hash.hpp"

namespace varex::harness {

const KernelSource& kernel_source(Backend backend, std::string_view family) {
  static std::mutex mutex;
  static std::map<std::string, KernelSource> sources;
  const std::string name = backend == Backend::Cuda ? "cuda/" + std::string(family) + ".cu"
                                                    : "opencl/" + std::string(family) + ".cl";
  std::lock_guard lock(mutex);
  if (const auto it = sources.find(name); it != sources.end()) return it->second;
  for (std::size_t i = 0; i < embedded::kFileCount; ++i) {
    if (name == embedded::kFiles[i].name) {
      const std::string_view text = embedded::kFiles[i].text;
      return sources.emplace(name, KernelSource{name, text, hex64(fnv1a(text))}).first->second;
    }
  }
  throw std::logic_error("no kernel source " + name + " was embedded");
}

}  // namespace varex::harness
