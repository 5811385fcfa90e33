#pragma once
// The exhaustive sweep: every valid variant of an operator's space on every selected device, each
// measured in a worker process and recorded. It is the baseline the tuning strategies are judged by.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/measure.hpp"
#include "harness/operators/operator.hpp"
#include "harness/worker.hpp"
#include "results/store.hpp"

namespace varex::tuner {

struct SweepOptions {
  const harness::Operator* op = nullptr;
  std::vector<DeviceInfo> devices;
  datasets::WorkloadSpec workload;
  harness::MeasureSettings settings;
  double timeout_seconds = 120;             // per variant, compile and repetitions included
  std::map<std::string, std::string> pins;  // restrict tunables to value lists (a sub-space)
  bool progress = false;                    // a live progress line on stderr
  bool reprobe = false;
  std::string worker_executable;
};

struct DeviceSweep {
  DeviceInfo device;
  std::int64_t session = 0;
  std::string status;  // finished, or failed with `error` (the other devices still run)
  std::string error;
  std::size_t variants = 0;
  std::size_t ok = 0;
  std::size_t failed = 0;
  double probe_gbps = 0;
  std::optional<harness::Measurement> best;
  variants::Params best_params;
  std::string best_variant;
};

// Throws harness::Interrupted after closing the interrupted session, and UsageError for bad input
// (before anything is recorded for that device). A device that fails at run time (its driver, its
// worker) is reported in its DeviceSweep and the sweep goes on with the next device.
std::vector<DeviceSweep> sweep(results::Store& store, const SweepOptions& options);

// The device's stored probe bandwidth, measured first when missing or when `force` is set.
double ensure_probe(results::Store& store, std::int64_t device_row, harness::RemoteDevice& remote,
                    bool force);

}  // namespace varex::tuner
