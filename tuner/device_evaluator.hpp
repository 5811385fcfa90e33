#pragma once
// Evaluates variants on a device through its worker process and records every measurement in the
// session. When a session is resumed, its recorded measurements answer first: nothing is measured or
// recorded twice.
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "harness/operators/operator.hpp"
#include "harness/worker.hpp"
#include "results/store.hpp"
#include "tuner/evaluator.hpp"

namespace varex::tuner {

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
  // A smaller instance of the workload (Operator::small_instance) that requests may ask to be measured on, in
  // a worker of its own, so that the workload's worker keeps what it prepared; `divisor` times smaller.
  std::optional<datasets::WorkloadSpec> small;
  std::uint64_t small_divisor = 0;
  std::string worker_executable;  // for the small instance's worker
};

class DeviceEvaluator final : public Evaluator {
 public:
  DeviceEvaluator(DeviceEvaluatorContext context, std::vector<results::RecordedMeasurement> resumed);

  Evaluation evaluate(const EvaluationRequest& request) override;
  void upcoming(const std::vector<variants::Params>& params) override;
  double exhaustive_cost_s(double mean_cost_s) const override;
  double replacement_s(bool small) const override;
  bool replacement_pending() const override { return !c_.remote->holds(c_.workload); }
  std::uint64_t small_divisor() const override { return small_error_.empty() ? c_.small_divisor : 0; }

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
  std::unique_ptr<harness::RemoteDevice> small_remote_;
  std::string small_error_;

  // The instance that measures `request`, its workload prepared (the small instance's on its first use); the
  // seconds that preparing took.
  Instance& instance_for(const EvaluationRequest& request, double& prepare_s);
  static Check check_for(const EvaluationRequest& request, const Instance& instance);
};

}  // namespace varex::tuner
