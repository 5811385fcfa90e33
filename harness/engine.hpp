#pragma once
// The backend interface: one Engine per device. OpenCL and CUDA implement it; operator runners, the
// measurement protocol and the bandwidth probe are written once against it.
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "base/device.hpp"
#include "harness/buffers.hpp"
#include "harness/kernel_source.hpp"

namespace varex::harness {

class BufferPool;

// One enqueued operation. elapsed_ms() waits for it and returns its duration from the device's own
// timer (OpenCL profiling info, CUDA events) — never a host clock around an asynchronous call.
class Event {
 public:
  virtual ~Event() = default;
  virtual double elapsed_ms() = 0;
};
using EventPtr = std::unique_ptr<Event>;

class Program {
 public:
  virtual ~Program() = default;
};

struct KernelArg {
  const DeviceBuffer* buffer = nullptr;
  std::array<unsigned char, 8> bytes{};
  std::size_t size = 0;

  static KernelArg of(const DeviceBuffer& b) {
    KernelArg a;
    a.buffer = &b;
    return a;
  }
  template <typename T>
  static KernelArg of(T value) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8);
    KernelArg a;
    std::memcpy(a.bytes.data(), &value, sizeof(T));
    a.size = sizeof(T);
    return a;
  }
};

struct LaunchShape {
  std::uint64_t global = 0;  // work-items in total
  std::uint64_t local = 0;   // work-group size; 0 leaves the choice to the driver
};

struct Define {
  std::string name;
  std::string value;
};
using Defines = std::vector<Define>;
std::string to_string(const Defines& defines);

// Whether kernels can take warp ballots on the device (kernels/common/portable.h's warp_ballot: warps of 32
// consecutive work-items): CUDA, and NVIDIA's OpenCL through inline PTX. The defines that turn them on.
bool has_warp_ballot(const DeviceInfo& device);
Defines warp_ballot_defines(const DeviceInfo& device);

// Whether a program can cap its work-items' registers on the device: CUDA (kernels/common/portable.h's
// KERNEL_BOUNDED, __launch_bounds__) and NVIDIA's OpenCL (the OpenCL engine passes VAREX_MAX_REGS on as
// cl_nv_compiler_options' -cl-nv-maxrregcount=N; the form with a space is refused). The define that asks for
// `regs` registers (0: no cap).
bool has_register_cap(const DeviceInfo& device);
Define register_cap_define(int regs);
inline constexpr const char* kRegisterCapDefine = "VAREX_MAX_REGS";

struct CompileInfo {
  double ms = 0;        // time spent building (or loading from the disk cache) on first use; 0 afterwards
  bool cached = false;  // served from memory or from the disk cache rather than built by this call
};

// Where compiled programs are kept between runs: $VAREX_CACHE_DIR, else $XDG_CACHE_HOME/varex, else
// ~/.cache/varex; empty (no disk cache) when VAREX_CACHE_DIR is "off".
std::string compile_cache_dir();

// A program that does not build: recorded as the variant's compile_error.
class CompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A launch or execution that fails: recorded as launch_error. `fatal` means the device context cannot be
// trusted afterwards (a CUDA sticky error), so the worker that owns it must be replaced.
class LaunchError : public std::runtime_error {
 public:
  LaunchError(const std::string& what, bool fatal = false) : std::runtime_error(what), fatal_(fatal) {}
  bool fatal() const { return fatal_; }

 private:
  bool fatal_;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual const DeviceInfo& device() const = 0;

  // Device memory of at least `bytes` (bytes() says `bytes`): from the buffer pool where it is on, else the
  // backend's own allocation.
  std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes);
  // Keeps released allocations for reuse, up to `max_cached_bytes` (harness/buffer_pool.hpp); 0 turns it
  // off and frees what is kept. For callers that run on the engine's queue or stream only: the runtime.
  void set_buffer_pool(std::size_t max_cached_bytes);
  // Frees the pool's kept buffers (an allocation the backend refuses does it before trying again).
  void release_cached_memory();
  std::size_t cached_memory_bytes() const;
  // Host memory the device copies from and to fastest: pinned (page-locked) where the backend can, which
  // is what every operator's inputs and outputs use.
  virtual std::unique_ptr<HostBuffer> allocate_host(std::size_t bytes) = 0;
  // Ordinary pageable host memory (the source's other case): the runtime stages its copies through a
  // pinned buffer of its own.
  std::unique_ptr<HostBuffer> allocate_pageable(std::size_t bytes) const;
  // Mapped (zero-copy) host memory: a device buffer whose storage is host memory, which kernels read and
  // write in place, with no copy before or after them. A CUDA device reaches page-locked host memory over
  // its bus; an OpenCL CPU device's memory is the host's own. Null where the device offers none (see
  // offers_mapped_memory). Uploads, downloads and fills work on it as on any device buffer.
  virtual std::unique_ptr<DeviceBuffer> allocate_mapped(std::size_t bytes) = 0;

  // A buffer the caller owns (the runtime library's calls): `handle` is a cl_mem or a CUdeviceptr of this
  // engine's context, `bytes` its size as the caller gives it. varex never frees it.
  virtual std::unique_ptr<DeviceBuffer> borrow(std::uint64_t handle, std::size_t bytes) = 0;
  // A buffer's handle as the caller's API spells it (a cl_mem or a CUdeviceptr), for results handed over.
  virtual std::uint64_t handle(const DeviceBuffer& buffer) const = 0;
  // Whether events carry device times (false on a caller's OpenCL queue made without profiling: every
  // elapsed_ms() is then 0 after the operation completed).
  virtual bool timed() const { return true; }

  virtual EventPtr upload(DeviceBuffer& dst, std::size_t dst_offset, HostBuffer& src, std::size_t bytes) = 0;
  // Copies `bytes` from `src`, starting `src_offset` bytes in, to the start of `dst`.
  virtual EventPtr download(HostBuffer& dst, const DeviceBuffer& src, std::size_t bytes,
                            std::size_t src_offset = 0) = 0;
  // `offset` and `bytes` must be multiples of 4.
  virtual EventPtr fill(DeviceBuffer& dst, std::uint32_t pattern, std::size_t offset, std::size_t bytes) = 0;
  virtual EventPtr copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) = 0;

  // Throws LaunchError. With shape.local == 0 the backend picks the work-group size the way a driver does.
  virtual EventPtr launch(const Program& program, const std::string& kernel, const LaunchShape& shape,
                          const std::vector<KernelArg>& args) = 0;
  // Calls a vendor library (harness/backends/vendor_library.hpp) on this engine's stream, between two
  // device events. `call` gets the stream and returns the library's status (0: success); any other is a
  // LaunchError. Backends without one (OpenCL) throw LaunchError.
  virtual EventPtr call_native(const std::string& what, const std::function<int(void* stream)>& call);
  // The device address of `buffer` for such a call; null where the backend has none.
  virtual void* native_address(const DeviceBuffer& buffer) const;
  // The API's own objects the engine runs on (owned by the engine, or retained from the application's).
  struct NativeObjects {
    void* context = nullptr;  // cl_context or CUcontext
    void* device = nullptr;   // cl_device_id; null on CUDA (the context names its device)
    void* queue = nullptr;    // cl_command_queue or CUstream
  };
  virtual NativeObjects native_objects() const = 0;
  // Device time from the start of `first` to the end of `last`, both enqueued in that order.
  virtual double span_ms(Event& first, Event& last) = 0;
  virtual void finish() = 0;
  // Whether the device still takes work after a failed variant: false where the failure spoiled the context
  // (CUDA's sticky errors, whatever their code), so that its owner makes a new one.
  virtual bool usable();

  // Compiles `source` specialised by `defines`, or returns the program from this engine's cache (keyed by
  // the source hash and the defines) or from the disk cache (keyed also by the device's identity).
  // Throws CompileError.
  const Program& compile(const KernelSource& source, const Defines& defines, CompileInfo* info = nullptr);
  // Starts compiling in the background, so that a later compile() finds the program ready. Off by default
  // on CPU devices, where a compiler thread would compete with the kernels being measured.
  void prefetch(const KernelSource& source, const Defines& defines);
  void set_background_compile(bool on) { background_compile_ = on; }

  // Evicts the device's last-level cache by writing a buffer twice its size (allocated once).
  void flush_cache();

 protected:
  // The error of an allocation the backend refused: `what` is "device" or "mapped host" memory.
  [[noreturn]] void allocation_failed(std::size_t bytes, const char* what, const std::string& why) const;
  virtual std::unique_ptr<DeviceBuffer> allocate_device(std::size_t bytes) = 0;
  // Called from the compiling thread, which may not be the engine's own.
  virtual std::unique_ptr<Program> build(const KernelSource& source, const Defines& defines) = 0;
  // The machine code of a built program and a program made from it, for the disk cache. An empty
  // binary or a null program means the backend cannot cache (the program is then built).
  virtual std::string binary(const Program& program) = 0;
  virtual std::unique_ptr<Program> load(const std::string& binary) = 0;
  // Derived destructors call this first: it waits for background builds and drops every program and the
  // buffer pool's kept blocks while the derived engine's context still exists.
  void release_programs();

 private:
  struct Built {
    std::shared_ptr<Program> program;
    double ms = 0;
    bool from_disk = false;
  };
  // From the disk cache, building (once per machine, under the entry's lock) where it is missing.
  Built produce(const KernelSource& source, const Defines& defines);
  std::shared_ptr<Program> load_cached(const std::filesystem::path& file);
  struct Entry {
    std::shared_future<Built> ready;
    bool used = false;
  };
  std::mutex mutex_;
  std::map<std::string, Entry> programs_;
  std::unique_ptr<DeviceBuffer> flush_buffer_;
  std::shared_ptr<BufferPool> pool_;  // views of its blocks hold it weakly
  std::optional<bool> background_compile_;
  std::uint32_t flush_count_ = 0;
};

// Every device of every backend built into this binary. Backends without a driver contribute none.
std::vector<DeviceInfo> enumerate_devices();
std::unique_ptr<Engine> open_engine(const DeviceInfo& device);
// Whether the device's engine has mapped host memory (Engine::allocate_mapped): CUDA devices, and OpenCL
// CPU devices. A discrete GPU behind OpenCL has no zero-copy access the API promises (its host-pointer
// buffers are copied when mapped), so none is offered there.
bool offers_mapped_memory(const DeviceInfo& device);

}  // namespace varex::harness
