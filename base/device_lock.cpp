#include "base/device_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "base/hash.hpp"
#include "base/interrupt.hpp"

namespace varex::harness {

namespace {

std::filesystem::path lock_directory() {
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime)
    return std::filesystem::path(runtime) / "varex";
  return std::filesystem::temp_directory_path() / ("varex-locks-" + std::to_string(::getuid()));
}

}  // namespace

DeviceLock::DeviceLock(const DeviceInfo& device, const std::function<void(long holder)>& waiting) {
  std::error_code ec;
  const auto dir = lock_directory();
  std::filesystem::create_directories(dir, ec);
  // The physical device, not the view: the OpenCL and the CUDA view of one GPU share the lock.
  const std::string key = device.host + "|" + (device.physical.empty() ? device.uid() : device.physical);
  fd_ = ::open((dir / (hex64(fnv1a(key)) + ".lock")).c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    held_ = true;
    return;
  }
  // Polled rather than blocking, so that Ctrl-C ends the wait (a probe on a busy machine can take a minute).
  bool said = false;
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      held_ = true;  // a file system without locks: nothing to wait for
      return;
    }
    if (interrupted()) return;
    if (!said && waiting) {
      char text[32] = {};
      const ssize_t n = ::pread(fd_, text, sizeof text - 1, 0);
      waiting(n > 0 ? std::strtol(text, nullptr, 10) : 0);
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  held_ = true;
  // The holder's process id, for the message of a process that waits.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd_, pid.data(), pid.size(), 0);
  }
}

DeviceLock::~DeviceLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace varex::harness
