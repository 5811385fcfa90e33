#include "harness/engine.hpp"

#include <algorithm>
#include <chrono>

namespace varex::harness {

std::string to_string(const Defines& defines) {
  std::string out;
  for (const Define& d : defines) out += " -D" + d.name + "=" + d.value;
  return out;
}

const Program& Engine::compile(const KernelSource& source, const Defines& defines, CompileInfo* info) {
  const std::string key = source.hash + to_string(defines);
  if (const auto it = programs_.find(key); it != programs_.end()) {
    if (info) *info = {0.0, true};
    return *it->second;
  }
  // Building is synchronous host work, so a host clock measures it correctly.
  const auto start = std::chrono::steady_clock::now();
  auto program = build(source, defines);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (info) *info = {ms, false};
  return *programs_.emplace(key, std::move(program)).first->second;
}

void Engine::flush_cache() {
  if (!flush_buffer_) flush_buffer_ = allocate(std::max<std::uint64_t>(2 * device().cache_bytes, 1 << 20));
  fill(*flush_buffer_, ++flush_count_, 0, flush_buffer_->bytes())->elapsed_ms();
}

}  // namespace varex::harness
