#include "tuner/device_evaluator.hpp"

#include <chrono>
#include <cmath>

namespace varex::tuner {

DeviceEvaluator::DeviceEvaluator(DeviceEvaluatorContext context,
                                 std::vector<results::RecordedMeasurement> resumed)
    : c_(std::move(context)) {
  for (auto& r : resumed) resumed_[{r.variant_id, r.fidelity, r.purpose}].push_back(std::move(r));
  valid_count_ = c_.space->count_valid();
  kernel_hash_ = c_.op->sources_hash(c_.remote->device().backend);
  full_ = {c_.remote, &c_.workload};
}

SmallInstanceWorker::SmallInstanceWorker(const std::string& executable, const DeviceInfo& device,
                                         harness::SmallInstance instance)
    : instance_(std::move(instance)), remote_(executable, device) {
  // Started here, not in the preparing thread: a worker dies with the thread that started it, and that
  // one ends with the preparation (the first search on the small instance found its worker killed).
  remote_.start_worker();
  preparing_ = std::async(std::launch::async, [this] { remote_.prepare(instance_.workload); });
}

// A session that ends before the small instance is ready (bad input, Ctrl-C) waits for its preparation.
SmallInstanceWorker::~SmallInstanceWorker() {
  if (preparing_.valid()) preparing_.wait();
}

harness::RemoteDevice& SmallInstanceWorker::ready(double& waited_s) {
  const auto start = std::chrono::steady_clock::now();
  if (preparing_.valid()) preparing_.get();
  waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return remote_;
}

// The small instance's before it was first prepared: the workload's, that many times shorter.
double DeviceEvaluator::replacement_s(bool small) const {
  if (!small || !small_divisor()) return c_.remote->prepare_seconds();
  if (small_.remote && small_.remote->prepare_seconds() > 0) return small_.remote->prepare_seconds();
  return c_.remote->prepare_seconds() / static_cast<double>(small_divisor());
}

DeviceEvaluator::Instance& DeviceEvaluator::instance_for(const EvaluationRequest& request,
                                                         double& prepare_s) {
  prepare_s = 0;
  const bool small = request.small && small_divisor();
  if (small && !small_.remote) {
    try {
      harness::RemoteDevice& remote = c_.small->ready(prepare_s);
      c_.store->ensure_workload(c_.small->workload(), c_.op->workload_class(c_.small->workload()));
      small_ = {&remote, &c_.small->workload()};
    } catch (const std::exception& e) {
      // A small instance that cannot be prepared (too little memory beside the workload, say): measured at
      // full size.
      small_error_ = e.what();
      return instance_for(request, prepare_s);
    }
  }
  Instance& instance = small ? small_ : full_;
  if (instance.remote->holds(*instance.workload)) return instance;
  // A worker replaced after a stopped or crashed variant prepares its workload again.
  const auto start = std::chrono::steady_clock::now();
  instance.remote->prepare(*instance.workload);
  prepare_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return instance;
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

// A result is checked by its digest on the device, except the session's first, which is compared in full on
// the host, and those the driver asks to compare in full (a re-measured candidate that can be declared best).
// Comparing in full the first variant of every program, or of every compile-time value, was not affordable at
// the sources' sizes: a 2^24 x 2^28 join's full comparison took 5 to 10 s on an H100 machine's 16 cores and a
// plan's at SF 10 5 s, and most of those spaces' tunables are compile-time (a 60 s tune of plan D compared
// all its 5 evaluations in full; the join's spent 24 of its 60 s on 4 of them).
// The small instance is a workload of its own: its first result is compared in full too.
Check DeviceEvaluator::check_for(const EvaluationRequest& request, const Instance& instance) {
  return std::isinf(request.compare_in_full_below_ms) || !instance.compared_in_full ? Check::Host
                                                                                    : Check::Device;
}

Evaluation DeviceEvaluator::evaluate(const EvaluationRequest& request) {
  const variants::Params& params = request.params;
  const DeviceInfo& device = c_.remote->device();
  const std::string id = harness::variant_id(*c_.op, device.backend, params);
  // A resumed session: what was measured before the interruption is used, not measured again (of the
  // workload: the small instance's are not the session's).
  if (const auto it = resumed_.find({id, request.fidelity, request.purpose});
      !request.small && it != resumed_.end() && !it->second.empty()) {
    Evaluation e{std::move(it->second.front().m), 0};
    it->second.pop_front();
    e.cost_s = e.m.cost_s();
    ++resumed_used_;
    return e;
  }
  varex::MeasureSettings settings = c_.settings;
  if (request.fidelity > 0) {
    settings.max_reps = request.fidelity;
    settings.min_reps = std::min(settings.min_reps, request.fidelity);
  }
  settings.cutoff_ms = request.cutoff_ms;
  settings.energy_below_ms = request.energy_below_ms;
  // The repetitions stop before the budget runs out (a tenth of a second at least, for the minimum).
  settings.max_rep_seconds = std::min(settings.max_rep_seconds, std::max(0.1, request.seconds_left));
  double prepare_s = 0;
  Instance& instance = instance_for(request, prepare_s);
  const bool small = instance.workload != &c_.workload;
  settings.check = check_for(request, instance);
  // Compared in full from the start, or afterwards where its time comes out below the threshold.
  if (settings.check == Check::Device) settings.compare_in_full_below_ms = request.compare_in_full_below_ms;
  c_.store->ensure_variant(id, c_.op->name(), device.backend, params, kernel_hash_,
                           c_.space->compile_part(params));
  // A variant that would run past the budget is stopped where what is left still pays for a new worker to
  // prepare the workload again for the re-measurement (the search leaves room for that: tuner/tuner.cpp); on
  // the small instance at the end of what is left, since the re-measurement does not use its worker.
  double limit_s = c_.timeout_seconds;
  const double stop_at_s = request.seconds_left - prepare_s - (small ? 0.0 : replacement_s(false));
  const bool stopped_by_budget = request.stoppable && std::max(1.0, stop_at_s) < limit_s;
  if (stopped_by_budget) limit_s = std::max(1.0, stop_at_s);
  const auto start = std::chrono::steady_clock::now();
  Evaluation e;
  e.m = instance.remote->measure(*instance.workload, params, settings, c_.probe_gbps, limit_s, prefetch_);
  e.prepare_s = prepare_s;
  e.small = small;
  const auto end = std::chrono::steady_clock::now();
  if (stopped_by_budget && e.m.status == Status::Timeout) {
    e.m.error = "stopped at the end of the budget: the variant had not finished after " +
                std::to_string(static_cast<long>(limit_s)) + " s";
  }
  // The row's cost is what the tuner waited for: worker round trip and any worker restart included, also
  // for a variant that failed (a timeout waits its full limit): replays count it.
  e.m.wall_ms = std::chrono::duration<double, std::milli>(end - start).count();
  // The budget's cost is the wall time since the last evaluation ended: what the strategy, the store and
  // the progress line took in between counts too, so that the budget is the command's wall time.
  e.cost_s = std::chrono::duration<double>(end - last_end_).count();
  last_end_ = end;
  prefetch_.clear();
  instance.compared_in_full = instance.compared_in_full || (e.m.ok() && e.m.checked == Check::Host);
  c_.store->record(c_.session, id, c_.device_row, instance.workload->id(), e.m, request.fidelity,
                   request.purpose);
  // Recording is part of this evaluation's cost.
  const auto recorded = std::chrono::steady_clock::now();
  e.cost_s += std::chrono::duration<double>(recorded - last_end_).count();
  last_end_ = recorded;
  return e;
}

}  // namespace varex::tuner
