#pragma once
// Device and host memory as the engines hand it out (harness/engine.hpp) and the buffer pool keeps it
// (harness/buffer_pool.hpp): the layer below both.
#include <cstddef>
#include <functional>

namespace varex::harness {

class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() {
    if (release_) release_();
  }
  virtual std::size_t bytes() const = 0;
  // Runs when the buffer is destroyed, after its backend let go of it: a pooled buffer (a view of a block of
  // the engine's BufferPool) gives its block back. Must not throw.
  void on_release(std::function<void()> release) { release_ = std::move(release); }

 private:
  std::function<void()> release_;
};

// Host memory that transfers at full speed (page-locked where the backend supports it).
class HostBuffer {
 public:
  virtual ~HostBuffer() = default;
  virtual void* data() = 0;
  virtual std::size_t bytes() const = 0;
  template <typename T>
  T* as() {
    return static_cast<T*>(data());
  }
};

// Pageable host memory: a page-aligned allocation of the C library.
class PageableHostBuffer final : public HostBuffer {
 public:
  explicit PageableHostBuffer(std::size_t bytes);
  ~PageableHostBuffer() override;
  PageableHostBuffer(const PageableHostBuffer&) = delete;
  PageableHostBuffer& operator=(const PageableHostBuffer&) = delete;
  void* data() override { return ptr_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  void* ptr_;
  std::size_t bytes_;
};

}  // namespace varex::harness
