#include "tuner/device_evaluator.hpp"

#include <chrono>

namespace varex::tuner {

DeviceEvaluator::DeviceEvaluator(DeviceEvaluatorContext context,
                                 std::vector<results::RecordedMeasurement> resumed)
    : c_(std::move(context)) {
  for (auto& r : resumed) resumed_[{r.variant_id, r.fidelity, r.purpose}].push_back(std::move(r));
  valid_count_ = c_.space->count_valid();
  kernel_hash_ = harness::kernel_source(c_.remote->device().backend, c_.op->kernel_family()).hash;
}

void DeviceEvaluator::upcoming(const std::vector<variants::Params>& params) {
  prefetch_.clear();
  for (const auto& p : params) {
    // An operator whose kernels are specialised while it runs (a plan) names no defines: nothing to prefetch.
    harness::Defines d = c_.op->defines(p, c_.remote->device());
    if (!d.empty()) prefetch_.push_back(std::move(d));
  }
}

double DeviceEvaluator::exhaustive_cost_s(double mean_cost_s) const {
  return static_cast<double>(valid_count_) * mean_cost_s;
}

Evaluation DeviceEvaluator::evaluate(const variants::Params& params, Fidelity fidelity,
                                     const std::string& purpose) {
  const DeviceInfo& device = c_.remote->device();
  const std::string id = harness::variant_id(*c_.op, device.backend, params);
  // A resumed session: what was measured before the interruption is used, not measured again.
  if (const auto it = resumed_.find({id, fidelity, purpose}); it != resumed_.end() && !it->second.empty()) {
    Evaluation e{std::move(it->second.front().m), 0};
    it->second.pop_front();
    e.cost_s = e.m.cost_s();
    ++resumed_used_;
    return e;
  }
  varex::MeasureSettings settings = c_.settings;
  if (fidelity > 0) {
    settings.max_reps = fidelity;
    settings.min_reps = std::min(settings.min_reps, fidelity);
  }
  c_.store->ensure_variant(id, c_.op->name(), device.backend, params, kernel_hash_,
                           c_.space->compile_part(params));
  // The cost is what the tuner waited for: worker round trip and any worker restart included.
  const auto start = std::chrono::steady_clock::now();
  Evaluation e;
  e.m = c_.remote->measure(c_.workload, params, settings, c_.probe_gbps, c_.timeout_seconds, prefetch_);
  e.cost_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // What the tuner waited is the row's cost, also for a variant that failed (a timeout waits its full
  // limit): budgets and replays must count it.
  e.m.wall_ms = e.cost_s * 1e3;
  prefetch_.clear();
  c_.store->record(c_.session, id, c_.device_row, c_.workload.id(), e.m, fidelity, purpose);
  return e;
}

}  // namespace varex::tuner
