#pragma once
// Replay: a recorded sweep stands in for the device, so strategies run in milliseconds and without a GPU.
// A full-fidelity evaluation returns the recorded measurement; a cheap one (k repetitions) the median of k
// samples drawn from the recorded repetitions. Costs are charged as the live tuner spends them: each
// variant's fixed cost (transfers, verification) and its runs (the verified run, a warm-up and the timed
// repetitions, k of them at fidelity k), plus a compile-time variant's compilation the first time the replay
// meets it — less what a background compile (prefetch) hid, where the recorded device compiles ahead.
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

#include "results/store.hpp"
#include "tuner/evaluator.hpp"

namespace varex::tuner {

class Recording {
 public:
  // `space` is the operator's full space for the recorded device and workload. `background_compile`: the
  // live tuner compiles the programs of a batch's later variants while the earlier ones are measured (GPU
  // devices; harness::Engine::prefetch), so the replay does too.
  Recording(const variants::Space& space, std::vector<results::RecordedMeasurement> measurements,
            bool background_compile = false);

  // The full space restricted to the recorded variants: strategies only propose what can be replayed.
  const variants::Space& space() const { return space_; }
  const results::RecordedMeasurement* find(const variants::Params& params) const;
  std::size_t size() const { return by_index_.size(); }
  double optimum_ms() const { return optimum_ms_; }
  // The fastest recorded variant (nullopt when none verified).
  const std::optional<variants::Params>& optimum() const { return optimum_; }
  // The recorded time of a variant (infinite when it failed or was not recorded).
  double true_ms(const variants::Params& params) const;
  // What the sweep spent measuring every recorded variant: the recorded wall times (estimates for rows
  // recorded before schema version 2).
  double exhaustive_cost_s() const { return exhaustive_cost_s_; }
  bool background_compile() const { return background_compile_; }
  double compile_cost_s(const variants::Params& params) const;
  // The cost of running one variant at a fidelity (0: as recorded), compilation excluded.
  double run_cost_s(const results::RecordedMeasurement& r, Fidelity fidelity) const;
  // How long comparing a result in full on the host takes (the longest recorded in the session): what the
  // live tuner pays for its first result and for a finalist that beats those compared in full.
  double host_check_s() const { return host_check_s_; }
  // What of a recorded measurement's cost was its comparison in full (0 for one checked on the device).
  double host_check_of_s(const results::RecordedMeasurement& r) const;
  // The timed repetitions a measurement at `fidelity` takes: k at fidelity k, unless the recorded full
  // protocol stopped earlier (the live tuner would have too).
  static std::size_t repetitions(const results::RecordedMeasurement& r, Fidelity fidelity);

 private:
  // What a measurement spent beyond its runs and the compilation it waited for.
  double fixed_ms_of(const varex::Measurement& m) const;

  variants::Space full_;   // the operator's space: by_index_'s indices
  variants::Space space_;  // what can be replayed
  std::unordered_map<std::uint64_t, results::RecordedMeasurement> by_index_;
  std::map<std::string, double> compile_ms_;  // per compile key
  double optimum_ms_;
  std::optional<variants::Params> optimum_;
  double exhaustive_cost_s_ = 0;
  double host_check_s_ = 0;
  double typical_fixed_ms_ = 0;
  std::unordered_map<std::int64_t, double> inferred_check_s_;  // by measurement id, where not recorded
  bool background_compile_ = false;
};

class ReplayEvaluator final : public Evaluator {
 public:
  ReplayEvaluator(const Recording& recording, std::uint64_t seed) : recording_(recording), rng_(seed) {}
  Evaluation evaluate(const EvaluationRequest& request) override;
  void upcoming(const std::vector<variants::Params>& params) override;
  double exhaustive_cost_s(double) const override { return recording_.exhaustive_cost_s(); }

 private:
  const Recording& recording_;
  std::mt19937_64 rng_;
  std::set<std::string> compiled_;
  // Background compiles in flight: compile key -> the replay's clock when it started.
  std::map<std::string, double> prefetched_;
  double clock_s_ = 0;             // everything charged so far
  bool compared_in_full_ = false;  // a result of this replay was compared in full (the session's first)
};

}  // namespace varex::tuner
