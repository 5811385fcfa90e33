#pragma once
// The tuning driver: asks a strategy for variants, has an evaluator measure them, stops at the budget,
// then re-measures the best few candidates before declaring one best. Failed and wrong variants are
// observed (the strategy learns from them) but can never be declared best.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "tuner/budget.hpp"
#include "tuner/evaluator.hpp"

namespace varex::tuner {

struct TuneSettings {
  Budget budget;
  int remeasure = 3;  // best candidates measured again at the end
};

// The state after each evaluation: the convergence curve of a run.
struct TunePoint {
  std::int64_t evaluations = 0;
  double cost_s = 0;
  double best_ms = std::numeric_limits<double>::infinity();  // best observed so far
  std::uint64_t best_index = 0;                              // its index in the space
};

struct TuneOutcome {
  std::optional<variants::Params> best;  // declared best (after re-measurement)
  double best_ms = std::numeric_limits<double>::infinity();
  std::optional<varex::Measurement> best_measurement;
  std::int64_t evaluations = 0;  // search evaluations (re-measurements not counted)
  std::int64_t remeasured = 0;
  double spent_s = 0;  // everything, re-measurements included
  std::size_t ok = 0;
  std::size_t failed = 0;
  bool space_exhausted = false;  // the strategy had nothing left to propose
  std::vector<TunePoint> history;
};

// Called after every search evaluation; returning false stops the search (the re-measurement still runs).
using StepCallback = std::function<bool(const TuneOutcome&, const Proposal&, const Evaluation&)>;

TuneOutcome run_tuning(Strategy& strategy, SearchSpace& space, Evaluator& evaluator,
                       const TuneSettings& settings, const StepCallback& on_step = {});

}  // namespace varex::tuner
