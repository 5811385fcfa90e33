#pragma once
// What the tuning driver asks of the world: measure this variant. A device (tuner/device_evaluator.hpp)
// or a recorded sweep (tuner/replay.hpp) answers.
#include <limits>
#include <string>
#include <vector>

#include "harness/measure.hpp"
#include "tuner/strategy.hpp"

namespace varex::tuner {

// One evaluation the driver asks for, decided once: what to measure and within which limits.
struct EvaluationRequest {
  variants::Params params;
  Fidelity fidelity = 0;
  std::string purpose = "search";  // or "remeasure": the final check of the best candidates
  // Cut the variant off after one repetition when it is slower than this (0: never); tuner/tuner.hpp.
  double cutoff_ms = 0;
  // What is left of a wall-time budget: the timed repetitions stop before it runs out.
  double seconds_left = std::numeric_limits<double>::infinity();
  // The evaluator may stop the variant where it would run past seconds_left (a search evaluation but the
  // session's first): a kernel is not stopped once it runs, its process is (a join variant whose one run
  // took 17 s made a 60 s tune take 77.6 s).
  bool stoppable = false;
  // Compare the result in full on the host, not only by its digest on the device, where its time comes out
  // below this (infinity: always; 0: never): the driver's re-measurement asks for it of a candidate that can
  // still be declared best (tuner/tuner.cpp).
  double compare_in_full_below_ms = 0;
  // Measure the energy (where the session measures it) only where the time comes out below this: a variant
  // slower cannot beat the best's energy unless it drew less power than any seen (tuner/tuner.cpp).
  double energy_below_ms = std::numeric_limits<double>::infinity();
  // Measure on the evaluator's small instance of the workload (small_divisor() times smaller) instead of the
  // workload itself: a short tune's search at low fidelity (tuner/tuner.hpp).
  bool small = false;
};

struct Evaluation {
  varex::Measurement m;
  double cost_s = 0;  // what it cost: compilation, runs, transfers, verification
  // The part of cost_s spent preparing the workload first (a small instance's first use, a replaced worker):
  // not what the next evaluation of a prepared workload will cost.
  double prepare_s = 0;
  bool small = false;  // measured on the small instance (asked for, and it could be prepared)
  // Its energy was not asked for: its time came out at or above the request's energy_below_ms.
  bool energy_skipped = false;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual Evaluation evaluate(const EvaluationRequest& request) = 0;
  // Variants likely to be evaluated next, so that their programs can be compiled meanwhile.
  virtual void upcoming(const std::vector<variants::Params>& params) { (void)params; }
  // The (estimated) cost of evaluating every valid variant once.
  virtual double exhaustive_cost_s(double mean_cost_s) const = 0;
  // What a stopped evaluation costs afterwards before the next can measure (a new worker prepares the
  // workload again: 9 s for a 2^24 x 2^28 join on an H200 machine), and whether the next one of the
  // workload pays it. `small`: of the small instance, which its own worker holds; the re-measurement does
  // not need it, so a stop there costs the search only (what its next evaluation prepares again).
  virtual double replacement_s(bool small = false) const {
    (void)small;
    return 0;
  }
  virtual bool replacement_pending(bool small = false) const {
    (void)small;
    return false;
  }
  // How many times smaller the small instance of the workload is that requests may ask for
  // (EvaluationRequest::small); 0 where there is none (a replay, data read from files, or one that failed
  // to prepare).
  virtual std::uint64_t small_divisor() const { return 0; }
};

}  // namespace varex::tuner
