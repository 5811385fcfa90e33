#pragma once
// Device buffers released by their users and kept for the next allocation of about their size: a caching
// allocator, as CUB's CachingDeviceAllocator or RMM's pool. The runtime library binds an operator anew at
// every call, so without it each call would allocate its scratch and result arrays again (cuMemAlloc and
// cuMemFree of large arrays take milliseconds, and cuMemFree waits for the device) and its kernels would
// meet fresh addresses each time. Reuse is safe for work on one in-order queue or stream, the engine's.
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "harness/buffers.hpp"

namespace varex::harness {

class BufferPool {
 public:
  // Keeps at most `max_cached_bytes` of released buffers; a buffer released beyond that is freed.
  explicit BufferPool(std::size_t max_cached_bytes) : max_cached_(max_cached_bytes) {}

  // The smallest kept buffer of at least `bytes` and at most a quarter more (a larger one would hold memory
  // the call does not use), taken out of the pool; null when there is none.
  std::unique_ptr<DeviceBuffer> take(std::size_t bytes);
  // Keeps `buffer` for a later take(), or frees it where the pool is full.
  void give(std::unique_ptr<DeviceBuffer> buffer);
  // Frees every kept buffer.
  void clear();
  std::size_t cached_bytes() const;

 private:
  mutable std::mutex mutex_;
  std::multimap<std::size_t, std::unique_ptr<DeviceBuffer>> free_;  // by capacity
  std::size_t cached_ = 0;
  std::size_t max_cached_;
};

}  // namespace varex::harness
