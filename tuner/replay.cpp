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

// What a measurement spent beyond its runs and the compilation it waited for (transfers, verification,
// overheads), where that is plain: its wall time less its runs is at least its compilation, taken as waited
// for in full. nullopt where it is shorter: the sweep compiled the program in the background and the visible
// part of the wait cannot be told from the fixed cost. Without wall times (rows before schema version 2): the
// download.
std::optional<double> plain_fixed_ms(const varex::Measurement& m) {
  if (m.wall_ms <= 0) return m.d2h_ms;
  const double beyond_runs = std::max(0.0, m.wall_ms - runs_of(m, m.samples_ms.size()));
  const double compile = m.compile_cached ? 0.0 : m.compile_ms;
  if (beyond_runs >= compile) return beyond_runs - compile;
  return std::nullopt;
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
  // The fixed cost where a measurement's own is not plain (a compilation partly hidden): the median of those
  // checked on the device whose is. Counting the whole visible wait as fixed charged the 2^22 relational
  // join's variants about 0.33 s each on top of their compilation, where the median is 1.1 ms. (Of all plain
  // ones where none was checked on the device, as before device digests.)
  std::vector<double> device_fixed, all_fixed;
  for (const auto& [index, r] : by_index_) {
    const auto fixed = plain_fixed_ms(r.m);
    if (!r.m.ok() || !fixed) continue;
    (r.m.checked == Check::Device ? device_fixed : all_fixed).push_back(*fixed);
  }
  std::vector<double>& typical = device_fixed.empty() ? all_fixed : device_fixed;
  if (!typical.empty()) {
    auto middle = typical.begin() + static_cast<std::ptrdiff_t>(typical.size() / 2);
    std::nth_element(typical.begin(), middle, typical.end());
    typical_fixed_ms_ = *middle;
  }
  // Sweeps recorded before schema version 11 did not store how long a comparison in full took: it is what the
  // measurement compared in full spent beyond that typical fixed cost. (Where nothing was checked on the
  // device, as before device digests, every variant was compared in full and its fixed cost holds its
  // comparison.)
  for (const auto& [index, r] : by_index_) {
    if (!r.m.ok() || r.m.checked != Check::Host) continue;
    double check_ms = r.m.host_check_ms;
    if (!r.host_check_recorded && !device_fixed.empty()) {
      check_ms = std::max(0.0, fixed_ms_of(r.m) - typical_fixed_ms_);
      inferred_check_s_[r.id] = check_ms / 1e3;
    }
    host_check_s_ = std::max(host_check_s_, check_ms / 1e3);
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

double Recording::fixed_ms_of(const varex::Measurement& m) const {
  const auto plain = plain_fixed_ms(m);
  if (plain) return *plain;
  const double beyond_runs = std::max(0.0, m.wall_ms - runs_of(m, m.samples_ms.size()));
  return std::min(beyond_runs, typical_fixed_ms_);
}

double Recording::host_check_of_s(const results::RecordedMeasurement& r) const {
  if (r.m.checked != Check::Host) return 0;
  const auto it = inferred_check_s_.find(r.id);
  return it != inferred_check_s_.end() ? it->second : r.m.host_check_ms / 1e3;
}

double Recording::run_cost_s(const results::RecordedMeasurement& r, Fidelity fidelity) const {
  // Its fixed cost less a comparison in full it made (the replay charges that where the live tuner would
  // compare), and at fidelity k the runs of k timed repetitions, or fewer where the full protocol stopped.
  const double fixed_s = std::max(0.0, fixed_ms_of(r.m) / 1e3 - host_check_of_s(r));
  return fixed_s + runs_of(r.m, repetitions(r, fidelity)) / 1e3;
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
  // The recorded result was verified; compared in full (and charged for it) where the live tuner would: the
  // session's first result, and where the driver asks.
  const bool in_full = std::isinf(request.compare_in_full_below_ms) || (e.m.ok() && !compared_in_full_) ||
                       (e.m.ok() && !cut && e.m.kernel.median < request.compare_in_full_below_ms);
  e.m.checked = in_full ? Check::Host : Check::Device;
  e.m.host_check_ms = in_full ? recording_.host_check_s() * 1e3 : 0.0;
  if (in_full) {
    e.cost_s += recording_.host_check_s();
    clock_s_ += recording_.host_check_s();
    compared_in_full_ = compared_in_full_ || e.m.ok();
  }
  return e;
}

}  // namespace varex::tuner
