#include "tuner/replay.hpp"

#include <algorithm>
#include <limits>

#include "base/errors.hpp"

namespace varex::tuner {

namespace {

std::string compile_key(const variants::Space& space, const variants::Params& params) {
  return variants::canonical(space.compile_part(params));
}

// Timed repetitions plus the verified run and one warm-up: what a full measurement executes.
double runs_of(const varex::Measurement& m, std::size_t reps) {
  return static_cast<double>(reps + 2) * (m.kernel.median > 0 ? m.kernel.median : 0);
}

}  // namespace

Recording::Recording(const variants::Space& space, std::vector<results::RecordedMeasurement> measurements)
    : space_(space), optimum_ms_(std::numeric_limits<double>::infinity()) {
  // The latest full-fidelity search measurement of each variant is its recorded truth.
  for (auto& r : measurements) {
    if (r.fidelity != 0 || r.purpose != "search" || !space.valid(r.params)) continue;
    const std::string key = compile_key(space, r.params);
    if (!r.m.compile_cached) compile_ms_[key] = std::max(compile_ms_[key], r.m.compile_ms);
    by_index_[space.index_of(r.params)] = std::move(r);
  }
  auto recorded = std::make_shared<std::unordered_map<std::uint64_t, bool>>();
  for (const auto& [index, r] : by_index_) {
    (*recorded)[index] = true;
    if (r.m.ok()) optimum_ms_ = std::min(optimum_ms_, r.m.kernel.median);
    exhaustive_cost_s_ += run_cost_s(r, 0);
  }
  for (const auto& [_, ms] : compile_ms_) exhaustive_cost_s_ += ms / 1e3;
  const variants::Space full = space;
  space_ = space.with_constraint(
      {"recorded in the sweep being replayed",
       [recorded, full](const variants::Params& p) { return recorded->count(full.index_of(p)) > 0; }});
}

const results::RecordedMeasurement* Recording::find(const variants::Params& params) const {
  const auto it = by_index_.find(space_.index_of(params));
  return it == by_index_.end() ? nullptr : &it->second;
}

double Recording::true_ms(const variants::Params& params) const {
  const auto* r = find(params);
  return r && r->m.ok() ? r->m.kernel.median : std::numeric_limits<double>::infinity();
}

double Recording::compile_cost_s(const variants::Params& params) const {
  const auto it = compile_ms_.find(compile_key(space_, params));
  return it == compile_ms_.end() ? 0 : it->second / 1e3;
}

double Recording::run_cost_s(const results::RecordedMeasurement& r, Fidelity fidelity) const {
  const std::size_t reps = r.m.samples_ms.size();
  // What the recorded measurement spent beyond its kernel runs (transfers, verification, overheads): the
  // wall time minus compilation and runs where it was recorded, else the download alone.
  const double fixed_ms =
      r.m.wall_ms > 0
          ? std::max(0.0, r.m.wall_ms - (r.m.compile_cached ? 0.0 : r.m.compile_ms) - runs_of(r.m, reps))
          : r.m.d2h_ms;
  const std::size_t used =
      fidelity > 0 ? std::min<std::size_t>(reps, static_cast<std::size_t>(fidelity)) : reps;
  return (fixed_ms + runs_of(r.m, used)) / 1e3;
}

Evaluation ReplayEvaluator::evaluate(const EvaluationRequest& request) {
  const variants::Params& params = request.params;
  const Fidelity fidelity = request.fidelity;
  const results::RecordedMeasurement* r = recording_.find(params);
  if (!r) throw RuntimeError("replay: variant " + variants::describe(params) + " was not recorded");
  Evaluation e;
  e.m = r->m;
  // A variant whose recorded first repetition is slower than the cut-off stops there, as live.
  const bool cut = request.cutoff_ms > 0 && r->m.ok() && !r->m.samples_ms.empty() &&
                   r->m.samples_ms.front() > request.cutoff_ms;
  e.cost_s = recording_.run_cost_s(*r, cut ? 1 : fidelity);
  if (compiled_.insert(variants::canonical(recording_.space().compile_part(params))).second) {
    e.cost_s += recording_.compile_cost_s(params);
  }
  if (cut) {
    e.m.samples_ms.resize(1);
    e.m.kernel = summarize(e.m.samples_ms);
    e.m.cut_off = true;
  } else if (fidelity > 0 && r->m.ok() && !r->m.samples_ms.empty()) {
    // A cheap look: the median of a few repetitions drawn from the recorded ones.
    std::uniform_int_distribution<std::size_t> pick(0, r->m.samples_ms.size() - 1);
    e.m.samples_ms.clear();
    for (int i = 0; i < fidelity; ++i) e.m.samples_ms.push_back(r->m.samples_ms[pick(rng_)]);
    e.m.kernel = summarize(e.m.samples_ms);
  }
  return e;
}

}  // namespace varex::tuner
