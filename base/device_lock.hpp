#pragma once
// An exclusive lock on a physical device across the processes of this machine (flock on a file named after
// the device), for work that two processes must not do on one device at the same time: measuring its copy
// bandwidth, which two probes at once would each see shared.
#include <functional>

#include "base/device.hpp"

namespace varex::harness {

class DeviceLock {
 public:
  // Waits until no other process holds the device's lock. Without a place for lock files it locks nothing.
  // Where it must wait, `waiting` is called once with the holder's process id (0 if unknown), so that the
  // command can say what it waits for; Ctrl-C ends the wait (held() is then false).
  explicit DeviceLock(const DeviceInfo& device, const std::function<void(long holder)>& waiting = {});
  bool held() const { return held_; }
  ~DeviceLock();
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

 private:
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace varex::harness
