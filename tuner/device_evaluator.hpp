#pragma once
// Evaluates variants on a device through its worker process and records every measurement in the
// session. When a session is resumed, its recorded measurements answer first: nothing is measured or
// recorded twice.
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "harness/operators/operator.hpp"
#include "harness/worker.hpp"
#include "results/store.hpp"
#include "tuner/evaluator.hpp"

namespace varex::tuner {

// The small instance of a tune's workload (harness::small_instance_for) in a worker of its own, its
// preparation started at once in the background, beside the workload's: preparing the 2^24 x 2^28 join's
// small instance took 3.9 s on an H200 machine after the workload's 9 s, in a 30 s budget.
class SmallInstanceWorker {
 public:
  SmallInstanceWorker(const std::string& executable, const DeviceInfo& device,
                      harness::SmallInstance instance);
  SmallInstanceWorker(const SmallInstanceWorker&) = delete;
  SmallInstanceWorker& operator=(const SmallInstanceWorker&) = delete;
  ~SmallInstanceWorker();
  // The worker once its first preparation is done (`waited_s`: how long this call waited for it); throws
  // what the preparation threw.
  harness::RemoteDevice& ready(double& waited_s);
  const datasets::WorkloadSpec& workload() const { return instance_.workload; }
  std::uint64_t divisor() const { return instance_.divisor; }

 private:
  harness::SmallInstance instance_;
  harness::RemoteDevice remote_;
  std::future<void> preparing_;
};

struct DeviceEvaluatorContext {
  results::Store* store = nullptr;
  harness::RemoteDevice* remote = nullptr;
  const harness::Operator* op = nullptr;
  const variants::Space* space = nullptr;
  datasets::WorkloadSpec workload;
  std::int64_t device_row = 0;
  std::int64_t session = 0;
  varex::MeasureSettings settings;
  double timeout_seconds = 120;
  double probe_gbps = 0;
  // A smaller instance of the workload that requests may ask to be measured on, in a worker of its own, so
  // that the workload's worker keeps what it prepared (null: none).
  SmallInstanceWorker* small = nullptr;
};

class DeviceEvaluator final : public Evaluator {
 public:
  DeviceEvaluator(DeviceEvaluatorContext context, std::vector<results::RecordedMeasurement> resumed);

  Evaluation evaluate(const EvaluationRequest& request) override;
  void upcoming(const std::vector<variants::Params>& params) override;
  double exhaustive_cost_s(double mean_cost_s) const override;
  double replacement_s(bool small) const override;
  bool replacement_pending(bool small) const override {
    return small ? small_.remote && !small_.remote->holds(*small_.workload) : !c_.remote->holds(c_.workload);
  }
  std::uint64_t small_divisor() const override {
    return c_.small && small_error_.empty() ? c_.small->divisor() : 0;
  }

  std::size_t resumed_used() const { return resumed_used_; }
  // Why the small instance could not be prepared (its requests were then measured on the workload); empty if
  // it could or was never asked for.
  const std::string& small_error() const { return small_error_; }

 private:
  DeviceEvaluatorContext c_;
  std::map<std::tuple<std::string, int, std::string>, std::deque<results::RecordedMeasurement>> resumed_;
  std::size_t resumed_used_ = 0;
  std::vector<harness::Defines> prefetch_;
  std::uint64_t valid_count_ = 0;
  std::string kernel_hash_;
  // When the last evaluation (or this evaluator's making) ended: the next one's cost counts from here.
  std::chrono::steady_clock::time_point last_end_ = std::chrono::steady_clock::now();
  // One workload in one worker: the session's, or its small instance.
  struct Instance {
    harness::RemoteDevice* remote = nullptr;
    const datasets::WorkloadSpec* workload = nullptr;
    bool compared_in_full = false;  // a result of it was compared in full on the host
  };
  Instance full_;
  Instance small_;
  std::string small_error_;

  // The instance that measures `request`, its workload prepared (the small instance's on its first use); the
  // seconds that preparing took.
  Instance& instance_for(const EvaluationRequest& request, double& prepare_s);
  static Check check_for(const EvaluationRequest& request, const Instance& instance);
};

}  // namespace varex::tuner
