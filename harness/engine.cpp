#include "harness/engine.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "base/errors.hpp"
#include "base/hash.hpp"
#include "base/text.hpp"
#include "harness/buffer_pool.hpp"

namespace varex::harness {

std::unique_ptr<HostBuffer> Engine::allocate_pageable(std::size_t bytes) const {
  return std::make_unique<PageableHostBuffer>(bytes);
}

std::string to_string(const Defines& defines) {
  std::string out;
  for (const Define& d : defines) out += " -D" + d.name + "=" + d.value;
  return out;
}

std::string compile_cache_dir() {
  if (const char* dir = std::getenv("VAREX_CACHE_DIR")) return std::string(dir) == "off" ? "" : dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/varex";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/varex";
  return "";
}

namespace {

std::string key_of(const KernelSource& source, const Defines& defines) {
  return source.hash + to_string(defines);
}

std::optional<std::string> read_whole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return std::move(s).str();
}

}  // namespace

namespace {

// An exclusive lock on a cache entry for as long as it lives (flock on a file beside the binary), so that
// processes building the same program at once (identical GPUs tuned at the same time propose the same
// variants) build it once: the others wait and load the binary. No lock (nothing is shared) where the
// lock file cannot be made.
class EntryLock {
 public:
  explicit EntryLock(const std::filesystem::path& file) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    fd_ = ::open((file.string() + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd_ >= 0) {
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~EntryLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

std::shared_ptr<Program> Engine::load_cached(const std::filesystem::path& file) {
  const auto image = read_whole(file);
  if (!image) return nullptr;
  return std::shared_ptr<Program>(load(*image));  // null when the binary no longer loads
}

Engine::Built Engine::produce(const KernelSource& source, const Defines& defines) {
  const std::string dir = compile_cache_dir();
  const auto start = std::chrono::steady_clock::now();
  auto since_start = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  if (dir.empty()) {
    // Building is synchronous host work, so a host clock measures it correctly.
    std::shared_ptr<Program> program = build(source, defines);
    return {program, since_start(), false};
  }
  // The device's model (with its architecture and driver) and platform are part of the name: a binary is
  // valid for the model it was built for, so identical GPUs of one machine share it.
  const DeviceInfo& d = device();
  const std::filesystem::path file =
      std::filesystem::path(dir) / "kernels" /
      (hex64(fnv1a(d.model_key() + "|" + d.platform + "|" + key_of(source, defines))) + ".bin");
  if (auto program = load_cached(file)) return {program, since_start(), true};
  EntryLock lock(file);
  if (auto program = load_cached(file)) return {program, since_start(), true};  // built while we waited
  std::shared_ptr<Program> program = build(source, defines);
  const double ms = since_start();
  const std::string image = binary(*program);
  // Write-then-rename, so that a reader without the lock never sees half a binary.
  const auto temporary = file.string() + ".tmp" + std::to_string(::getpid());
  if (!image.empty()) {
    std::ofstream(temporary, std::ios::binary)
        .write(image.data(), static_cast<std::streamsize>(image.size()));
    std::error_code ec;
    std::filesystem::rename(temporary, file, ec);
  }
  return {program, ms, false};
}

const Program& Engine::compile(const KernelSource& source, const Defines& defines, CompileInfo* info) {
  const std::string key = key_of(source, defines);
  std::shared_future<Built> ready;
  bool first_use = false;
  {
    std::lock_guard lock(mutex_);
    auto it = programs_.find(key);
    if (it == programs_.end()) {
      std::promise<Built> promise;
      it = programs_.emplace(key, Entry{promise.get_future().share(), false}).first;
      try {
        promise.set_value(produce(source, defines));
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
    }
    first_use = !it->second.used;
    it->second.used = true;
    ready = it->second.ready;
  }
  const Built& built = ready.get();  // rethrows a CompileError
  if (info) *info = first_use ? CompileInfo{built.ms, built.from_disk} : CompileInfo{0.0, true};
  return *built.program;
}

void Engine::prefetch(const KernelSource& source, const Defines& defines) {
  if (!background_compile_.value_or(device().type != "cpu")) return;
  std::lock_guard lock(mutex_);
  const std::string key = key_of(source, defines);
  if (programs_.count(key)) return;
  // Copies: the build outlives this call. The source text is embedded in the binary and lives forever.
  programs_.emplace(
      key, Entry{std::async(std::launch::async, [this, source, defines] { return produce(source, defines); })
                     .share(),
                 false});
}

void Engine::release_programs() {
  std::lock_guard lock(mutex_);
  for (auto& [_, entry] : programs_) entry.ready.wait();
  programs_.clear();
  flush_buffer_.reset();
  pool_.reset();  // the kept blocks, while the backend's context exists
}

EventPtr Engine::call_native(const std::string& what, const std::function<int(void*)>&) {
  throw LaunchError(what + ": " + device().id + " runs no vendor library");
}

std::unique_ptr<DeviceBuffer> Engine::allocate(std::size_t bytes) {
  if (!pool_) return allocate_device(bytes);
  std::unique_ptr<DeviceBuffer> block = pool_->take(bytes);
  if (!block) {
    try {
      block = allocate_device(bytes);
    } catch (const RuntimeError&) {
      if (pool_->cached_bytes() == 0) throw;
      pool_->clear();  // memory the pool keeps may be what the device lacks
      block = allocate_device(bytes);
    }
  }
  // The caller gets a view of the block; the block goes back to the pool when the view is destroyed.
  std::unique_ptr<DeviceBuffer> view = borrow(handle(*block), bytes);
  view->on_release([pool = std::weak_ptr<BufferPool>(pool_), raw = block.release()] {
    std::unique_ptr<DeviceBuffer> owned(raw);
    try {
      if (const std::shared_ptr<BufferPool> p = pool.lock()) p->give(std::move(owned));
    } catch (...) {  // kept or not, the block must not escape: it is freed here
    }
  });
  return view;
}

void Engine::set_buffer_pool(std::size_t max_cached_bytes) {
  pool_ = max_cached_bytes ? std::make_shared<BufferPool>(max_cached_bytes) : nullptr;
}

void Engine::release_cached_memory() {
  if (pool_) pool_->clear();
}

std::size_t Engine::cached_memory_bytes() const {
  return pool_ ? pool_->cached_bytes() : 0;
}

void Engine::allocation_failed(std::size_t bytes, const char* what, const std::string& why) const {
  throw RuntimeError("cannot allocate " + format_bytes(bytes) + " of " + what + " memory on " + device().id +
                     ": " + why);
}

bool Engine::usable() {
  try {
    finish();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void* Engine::native_address(const DeviceBuffer&) const {
  return nullptr;
}

void Engine::flush_cache() {
  if (!flush_buffer_) flush_buffer_ = allocate(std::max<std::uint64_t>(2 * device().cache_bytes, 1 << 20));
  fill(*flush_buffer_, ++flush_count_, 0, flush_buffer_->bytes())->elapsed_ms();
}

bool has_warp_ballot(const DeviceInfo& device) {
  return device.backend == Backend::Cuda ||
         (device.type == "gpu" && device.vendor.find("NVIDIA") != std::string::npos);
}

Defines warp_ballot_defines(const DeviceInfo& device) {
  if (!has_warp_ballot(device) || device.backend == Backend::Cuda) return {};
  return {{"VAREX_WARP_PTX", "1"}};
}

bool has_register_cap(const DeviceInfo& device) {
  return has_warp_ballot(device);  // CUDA and NVIDIA's OpenCL, as for the ballots
}

Define register_cap_define(int regs) {
  return {kRegisterCapDefine, std::to_string(regs)};
}

}  // namespace varex::harness
