#include "base/device_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "base/hash.hpp"

namespace varex::harness {

namespace {

std::filesystem::path lock_directory() {
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime)
    return std::filesystem::path(runtime) / "varex";
  return std::filesystem::temp_directory_path() / ("varex-locks-" + std::to_string(::getuid()));
}

}  // namespace

DeviceLock::DeviceLock(const DeviceInfo& device) {
  std::error_code ec;
  const auto dir = lock_directory();
  std::filesystem::create_directories(dir, ec);
  // The physical device, not the view: the OpenCL and the CUDA view of one GPU share the lock.
  const std::string key = device.host + "|" + (device.physical.empty() ? device.uid() : device.physical);
  fd_ = ::open((dir / (hex64(fnv1a(key)) + ".lock")).c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ < 0) return;
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

DeviceLock::~DeviceLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace varex::harness
