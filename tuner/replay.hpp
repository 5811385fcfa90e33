#pragma once
// Replay: a recorded sweep stands in for the device, so strategies run in milliseconds and without a GPU.
// A full-fidelity evaluation returns the recorded measurement; a cheap one (k repetitions) the median of k
// samples drawn from the recorded repetitions. Costs are the recorded ones: a compile-time variant's
// compilation the first time the replay meets it, and each variant's own run cost.
#include <map>
#include <memory>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

#include "results/store.hpp"
#include "tuner/evaluator.hpp"

namespace varex::tuner {

class Recording {
 public:
  // `space` is the operator's full space for the recorded device and workload.
  Recording(const variants::Space& space, std::vector<results::RecordedMeasurement> measurements);

  // The full space restricted to the recorded variants: strategies only propose what can be replayed.
  const variants::Space& space() const { return space_; }
  const results::RecordedMeasurement* find(const variants::Params& params) const;
  std::size_t size() const { return by_index_.size(); }
  double optimum_ms() const { return optimum_ms_; }
  // The recorded time of a variant (infinite when it failed or was not recorded).
  double true_ms(const variants::Params& params) const;
  double exhaustive_cost_s() const { return exhaustive_cost_s_; }
  double compile_cost_s(const variants::Params& params) const;
  // The cost of running one variant at a fidelity (0: as recorded), compilation excluded.
  double run_cost_s(const results::RecordedMeasurement& r, Fidelity fidelity) const;

 private:
  variants::Space space_;
  std::unordered_map<std::uint64_t, results::RecordedMeasurement> by_index_;
  std::map<std::string, double> compile_ms_;  // per compile key
  double optimum_ms_;
  double exhaustive_cost_s_ = 0;
};

class ReplayEvaluator final : public Evaluator {
 public:
  ReplayEvaluator(const Recording& recording, std::uint64_t seed) : recording_(recording), rng_(seed) {}
  Evaluation evaluate(const EvaluationRequest& request) override;
  double exhaustive_cost_s(double) const override { return recording_.exhaustive_cost_s(); }

 private:
  const Recording& recording_;
  std::mt19937_64 rng_;
  std::set<std::string> compiled_;
};

}  // namespace varex::tuner
