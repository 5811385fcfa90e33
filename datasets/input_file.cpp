#include "datasets/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::datasets {

std::string read_input_file(const std::string& path, std::size_t max_bytes, const std::string& what) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    throw UsageError(what + " file '" + path + "' " +
                     (errno == ENOENT ? std::string("does not exist")
                                      : "cannot be read: " + std::string(std::strerror(errno))));
  }
  if (S_ISDIR(info.st_mode)) throw UsageError(what + " '" + path + "' is a directory, not a file");
  if (!S_ISREG(info.st_mode)) {
    throw UsageError(what + " '" + path + "' is not a regular file (a pipe, socket or device); give a file");
  }
  if (static_cast<std::uint64_t>(info.st_size) > max_bytes) {
    throw UsageError(what + " too large: '" + path + "' has " +
                     format_bytes(static_cast<std::uint64_t>(info.st_size)) + ", more than " +
                     format_bytes(max_bytes));
  }
  // O_NONBLOCK: should the file have turned into a FIFO since stat, opening it does not wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw UsageError(what + " file '" + path + "' cannot be read: " + std::strerror(errno));
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw UsageError("error while reading " + what + " file '" + path + "': " + why);
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
    if (bytes.size() > max_bytes) {
      ::close(fd);
      throw UsageError(what + " too large: '" + path + "' has more than " + format_bytes(max_bytes));
    }
  }
  ::close(fd);
  return bytes;
}

}  // namespace varex::datasets
