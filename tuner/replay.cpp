#include "tuner/replay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/errors.hpp"
#include "base/text.hpp"

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

Recording::Recording(const variants::Space& space, std::vector<results::RecordedMeasurement> measurements,
                     bool background_compile)
    : full_(space),
      space_(space),
      optimum_ms_(std::numeric_limits<double>::infinity()),
      background_compile_(background_compile) {
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
    if (r.m.ok() && r.m.kernel.median < optimum_ms_) {
      optimum_ms_ = r.m.kernel.median;
      optimum_ = r.params;
    }
    exhaustive_cost_s_ += r.m.cost_s();
  }
  // Restricted to the values recorded (a sub-space sweep of the join's 9 million points holds 528): the
  // strategies' sampling then draws from the sub-space's product, not the whole space's, as a live tune
  // with the same pins does.
  std::map<std::string, std::set<std::string>> recorded_values;
  for (const auto& [index, r] : by_index_) {
    for (const auto& [name, value] : r.params) recorded_values[name].insert(variants::to_string(value));
  }
  std::map<std::string, std::string> pins;
  for (const auto& t : space.tunables()) {
    const auto it = recorded_values.find(t.name);
    if (it == recorded_values.end() || it->second.size() == t.values.size()) continue;
    pins[t.name] = join(std::vector<std::string>(it->second.begin(), it->second.end()), ",");
  }
  const variants::Space full = space;
  space_ = (pins.empty() ? space : space.restricted(pins))
               .with_constraint(
                   {"recorded in the sweep being replayed", [recorded, full](const variants::Params& p) {
                      return recorded->count(full.index_of(p)) > 0;
                    }});
}

const results::RecordedMeasurement* Recording::find(const variants::Params& params) const {
  const auto it = by_index_.find(full_.index_of(params));
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
  // wall time minus its runs and the compilation it waited for, where wall times were recorded, else the
  // download alone. A compile the sweep prefetched was not waited for: when the wall time minus the runs is
  // shorter than the compilation, the compilation is taken as hidden (a partly hidden one then counts its
  // visible part as fixed cost: a slight overcharge).
  double fixed_ms = r.m.d2h_ms;
  if (r.m.wall_ms > 0) {
    const double beyond_runs = std::max(0.0, r.m.wall_ms - runs_of(r.m, reps));
    const double compile = r.m.compile_cached ? 0.0 : r.m.compile_ms;
    fixed_ms = beyond_runs >= compile ? beyond_runs - compile : beyond_runs;
  }
  // At fidelity k the live tuner stops after k timed repetitions, or earlier where the full protocol did.
  return (fixed_ms + runs_of(r.m, repetitions(r, fidelity))) / 1e3;
}

std::size_t Recording::repetitions(const results::RecordedMeasurement& r, Fidelity fidelity) {
  const std::size_t reps = r.m.samples_ms.size();
  return fidelity > 0 ? std::min<std::size_t>(reps, static_cast<std::size_t>(fidelity)) : reps;
}

void ReplayEvaluator::upcoming(const std::vector<variants::Params>& params) {
  // The live worker starts compiling the programs of the variants proposed after the one it measures now
  // (harness::Engine::prefetch, GPU devices only); each compiles in the background from that moment, in
  // parallel with the others, and the tuner later waits only for what is left of it.
  if (!recording_.background_compile()) return;
  for (const auto& p : params) {
    const std::string key = compile_key(recording_.space(), p);
    if (!compiled_.count(key)) prefetched_.emplace(key, clock_s_);
  }
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
  // Live, the energy is measured only of a variant that ran in full and came out below energy_below_ms: the
  // recorded energy measurement is then neither returned nor charged.
  if (r->m.energy && (cut || !(r->m.kernel.median < request.energy_below_ms))) {
    e.cost_s = std::max(0.0, e.cost_s - r->m.energy->seconds);
    e.m.energy.reset();
  }
  const std::string key = compile_key(recording_.space(), params);
  // What this replay compiled, not what the sweep did (its order was another): as a live worker reports it.
  e.m.compile_cached = true;
  e.m.compile_ms = 0;
  if (compiled_.insert(key).second) {
    // A compile nobody announced ahead is waited for in full; a prefetched one only for what is left.
    double compile_s = recording_.compile_cost_s(params);
    if (const auto it = prefetched_.find(key); it != prefetched_.end()) {
      compile_s = std::max(0.0, compile_s - (clock_s_ - it->second));
      prefetched_.erase(it);
    }
    e.cost_s += compile_s;
    e.m.compile_cached = false;
    e.m.compile_ms = compile_s * 1e3;
  }
  clock_s_ += e.cost_s;
  const std::size_t reps = Recording::repetitions(*r, fidelity);
  if (cut) {
    e.m.samples_ms.resize(1);
    e.m.kernel = summarize(e.m.samples_ms);
    e.m.cut_off = true;
  } else if (fidelity > 0 && r->m.ok() && reps > 0) {
    // A cheap look: the median of as many repetitions as were charged, drawn from the recorded ones.
    std::uniform_int_distribution<std::size_t> pick(0, r->m.samples_ms.size() - 1);
    e.m.samples_ms.clear();
    for (std::size_t i = 0; i < reps; ++i) e.m.samples_ms.push_back(r->m.samples_ms[pick(rng_)]);
    e.m.kernel = summarize(e.m.samples_ms);
  }
  // The recorded result was verified; compared in full where the driver asks, as live.
  if (std::isinf(request.compare_in_full_below_ms) ||
      (e.m.ok() && e.m.kernel.median < request.compare_in_full_below_ms))
    e.m.checked = Check::Host;
  return e;
}

}  // namespace varex::tuner
