#pragma once
// What the tuning driver asks of the world: measure this variant. A device (tuner/device_evaluator.hpp)
// or a recorded sweep (tuner/replay.hpp) answers.
#include <string>
#include <vector>

#include "harness/measure.hpp"
#include "tuner/strategy.hpp"

namespace varex::tuner {

struct Evaluation {
  varex::Measurement m;
  double cost_s = 0;  // what it cost: compilation, runs, transfers, verification
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // `purpose` is "search" or "remeasure" (the final check of the best candidates).
  virtual Evaluation evaluate(const variants::Params& params, Fidelity fidelity,
                              const std::string& purpose) = 0;
  // Variants likely to be evaluated next, so that their programs can be compiled meanwhile.
  virtual void upcoming(const std::vector<variants::Params>& params) { (void)params; }
  // The (estimated) cost of evaluating every valid variant once.
  virtual double exhaustive_cost_s(double mean_cost_s) const = 0;
};

}  // namespace varex::tuner
