#include "tuner/tuner.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace varex::tuner {

namespace {

// What the lowest power seen may be above a variant's own at least: the noise of one energy measurement (1 to
// 2% over five runs on the H100 and H200), doubled and some.
constexpr double kPowerMargin = 0.05;

// The incumbent a cut-off variant is projected from: the best so far by the objective, and its time.
struct Incumbent {
  double value = std::numeric_limits<double>::infinity();
  double time_ms = std::numeric_limits<double>::infinity();
};

Observation observation_of(const Proposal& p, const Evaluation& e, Objective objective,
                           const Incumbent& incumbent) {
  Observation o;
  o.params = p.params;
  o.fidelity = p.fidelity;
  o.cost_s = e.cost_s;
  // A variant cut off after one repetition has no energy, nor one too slow to beat the best's energy at the
  // lowest power seen (EvaluationRequest::energy_below_ms): it is valued as if it drew the incumbent's power
  // (energy grows with its time, edp with its square), which only steers the strategy; it is never a
  // candidate.
  o.cut_off = e.m.cut_off || e.energy_skipped;
  std::optional<double> value = e.m.ok() ? objective_value(e.m, objective) : std::nullopt;
  if (e.m.ok() && o.cut_off && objective != Objective::Time && std::isfinite(incumbent.time_ms)) {
    const double ratio = e.m.kernel.median / incumbent.time_ms;
    value = incumbent.value * (objective == Objective::Energy ? ratio : ratio * ratio);
  }
  o.ok = value.has_value();
  o.value = value.value_or(std::numeric_limits<double>::infinity());
  o.rel_ci = o.ok ? objective_rel_uncertainty(e.m, objective) : 0;
  return o;
}

// What the search has seen of the candidates for the re-measurement: per variant its best value (and that
// measurement's time) and what its evaluations cost (which estimates what measuring it again will).
struct Candidate {
  double value = std::numeric_limits<double>::infinity();
  double time_ms = std::numeric_limits<double>::infinity();
  double cost_s = 0;  // its search evaluation's, less the compilation (the program is cached by then)
  // Its result was compared in full on the host: the re-measurement checks it on the device.
  bool checked_on_host = false;
  double host_check_s = 0;  // what that comparison took, part of cost_s
  bool full_size = true;    // measured on the workload, not on its small instance
};

}  // namespace

double default_cutoff(Objective objective) {
  return objective == Objective::Energy ? 4.0 : 2.0;
}

namespace {

// One tune: the state the search, its budget and the re-measurement share, and a method per step of it.
class Tuning {
 public:
  Tuning(Strategy& strategy, SearchSpace& space, Evaluator& evaluator, const TuneSettings& settings,
         const StepCallback& on_step)
      : strategy_(strategy),
        space_(space),
        s_(space.space()),
        evaluator_(evaluator),
        settings_(settings),
        budget_(settings.budget),
        on_step_(on_step),
        timed_budget_(budget_.kind == Budget::Kind::Seconds || budget_.kind == Budget::Kind::Fraction) {
    out_.spent_s = settings.spent_before_s;
  }

  TuneOutcome run() {
    measure_default();
    measure_warm_start();
    search();
    say_what_would_search();
    remeasure_finalists();
    return out_;
  }

 private:
  double budget_s() const {
    const double mean = out_.evaluations ? (out_.spent_s - settings_.spent_before_s) / out_.evaluations : 0;
    return budget_.seconds(evaluator_.exhaustive_cost_s(mean));
  }

  // The variants the re-measurement will take, best first; the default always competes.
  std::vector<std::uint64_t> finalists() const {
    std::vector<std::pair<double, std::uint64_t>> ranked;
    for (const auto& [index, c] : candidates_) ranked.emplace_back(c.value, index);
    const std::size_t keep =
        std::min(ranked.size(), static_cast<std::size_t>(std::max(settings_.remeasure, 0)));
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end());
    std::vector<std::uint64_t> list;
    for (std::size_t i = 0; i < keep; ++i) list.push_back(ranked[i].second);
    // The default takes the last place where it is not among the best (a place of its own after a best
    // alone).
    if (!list.empty() && default_index_ && candidates_.count(*default_index_) &&
        std::find(list.begin(), list.end(), *default_index_) == list.end()) {
      if (list.size() >= 2) list.pop_back();
      list.push_back(*default_index_);
    }
    return list;
  }

  // A small instance's candidate at full size: its runs as long as the instance is smaller (an upper bound:
  // the join's small instance keeps its build side), ten of them (the protocol's minimum is five) over what
  // its evaluation cost; scaling the whole cost made a 30 s join tune keep 6.5 s for one finalist that took
  // under 1 s besides its comparison in full.
  double at_full_size(const Candidate& c) const { return c.full_size ? 1.0 : small_scale_; }
  double estimate_s(const Candidate& c) const {
    const double runs_s = std::max(0.0, c.cost_s - c.host_check_s);
    return c.full_size ? runs_s : runs_s + 10 * c.time_ms * (small_scale_ - 1) / 1e3;
  }

  // After a search on the small instance the default's re-measurement is left out where its full-size time
  // is over twice the best's, as the cut-off leaves out a variant over twice the incumbent's: the noise of
  // its measurement cannot make it the best (the join's default took 218 ms and 3.6 s to measure again, its
  // small instance's best 13.6 ms).
  bool default_hopeless(double best_ms) const {
    if (!small_ || !default_index_) return false;
    const auto it = candidates_.find(*default_index_);
    return it != candidates_.end() && it->second.full_size && it->second.value > 2 * best_ms;
  }

  // A candidate measured again costs what its search evaluation did, less a full comparison on the host that
  // evaluation had; the re-measurement compares one candidate in full, the one it declares best: one more
  // run and up to twice as long a comparison as the longest seen. The first is the default's, and another
  // variant's result may take longer to compare: on an H200 machine the 2^24 x 2^28 join's default took at
  // most 3 s of its 4.5 s evaluation, a unique-plan best's comparison 6.3 s, and a 60 s tune ran 67 s.
  double compared_in_full_s(const Candidate& c) const {
    return 2 * host_check_s_ + c.time_ms * at_full_size(c) / 1e3;
  }

  // A wall-time budget covers the re-measurement too: the search stops where what is left pays for the part
  // of it that must run, the best's and the default's (the other finalists are measured again only while the
  // budget pays for them). Keeping room for every finalist stopped 10% budgets of the selection sweep after
  // two evaluations, one of a variant with slow runs.
  double reserve_s() const {
    double sum = 0;
    if (!timed_budget_ || settings_.remeasure <= 0) return sum;
    const std::vector<std::uint64_t> list = finalists();
    for (std::uint64_t index : list) {
      const bool is_default = default_index_ && index == *default_index_;
      if (index != list.front() && !is_default) continue;
      const Candidate& best = candidates_.at(list.front());
      const bool skipped = index != list.front() && default_hopeless(best.value * at_full_size(best));
      if (!skipped) sum += estimate_s(candidates_.at(index));
    }
    if (evaluator_.replacement_pending()) sum += evaluator_.replacement_s();  // after a stop or a crash
    if (!list.empty() && !candidates_.at(list.front()).checked_on_host)
      sum += compared_in_full_s(candidates_.at(list.front()));
    return sum;
  }

  // What the next evaluation will cost: its runs, as the evaluations so far ran theirs, and a compilation
  // where its program is new. The session's first evaluation compiles and compares in full on the host
  // (0.80 s of a 2^22 relational join's 8.6 s sweep, whose other variants cost 18 ms on average): taken as
  // the mean, it ended 10% budgets after the default alone.
  // A workload's preparation (a small instance's first, a replaced worker's) is not a run either.
  double next_s(bool new_program) const {
    const double mean = runs_ ? run_s_ / static_cast<double>(runs_) : 0.0;
    // (Prepared beside the workload, the small instance is ready when the search starts on it.)
    const double preparing =
        small_ && evaluator_.replacement_pending(true) ? evaluator_.replacement_s(true) : 0.0;
    return mean + preparing + (new_program && compiles_ ? compile_s_ / static_cast<double>(compiles_) : 0.0);
  }

  void charge(const Evaluation& e) {
    const double compiling = e.m.compile_cached ? 0.0 : std::min(e.cost_s, e.m.compile_ms / 1e3);
    const double checking = std::min(e.cost_s - compiling, e.m.host_check_ms / 1e3);
    run_s_ += std::max(0.0, e.cost_s - compiling - checking - e.prepare_s);
    ++runs_;
    if (!e.m.compile_cached && e.m.status != Status::CompileError) compile_s_ += compiling, ++compiles_;
  }

  // `new_program`: whether the next evaluation compiles a program; false asks whether any evaluation (of a
  // program compiled before) still fits.
  bool exhausted(bool new_program = false) const {
    if (out_.evaluations == 0) return false;
    if (budget_.kind == Budget::Kind::Evaluations)
      return static_cast<double>(out_.evaluations) >= budget_.value;
    // An evaluation is started only while it still fits, and so does the re-measurement it adds where it
    // becomes the best (as costly as the best's now, or as its own runs are estimated): the session then ends
    // within its budget rather than part of an evaluation (a compile, a full comparison) over it. Without the
    // joining term a busy 2-core machine's 15 s tune spent 17.4 s.
    const double mean_s = next_s(new_program);
    const std::vector<std::uint64_t> list = finalists();
    double joining_s = 0;
    if (timed_budget_ && settings_.remeasure > 0) {
      joining_s = next_s(false);
      if (!list.empty()) joining_s = std::max(joining_s, estimate_s(candidates_.at(list.front())));
    }
    // And a new best is compared in full where the best now was compared before (so reserve_s has no
    // comparison): at 30 s a join's new best found late added 6.2 s.
    if (timed_budget_ && settings_.remeasure > 0 && !list.empty() &&
        candidates_.at(list.front()).checked_on_host)
      joining_s += compared_in_full_s(candidates_.at(list.front()));
    // And a variant that runs past the budget is stopped where a new worker can still prepare the workload
    // for the re-measurement: room for that, else a join tune stopped with 1 s left, then paid 9 s more. Not
    // on the small instance, whose worker the re-measurement does not use: keeping room to prepare it again
    // (6 s) left a 30 s join tune two evaluations.
    const double stop_s = timed_budget_ && !small_ ? evaluator_.replacement_s() : 0.0;
    return out_.spent_s + reserve_s() + mean_s + joining_s + stop_s >= budget_s();
  }

  // The best so far by the objective, and its time: what the cut-off compares a first repetition with.
  Incumbent incumbent() const {
    Incumbent i;
    if (out_.history.empty() || !std::isfinite(out_.history.back().best_value)) return i;
    i.value = out_.history.back().best_value;
    i.time_ms = candidates_.at(out_.history.back().best_index).time_ms;
    return i;
  }

  // Time is the search's proxy under energy and edp (TuneSettings::energy_proxy): a variant's energy is
  // measured (a second or so on NVML's counter) only where its time leaves it a chance to beat the best's
  // energy, were it to draw less than the lowest power seen by as much again as the powers seen differ (5% at
  // least, for noise). On the H200 the selection's variants drew 680-710 W: at the board's limit, energy
  // follows time, and the band is narrow; where powers differ widely, it widens with them.
  double energy_below_ms(double best_value) const {
    if (settings_.objective == Objective::Time || !settings_.energy_proxy || !std::isfinite(best_value) ||
        !std::isfinite(lowest_watts_))
      return std::numeric_limits<double>::infinity();
    const double spread = std::max(kPowerMargin, 1 - lowest_watts_ / highest_watts_);
    const double watts = lowest_watts_ * (1 - spread);
    const double seconds =
        settings_.objective == Objective::Energy ? best_value / watts : std::sqrt(best_value / watts);
    return seconds * 1e3;
  }

  Evaluation evaluate(const Proposal& p, const std::string& purpose, double compare_in_full_below_ms = 0) {
    EvaluationRequest request{p.params, p.fidelity, purpose};
    request.compare_in_full_below_ms = compare_in_full_below_ms;
    const double incumbent_ms = incumbent().time_ms;
    if (purpose == "search" && settings_.cutoff > 0 && std::isfinite(incumbent_ms))
      request.cutoff_ms = settings_.cutoff * incumbent_ms;
    if (purpose == "search") request.energy_below_ms = energy_below_ms(incumbent().value);
    if (timed_budget_) request.seconds_left = std::max(0.0, budget_s() - out_.spent_s - reserve_s());
    request.stoppable = timed_budget_ && purpose == "search" && out_.evaluations > 0;
    request.small = small_ && purpose == "search";
    Evaluation e = evaluator_.evaluate(request);
    e.energy_skipped =
        e.m.ok() && !e.m.cut_off && !e.m.energy && !(e.m.kernel.median < request.energy_below_ms);
    return e;
  }

  // One search evaluation measured: counted and charged.
  Evaluation measure(const Proposal& p) {
    space_.mark(p.params);
    const Evaluation e = evaluate(p, "search");
    ++out_.evaluations;
    out_.spent_s += e.cost_s;
    charge(e);
    if (e.small) ++out_.small_evaluations;
    if (e.m.ok() && e.m.energy) {
      lowest_watts_ = std::min(lowest_watts_, e.m.energy->watts());
      highest_watts_ = std::max(highest_watts_, e.m.energy->watts());
    }
    if (small_ && !e.small) small_ = false;  // the small instance could not be prepared: at full size on
    if (e.m.status != Status::CompileError) space_.note_compiled(p.params);
    if (!e.small) host_check_s_ = std::max(host_check_s_, e.m.host_check_ms / 1e3);
    return e;
  }

  // What the search learns of it: the strategy observes it (`observed`), the candidates keep it. The default
  // measured at full size before a search on the small instance is kept, not observed: the strategy and the
  // cut-off compare the small instance's values alone.
  void learn(const Proposal& p, const Evaluation& e, bool observed) {
    const Observation o = observation_of(p, e, settings_.objective, incumbent());
    if (observed) strategy_.observe(o);
    const std::uint64_t index = s_.index_of(p.params);
    TunePoint point{out_.evaluations, out_.spent_s, std::numeric_limits<double>::infinity(), 0};
    if (!out_.history.empty())
      point = {out_.evaluations, out_.spent_s, out_.history.back().best_value,
               out_.history.back().best_index};
    if (!o.ok) {
      ++out_.failed;
    } else {
      ++out_.ok;
      if (o.cut_off) {
        ++(e.m.cut_off ? out_.cut_off : out_.energy_skipped);
      } else {
        keep_candidate(index, o, e);
        // At the bandwidth bound nothing faster is left: measured in full, not a cheap look.
        const bool at_bound = settings_.objective == Objective::Time && settings_.at_bound > 0 &&
                              p.fidelity == 0 && e.m.probe_fraction >= settings_.at_bound;
        if (observed && o.value < point.best_value) {
          point = {out_.evaluations, out_.spent_s, o.value, index};
          best_seen_ = e.m;
          out_.stopped_at_bound = out_.stopped_at_bound || at_bound;
        }
      }
    }
    out_.history.push_back(point);
    if (on_step_ && !on_step_(out_, p, e)) stop_ = true;
  }

  // A verified evaluation that was not cut off, as a candidate for the re-measurement.
  void keep_candidate(std::uint64_t index, const Observation& o, const Evaluation& e) {
    Candidate& c = candidates_[index];
    if (o.value < c.value) {
      c.value = o.value;
      c.time_ms = e.m.kernel.median;
    }
    const double compile_s = e.m.compile_cached ? 0.0 : e.m.compile_ms / 1e3;
    c.cost_s = std::max(c.cost_s, o.cost_s - compile_s - e.prepare_s);
    c.full_size = !e.small;
    // A full comparison of the small instance's result says nothing of the workload's.
    if (e.m.checked == Check::Host) {
      c.checked_on_host = !e.small;
      c.host_check_s = std::max(c.host_check_s, e.m.host_check_ms / 1e3);
    }
  }

  void search_one(const Proposal& p) { learn(p, measure(p), true); }

  // Where what the default leaves of a budget in seconds would give a search at full size too little of it
  // (TuneSettings::small_share), the search runs on the small instance: preparing the 2^24 x 2^28 join took
  // 10 s of a 30 s tune on an H200 machine, its default 4.4 s, and the room for a stopped variant's new
  // worker 9 s more, so a search at full size had nothing left.
  bool choose_small(const Evaluation& e) const {
    using Mode = TuneSettings::SmallInstance;
    if (budget_.kind != Budget::Kind::Seconds || settings_.remeasure <= 0 || evaluator_.small_divisor() < 2 ||
        settings_.small_instance == Mode::Never)
      return false;
    if (settings_.small_instance == Mode::Always) return true;
    if (settings_.objective == Objective::Time && settings_.at_bound > 0 &&
        e.m.probe_fraction >= settings_.at_bound)
      return false;  // nothing faster to find
    // What is left once the default's re-measurement, its full comparison where it becomes a finalist
    // beside a new best, and the room for a stopped variant's new worker are kept.
    const double compiling = e.m.compile_cached ? 0.0 : e.m.compile_ms / 1e3;
    const double rerun_s = std::max(0.0, e.cost_s - compiling - e.m.host_check_ms / 1e3 - e.prepare_s);
    double left_s = budget_s() - out_.spent_s - rerun_s - evaluator_.replacement_s(false);
    if (e.m.checked == Check::Host) left_s -= 2 * host_check_s_ + e.m.kernel.median / 1e3;
    return left_s < settings_.small_share * budget_s();
  }

  // The default first, in every session: a search that finds nothing better still declares it.
  void measure_default() {
    const variants::Params defaults = s_.canonical(s_.defaults());
    if (!settings_.measure_default || !s_.valid(defaults) || space_.seen(defaults)) return;
    default_index_ = s_.index_of(defaults);
    const Evaluation e = measure({defaults, 0});
    if (choose_small(e)) {
      small_ = true;
      out_.small_divisor = evaluator_.small_divisor();
      small_scale_ = static_cast<double>(out_.small_divisor);
      // Until the small instance has run, its runs are taken as the workload's, that many times shorter.
      run_s_ /= small_scale_;
    }
    learn({defaults, 0}, e, !small_);
  }

  // Then what earlier sessions found best elsewhere.
  void measure_warm_start() {
    for (const variants::Params& p : settings_.warm_start) {
      const variants::Params point = s_.canonical(p);
      if (stop_ || out_.stopped_at_bound || exhausted(!space_.compiled(point))) break;
      if (s_.valid(point) && !space_.seen(point)) search_one({point, 0});
    }
  }

  // Then the strategy's proposals while the budget pays for them.
  void search() {
    while (!stop_ && !out_.stopped_at_bound && !exhausted()) {
      // Where what is left cannot pay for another compilation, the strategy draws from the programs compiled
      // so far: a short budget still searches their launch settings rather than end.
      space_.set_only_compiled(timed_budget_ && exhausted(true));
      const std::vector<Proposal> batch = strategy_.propose(space_);
      if (batch.empty()) {
        out_.space_exhausted = !space_.only_compiled();
        break;
      }
      if (evaluate_batch(batch) == 0 && space_.only_compiled()) break;  // nothing the strategy offers fits
    }
  }

  // The batch's variants in order, while they fit; how many were evaluated.
  std::size_t evaluate_batch(const std::vector<Proposal>& batch) {
    std::size_t evaluated = 0;
    for (std::size_t i = 0; i < batch.size() && !stop_ && !out_.stopped_at_bound; ++i) {
      const bool new_program = !space_.compiled(batch[i].params);
      if (exhausted(new_program)) {
        if (!new_program || exhausted()) {
          stop_ = true;
          break;
        }
        continue;  // its compilation does not fit, a variant of a compiled program still does
      }
      std::vector<variants::Params> next;
      for (std::size_t j = i + 1; j < batch.size(); ++j) next.push_back(batch[j].params);
      evaluator_.upcoming(next);
      search_one(batch[i]);
      ++evaluated;
    }
    return evaluated;
  }

  // A budget that paid for the default alone says what one that searches would take: what was spent, the
  // re-measurement, and twenty evaluations as the next would cost.
  void say_what_would_search() {
    if (!timed_budget_ || !default_index_ || out_.evaluations != 1 || out_.stopped_at_bound ||
        out_.space_exhausted)
      return;
    double needed =
        out_.spent_s + reserve_s() + (small_ ? 0.0 : evaluator_.replacement_s()) + 20 * next_s(true);
    const std::vector<std::uint64_t> list = finalists();
    if (!list.empty() && candidates_.at(list.front()).checked_on_host)
      needed += compared_in_full_s(candidates_.at(list.front()));
    out_.needed_s = 5 * std::ceil(needed / 5);
  }

  // Measurements are noisy, and cheap ones (halving) noisier: the best few and the default are measured
  // again with the full protocol before one is declared best.
  void remeasure_finalists() {
    const std::vector<std::uint64_t> list = finalists();
    if (settings_.remeasure <= 0) {
      if (!out_.history.empty() && std::isfinite(out_.history.back().best_value)) {
        out_.best = s_.at(out_.history.back().best_index);
        out_.best_value = out_.history.back().best_value;
        out_.best_measurement = best_seen_;
      }
      return;
    }
    // A finalist the session compared in full before is checked by its digest; any other is compared in full
    // too where its time beats every finalist compared in full so far (the first always): a wrong variant is
    // never declared best, and no time goes to comparing in full one that cannot be. Under energy or edp the
    // device compares before the energy is known: every finalist not compared before is compared in full.
    for (std::size_t i = 0; i < list.size(); ++i) {
      // The best and the default are always measured again; the others while the budget pays for them.
      const bool is_default = default_index_ && list[i] == *default_index_;
      if (i > 0 && is_default && out_.best && default_hopeless(out_.best_value)) continue;
      const bool required = i == 0 || is_default;
      const Candidate& c = candidates_.at(list[i]);
      if (!required && timed_budget_ && out_.spent_s + estimate_s(c) > budget_s()) continue;
      const variants::Params params = s_.at(list[i]);
      const double compare_below = c.checked_on_host ? 0.0
                                   : settings_.objective == Objective::Time
                                       ? out_.best_value
                                       : std::numeric_limits<double>::infinity();
      const Evaluation e = evaluate({params, 0}, "remeasure", compare_below);
      ++out_.remeasured;
      out_.spent_s += e.cost_s;
      const bool compared = c.checked_on_host || e.m.checked == Check::Host;
      const std::optional<double> value = e.m.ok() ? objective_value(e.m, settings_.objective) : std::nullopt;
      if (value && compared && *value < out_.best_value) {
        out_.best = params;
        out_.best_value = *value;
        out_.best_measurement = e.m;
      }
    }
    // (Not after a search on the small instance, whose values are not the workload's.)
    if (out_.best && out_.small_evaluations == 0 && !out_.history.empty() &&
        std::isfinite(out_.history.back().best_value) &&
        s_.index_of(*out_.best) != out_.history.back().best_index) {
      out_.search_best = s_.at(out_.history.back().best_index);
      out_.search_best_value = out_.history.back().best_value;
    }
  }

  Strategy& strategy_;
  SearchSpace& space_;
  const variants::Space& s_;
  Evaluator& evaluator_;
  const TuneSettings& settings_;
  const Budget& budget_;
  const StepCallback& on_step_;
  const bool timed_budget_;
  TuneOutcome out_;
  std::map<std::uint64_t, Candidate> candidates_;  // verified, not cut off, by index in the space
  std::optional<std::uint64_t> default_index_;
  std::optional<varex::Measurement> best_seen_;
  bool stop_ = false;
  // Low fidelity (TuneSettings::small_instance): the search measures the small instance, `small_scale_`
  // times smaller; estimate_s says what its candidates will cost at full size.
  bool small_ = false;
  double small_scale_ = 1;
  double host_check_s_ = 0;  // the longest comparison in full at full size
  // What the evaluations so far cost: their runs and their compilations (next_s).
  double run_s_ = 0, compile_s_ = 0;
  std::int64_t runs_ = 0, compiles_ = 0;
  double lowest_watts_ = std::numeric_limits<double>::infinity(), highest_watts_ = 0;
};

}  // namespace

TuneOutcome run_tuning(Strategy& strategy, SearchSpace& space, Evaluator& evaluator,
                       const TuneSettings& settings, const StepCallback& on_step) {
  return Tuning(strategy, space, evaluator, settings, on_step).run();
}

}  // namespace varex::tuner
