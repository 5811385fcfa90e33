#pragma once
// An exclusive lock on a physical device across the processes of this machine (flock on a file named after
// the device), for work that two processes must not do on one device at the same time: measuring its copy
// bandwidth, which two probes at once would each see shared.
#include "base/device.hpp"

namespace varex::harness {

class DeviceLock {
 public:
  // Waits until no other process holds the device's lock. Without a place for lock files it locks nothing.
  explicit DeviceLock(const DeviceInfo& device);
  ~DeviceLock();
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace varex::harness
