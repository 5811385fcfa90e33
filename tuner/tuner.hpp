#pragma once
// The tuning driver: asks a strategy for variants, has an evaluator measure them, stops at the budget,
// then re-measures the best few candidates before declaring one best. The default variant is measured
// first and re-measured with the best candidates; the warm-start points follow it. Failed and wrong variants
// are observed (the strategy learns from them) but can never be declared best, and neither can variants cut
// off after one repetition. A wall-time budget covers the preparation, the search and the re-measurement: the
// search stops where what is left pays for re-measuring the candidates (as their search evaluations cost).
// "Best" is by the session's objective (base/objective.hpp): the median time, the energy per repetition, or
// the energy-delay product.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "base/objective.hpp"
#include "tuner/budget.hpp"
#include "tuner/evaluator.hpp"

namespace varex::tuner {

struct TuneSettings {
  Budget budget;
  int remeasure = 3;  // best candidates measured again at the end (the default among them)
  // A search evaluation whose first repetition is slower than `cutoff` times the time of the best so far (by
  // the objective) is recorded after that repetition, cut off: never a candidate (0: every variant measured
  // in full). Its value is projected from that repetition: for energy and edp, as if it drew the best's
  // power.
  double cutoff = 0;
  // What the session spent before the search (preparing the workload), which a wall-time budget covers.
  double spent_before_s = 0;
  // Measure the space's default variant first.
  bool measure_default = true;
  // Then these (tuner/warm_start.hpp), before the strategy's first proposal.
  std::vector<variants::Params> warm_start = {};
  // What the strategy minimises and the re-measurement declares best by. Energy and edp need measurements
  // that carry energy (MeasureSettings::energy_ms); one without it is observed as failed.
  Objective objective = Objective::Time;
  // Under energy or edp, measure a search evaluation's energy only where its time leaves it a chance to beat
  // the best's (tuner/tuner.cpp); false: every variant's (an exhaustive search: the true optimum).
  bool energy_proxy = true;
  // A search by time stops where its best moves the operator's bytes at this share of the device's copy
  // probe or more (Measurement::probe_fraction): nothing faster is left to find (0: never).
  double at_bound = 0.97;
  // Low fidelity. Where a budget in seconds, after the default measured at full size, leaves a search at full
  // size under `small_share` of it (the preparation, the default and the room kept for the re-measurement
  // took the rest), the search runs on the evaluator's small instance of the workload
  // (Evaluator::small_divisor) and its finalists are measured again at full size, the only times that can
  // be declared best. Always and Never force it (Always: where the evaluator has a small instance).
  enum class SmallInstance { Auto, Never, Always };
  SmallInstance small_instance = SmallInstance::Auto;
  double small_share = 1.0 / 3;
};

// The cut-off a tune uses unless told otherwise: variants over twice the incumbent's time are timed once
// (for time and edp), over four times (for energy). A variant cut off so could beat the incumbent's energy or
// edp only by drawing under a quarter of its power.
double default_cutoff(Objective objective);

// The state after each evaluation: the convergence curve of a run.
struct TunePoint {
  std::int64_t evaluations = 0;
  double cost_s = 0;
  double best_value = std::numeric_limits<double>::infinity();  // best observed so far, by the objective
  std::uint64_t best_index = 0;                                 // its index in the space
};

struct TuneOutcome {
  std::optional<variants::Params> best;                         // declared best (after re-measurement)
  double best_value = std::numeric_limits<double>::infinity();  // by the objective
  std::optional<varex::Measurement> best_measurement;           // set with `best`
  // The search's best sample (what the progress line shows), where the re-measurement declared another:
  // one noisy measurement each, so the best sample is not always the best variant.
  std::optional<variants::Params> search_best;
  double search_best_value = std::numeric_limits<double>::infinity();
  std::int64_t evaluations = 0;  // search evaluations (re-measurements not counted)
  std::int64_t remeasured = 0;
  // The search stopped early: its best reached TuneSettings::at_bound of the copy probe.
  bool stopped_at_bound = false;
  double spent_s = 0;  // everything: the preparation before the search, the search, the re-measurement
  std::size_t ok = 0;
  std::size_t failed = 0;
  // Under energy or edp: search evaluations whose energy was not measured, their time too slow to beat the
  // best's energy at the lowest power seen (counted in `ok`).
  std::size_t energy_skipped = 0;
  std::size_t cut_off = 0;       // verified, then stopped after one repetition (counted in `ok` too)
  bool space_exhausted = false;  // the strategy had nothing left to propose
  // Search evaluations made on the small instance (TuneSettings::small_instance), and its divisor.
  std::int64_t small_evaluations = 0;
  std::uint64_t small_divisor = 0;
  // A budget in seconds that paid for the default alone: about what one that searches would take (0
  // otherwise).
  double needed_s = 0;
  // The search's values are the small instance's (history, search_best_value): after a search on it.
  std::vector<TunePoint> history;
};

// Called after every search evaluation; returning false stops the search (the re-measurement still runs).
using StepCallback = std::function<bool(const TuneOutcome&, const Proposal&, const Evaluation&)>;

TuneOutcome run_tuning(Strategy& strategy, SearchSpace& space, Evaluator& evaluator,
                       const TuneSettings& settings, const StepCallback& on_step = {});

}  // namespace varex::tuner
