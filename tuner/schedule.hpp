#pragma once
// Which devices are measured at the same time. A lane is one physical device: its views (the OpenCL and
// the CUDA view of one GPU) run one after another, never together, since they share the chip and its
// memory. The lanes of GPUs and accelerators run at the same time, one thread (and one worker process)
// each. A CPU device runs alone, after them: its kernels use the host cores that every other device's
// worker needs to generate data and verify results, and they would slow each other's timings.
#include <functional>
#include <string>
#include <vector>

#include "base/device.hpp"

namespace varex::tuner {

struct Lane {
  std::string physical;  // the physical device the lane's views share
  std::vector<DeviceInfo> devices;
};

// Phases run one after another; the lanes of a phase at the same time.
struct Phase {
  std::vector<Lane> lanes;
};

struct SchedulePolicy {
  bool parallel = true;  // false: every device alone, in the order given (`--sequential`)
  // CPU devices alone, after the others. Only tests turn this off: PoCL's two pthread devices then stand in
  // for two identical GPUs, so that concurrent writers can be exercised on a machine without a GPU.
  bool cpu_alone = true;
};

// Lanes in the order of their first device; within a lane the views in the order given, except that every
// other lane takes them in reverse (so that identical GPUs do not compile the same programs at once).
std::vector<Phase> plan_schedule(const std::vector<DeviceInfo>& devices, const SchedulePolicy& policy = {});

// Calls `work` for every device: phases in order, each lane of a phase on its own thread, a lane's devices
// in order. When `work` throws, the lane stops, the other lanes of the phase finish (`work` should watch
// for the stop its own way, e.g. varex::interrupted()), no later phase starts, and the first exception is
// rethrown once every thread has ended.
void run_schedule(const std::vector<Phase>& phases, const std::function<void(const DeviceInfo&)>& work);

}  // namespace varex::tuner
