#pragma once
// The strategy benchmark: every strategy replayed over many seeds and budgets against each recorded
// exhaustive sweep, reporting how close to the optimum each gets per budget and what it costs to come
// within 5% of it, normalised against random search.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/store.hpp"
#include "tuner/replay.hpp"
#include "tuner/tuner.hpp"

namespace varex::tuner {

struct BenchOptions {
  std::vector<std::string> strategies;                  // default: all but exhaustive
  std::vector<double> budgets{0.02, 0.05, 0.10, 0.20};  // shares of the exhaustive cost
  int seeds = 25;
  int remeasure = 3;
  // Warm-start each sweep's replays from the fastest variants of the other sweeps of its operator (other
  // devices, other workloads), as a tune does from the store (tuner/warm_start.hpp).
  bool warm_start = false;
  // The runs that measure the cost to come within 5% stop at this share of the exhaustive cost (a seed that
  // got no closer counts as never): 1 lets them search the whole space.
  double cost_cap = 1.0;
  // Called after every replayed run with the runs done and the runs in all (for a progress line).
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// One recorded sweep to replay.
struct BenchSweep {
  std::int64_t session = 0;
  DeviceInfo device;
  std::string op;
  std::uint64_t rows = 0;
  std::string status;  // the sweep session's status (an interrupted sweep is replayed as far as it got)
  std::shared_ptr<Recording> recording;
  datasets::WorkloadClass workload_class;
  // With BenchOptions::warm_start: the points measured first, and the sweeps they came from.
  std::vector<variants::Params> warm_start;
  std::vector<std::int64_t> warm_start_from;
  // Recorded under an older space: what fitting it to today's left out or mapped (tuner/space_fit.hpp);
  // empty when the sweep's space is today's.
  std::string space_changes;
};

struct BenchRow {
  const BenchSweep* sweep = nullptr;
  std::string strategy;
  double budget = 0;
  std::vector<double> ratios;       // per seed: true time of the declared best / optimum (inf: nothing found)
  std::vector<double> evaluations;  // per seed: search evaluations until the budget ran out
  double median_ratio = 0, p10 = 0, p25 = 0, p75 = 0, p90 = 0;
  double evaluations_p25 = 0, evaluations_median = 0, evaluations_p75 = 0;
  double within_5pct = 0;  // share of seeds whose declared best is within 5% of the optimum
};

struct CostRow {
  const BenchSweep* sweep = nullptr;
  std::string strategy;
  std::vector<double> cost_s;       // per seed: cost until the best observed is truly within 5% (inf: never)
  std::vector<double> evaluations;  // per seed: evaluations until then (inf: never)
  double median_cost_s = 0, p25_cost_s = 0, p75_cost_s = 0;
  double median_evaluations = 0;
  double share_of_exhaustive = 0;
  double vs_random = 0;  // median cost / random search's median cost
  double reached = 0;    // share of seeds that got within 5% at all
};

struct BenchReport {
  std::vector<BenchSweep> sweeps;
  std::vector<BenchRow> rows;
  std::vector<CostRow> costs;

  nlohmann::json to_json() const;
  std::string to_csv() const;
  std::string to_text() const;
};

// The finished or interrupted sweep sessions of the store (optionally of one operator and of some recorded
// device rows), ready to replay. Sweeps with fewer than two verified variants are left out.
std::vector<BenchSweep> load_sweeps(results::Store& store, const std::optional<std::string>& op,
                                    const std::optional<std::vector<std::int64_t>>& devices,
                                    const std::vector<std::int64_t>& sessions = {});

BenchReport run_bench(std::vector<BenchSweep> sweeps, const BenchOptions& options);

}  // namespace varex::tuner
