#pragma once
// Evaluates variants on a device through its worker process and records every measurement in the
// session. When a session is resumed, its recorded measurements answer first: nothing is measured or
// recorded twice.
#include <chrono>
#include <deque>
#include <map>
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
};

class DeviceEvaluator final : public Evaluator {
 public:
  DeviceEvaluator(DeviceEvaluatorContext context, std::vector<results::RecordedMeasurement> resumed);

  Evaluation evaluate(const EvaluationRequest& request) override;
  void upcoming(const std::vector<variants::Params>& params) override;
  double exhaustive_cost_s(double mean_cost_s) const override;
  double replacement_s() const override { return c_.remote->prepare_seconds(); }
  bool replacement_pending() const override { return !c_.remote->holds(c_.workload); }

  std::size_t resumed_used() const { return resumed_used_; }

 private:
  DeviceEvaluatorContext c_;
  std::map<std::tuple<std::string, int, std::string>, std::deque<results::RecordedMeasurement>> resumed_;
  std::size_t resumed_used_ = 0;
  std::vector<harness::Defines> prefetch_;
  std::uint64_t valid_count_ = 0;
  std::string kernel_hash_;
  // When the last evaluation (or this evaluator's making) ended: the next one's cost counts from here.
  std::chrono::steady_clock::time_point last_end_ = std::chrono::steady_clock::now();
  bool compared_in_full_ = false;  // a result of this session was compared in full on the host

  Check check_for(const EvaluationRequest& request) const;
};

}  // namespace varex::tuner
