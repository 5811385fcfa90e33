#include "harness/buffer_pool.hpp"

#include <utility>

namespace varex::harness {

std::unique_ptr<DeviceBuffer> BufferPool::take(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = free_.lower_bound(bytes);
  if (it == free_.end() || it->first > bytes + bytes / 4) return nullptr;
  std::unique_ptr<DeviceBuffer> buffer = std::move(it->second);
  cached_ -= it->first;
  free_.erase(it);
  return buffer;
}

void BufferPool::give(std::unique_ptr<DeviceBuffer> buffer) {
  const std::size_t bytes = buffer->bytes();
  std::lock_guard<std::mutex> lock(mutex_);
  if (cached_ + bytes > max_cached_) return;  // freed here
  cached_ += bytes;
  free_.emplace(bytes, std::move(buffer));
}

void BufferPool::clear() {
  std::multimap<std::size_t, std::unique_ptr<DeviceBuffer>> freed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    freed.swap(free_);
    cached_ = 0;
  }
}

std::size_t BufferPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_;
}

}  // namespace varex::harness
