#include "tuner/schedule.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

namespace varex::tuner {

namespace {

// Devices read from elsewhere may lack a physical identity; each is then a device of its own.
std::string physical_key(const DeviceInfo& d) {
  return d.physical.empty() ? d.host + "/" + d.id : d.host + "/" + d.physical;
}

}  // namespace

std::vector<Phase> plan_schedule(const std::vector<DeviceInfo>& devices, const SchedulePolicy& policy) {
  std::vector<Phase> phases;
  if (!policy.parallel) {
    for (const DeviceInfo& d : devices) phases.push_back({{{physical_key(d), {d}}}});
    return phases;
  }
  Phase shared;
  std::vector<Phase> alone;
  for (const DeviceInfo& d : devices) {
    if (policy.cpu_alone && d.type == "cpu") {
      alone.push_back({{{physical_key(d), {d}}}});
      continue;
    }
    const std::string key = physical_key(d);
    auto lane = std::find_if(shared.lanes.begin(), shared.lanes.end(),
                             [&](const Lane& l) { return l.physical == key; });
    if (lane == shared.lanes.end()) {
      shared.lanes.push_back({key, {d}});
    } else {
      lane->devices.push_back(d);
    }
  }
  // Every other lane takes its views in reverse order. Identical GPUs then tune different models (OpenCL
  // on one, CUDA on the other) in the first half, and in the second half each finds the programs the other
  // lane built in the compile cache; in lockstep they would wait on the same compilations twice.
  for (std::size_t i = 1; i < shared.lanes.size(); i += 2)
    std::reverse(shared.lanes[i].devices.begin(), shared.lanes[i].devices.end());
  if (!shared.lanes.empty()) phases.push_back(std::move(shared));
  phases.insert(phases.end(), alone.begin(), alone.end());
  return phases;
}

void run_schedule(const std::vector<Phase>& phases, const std::function<void(const DeviceInfo&)>& work) {
  for (const Phase& phase : phases) {
    std::exception_ptr first;
    std::mutex mutex;
    auto run_lane = [&](const Lane& lane) {
      try {
        for (const DeviceInfo& d : lane.devices) work(d);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!first) first = std::current_exception();
      }
    };
    if (phase.lanes.size() == 1) {
      run_lane(phase.lanes.front());  // no thread for a lane that runs alone
    } else {
      std::vector<std::thread> threads;
      for (const Lane& lane : phase.lanes) threads.emplace_back(run_lane, std::cref(lane));
      for (std::thread& t : threads) t.join();
    }
    if (first) std::rethrow_exception(first);
  }
}

}  // namespace varex::tuner
