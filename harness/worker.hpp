#pragma once
// Device work runs in a worker process, so that a kernel that hangs or crashes the driver costs one
// variant (recorded as timeout or launch_error) instead of the whole sweep. The parent talks to the
// worker in JSON lines over two pipes; the worker keeps its engine, compiled programs and prepared
// workload between requests.
#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "base/device.hpp"
#include "base/errors.hpp"
#include "base/workload.hpp"
#include "harness/measure.hpp"
#include "harness/probe.hpp"

namespace varex::harness {

// The worker's main loop: requests on `in_fd`, answers on `out_fd`, until end of input. `parent` is the
// pid of the process that started it (the worker dies with it).
int worker_main(int in_fd, int out_fd, long parent = 0);

// Keeps the environment as the process received it, for the workers it starts: drivers loaded to list
// devices may change the environment (PoCL sets HWLOC_PLUGINS_PATH, for one). Call first in main().
void save_startup_environment();

class WorkerTimeout : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};
class WorkerCrashed : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

// One worker process, started on first use and replaced after a timeout or crash.
class WorkerClient {
 public:
  explicit WorkerClient(std::string executable);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Sends one request and waits for its answer. Throws WorkerTimeout (the worker is killed),
  // WorkerCrashed, Interrupted (the user pressed Ctrl-C; the worker is killed), and UsageError or
  // RuntimeError when the worker reports one.
  nlohmann::json request(const nlohmann::json& message, double timeout_seconds);
  void stop();
  bool running() const { return pid_ > 0; }
  // Starts the worker now (a request starts it where it is not running). The worker dies with the thread
  // that started it (PR_SET_PDEATHSIG is the thread's): a worker whose requests another thread makes for a
  // while must be started by the thread that outlives them.
  void start_now() {
    if (!running()) start();
  }

 private:
  void start();
  // Waits for a worker that has died and says how it ended.
  std::string reap();
  std::string executable_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
};

// The requests varex makes of a device, over a worker.
class RemoteDevice {
 public:
  RemoteDevice(std::string executable, DeviceInfo device);

  const DeviceInfo& device() const { return device_; }
  ProbeResult probe(double timeout_seconds = 600);
  // Loads or generates the workload in the worker, computes its reference and uploads it. Returns the
  // reference digest. UsageError for bad input.
  Digest prepare(const datasets::WorkloadSpec& spec, double timeout_seconds = 1800);
  // What the last preparation took (a worker's start included where it started one): what replacing a
  // stopped worker costs before its next measurement.
  double prepare_seconds() const { return prepare_seconds_; }
  // A running worker holds this workload: a measurement of it starts at once.
  bool holds(const datasets::WorkloadSpec& spec) const { return client_.running() && prepared_ == spec.id(); }
  // Starts the worker process from the calling thread (WorkerClient::start_now).
  void start_worker() { client_.start_now(); }
  // Measures one variant. A hang becomes status timeout, a crashed worker launch_error.
  // `prefetch` names programs (by their defines) to compile in the background meanwhile.
  Measurement measure(const datasets::WorkloadSpec& spec, const variants::Params& params,
                      const MeasureSettings& settings, double probe_gbps, double timeout_seconds,
                      const std::vector<Defines>& prefetch = {});

 private:
  DeviceInfo device_;
  WorkerClient client_;
  std::string prepared_;  // workload id the running worker holds
  double prepare_seconds_ = 0;
};

}  // namespace varex::harness
