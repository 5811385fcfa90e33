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

TuneOutcome run_tuning(Strategy& strategy, SearchSpace& space, Evaluator& evaluator,
                       const TuneSettings& settings, const StepCallback& on_step) {
  TuneOutcome out;
  out.spent_s = settings.spent_before_s;
  const variants::Space& s = space.space();
  const Budget& budget = settings.budget;
  const bool timed_budget = budget.kind == Budget::Kind::Seconds || budget.kind == Budget::Kind::Fraction;
  std::map<std::uint64_t, Candidate> candidates;  // verified, not cut off, by index in the space
  std::optional<std::uint64_t> default_index;
  std::optional<varex::Measurement> best_seen;
  // Low fidelity (TuneSettings::small_instance): the search measures the small instance, `small_scale`
  // times smaller; estimate_s says what its candidates will cost at full size.
  bool small = false;
  double small_scale = 1;
  auto budget_s = [&] {
    const double mean = out.evaluations ? (out.spent_s - settings.spent_before_s) / out.evaluations : 0;
    return budget.seconds(evaluator.exhaustive_cost_s(mean));
  };
  // The variants the re-measurement will take, best first; the default always competes.
  auto finalists = [&] {
    std::vector<std::pair<double, std::uint64_t>> ranked;
    for (const auto& [index, c] : candidates) ranked.emplace_back(c.value, index);
    const std::size_t keep =
        std::min(ranked.size(), static_cast<std::size_t>(std::max(settings.remeasure, 0)));
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end());
    std::vector<std::uint64_t> list;
    for (std::size_t i = 0; i < keep; ++i) list.push_back(ranked[i].second);
    // The default takes the last place where it is not among the best (a place of its own after a best
    // alone).
    if (!list.empty() && default_index && candidates.count(*default_index) &&
        std::find(list.begin(), list.end(), *default_index) == list.end()) {
      if (list.size() >= 2) list.pop_back();
      list.push_back(*default_index);
    }
    return list;
  };
  // A candidate measured again costs what its search evaluation did, less a full comparison on the host that
  // evaluation had; the re-measurement compares one candidate in full, the one it declares best: one more
  // run and up to twice as long a comparison as the longest seen. The first is the default's, and another
  // variant's result may take longer to compare: on an H200 machine the 2^24 x 2^28 join's default took at
  // most 3 s of its 4.5 s evaluation, a unique-plan best's comparison 6.3 s, and a 60 s tune ran 67 s.
  double host_check_s = 0;  // the longest at full size
  // A small instance's candidate at full size: its runs as long as the instance is smaller (an upper bound:
  // the join's small instance keeps its build side), ten of them (the protocol's minimum is five) over what
  // its evaluation cost; scaling the whole cost made a 30 s join tune keep 6.5 s for one finalist that took
  // under 1 s besides its comparison in full.
  auto at_full_size = [&](const Candidate& c) { return c.full_size ? 1.0 : small_scale; };
  auto estimate_s = [&](const Candidate& c) {
    const double runs_s = std::max(0.0, c.cost_s - c.host_check_s);
    return c.full_size ? runs_s : runs_s + 10 * c.time_ms * (small_scale - 1) / 1e3;
  };
  // After a search on the small instance the default's re-measurement is left out where its full-size time
  // is over twice the best's, as the cut-off leaves out a variant over twice the incumbent's: the noise of
  // its measurement cannot make it the best (the join's default took 218 ms and 3.6 s to measure again, its
  // small instance's best 13.6 ms).
  auto default_hopeless = [&](double best_ms) {
    return small && default_index && candidates.count(*default_index) &&
           candidates[*default_index].full_size && candidates[*default_index].value > 2 * best_ms;
  };
  auto compared_in_full_s = [&](const Candidate& c) {
    return 2 * host_check_s + c.time_ms * at_full_size(c) / 1e3;
  };
  // A wall-time budget covers the re-measurement too: the search stops where what is left pays for the part
  // of it that must run, the best's and the default's (the other finalists are measured again only while the
  // budget pays for them). Keeping room for every finalist stopped 10% budgets of the selection sweep after
  // two evaluations, one of a variant with slow runs.
  auto reserve_s = [&] {
    double sum = 0;
    if (!timed_budget || settings.remeasure <= 0) return sum;
    const std::vector<std::uint64_t> list = finalists();
    for (std::uint64_t index : list) {
      const bool is_default = default_index && index == *default_index;
      if (index != list.front() && !is_default) continue;
      const bool skipped = index != list.front() && default_hopeless(candidates[list.front()].value *
                                                                     at_full_size(candidates[list.front()]));
      if (!skipped) sum += estimate_s(candidates[index]);
    }
    if (evaluator.replacement_pending()) sum += evaluator.replacement_s();  // after a stop or a crash
    if (!list.empty() && !candidates[list.front()].checked_on_host)
      sum += compared_in_full_s(candidates[list.front()]);
    return sum;
  };
  // What the next evaluation will cost: its runs, as the evaluations so far ran theirs, and a compilation
  // where its program is new. The session's first evaluation compiles and compares in full on the host
  // (0.80 s of a 2^22 relational join's 8.6 s sweep, whose other variants cost 18 ms on average): taken as
  // the mean, it ended 10% budgets after the default alone.
  // A workload's preparation (a small instance's first, a replaced worker's) is not a run either.
  double run_s = 0, compile_s = 0;
  std::int64_t runs = 0, compiles = 0;
  auto next_s = [&](bool new_program) {
    const double mean = runs ? run_s / static_cast<double>(runs) : 0.0;
    // (Prepared beside the workload, the small instance is ready when the search starts on it.)
    const double preparing =
        small && evaluator.replacement_pending(true) ? evaluator.replacement_s(true) : 0.0;
    return mean + preparing + (new_program && compiles ? compile_s / static_cast<double>(compiles) : 0.0);
  };
  auto charge = [&](const Evaluation& e) {
    const double compiling = e.m.compile_cached ? 0.0 : std::min(e.cost_s, e.m.compile_ms / 1e3);
    const double checking = std::min(e.cost_s - compiling, e.m.host_check_ms / 1e3);
    run_s += std::max(0.0, e.cost_s - compiling - checking - e.prepare_s);
    ++runs;
    if (!e.m.compile_cached && e.m.status != Status::CompileError) compile_s += compiling, ++compiles;
  };
  // `new_program`: whether the next evaluation compiles a program; false asks whether any evaluation (of a
  // program compiled before) still fits.
  auto exhausted = [&](bool new_program = false) {
    if (out.evaluations == 0) return false;
    if (budget.kind == Budget::Kind::Evaluations) return static_cast<double>(out.evaluations) >= budget.value;
    // An evaluation is started only while it still fits, and so does the re-measurement it adds where it
    // becomes the best (as costly as the best's now, or as its own runs are estimated): the session then ends
    // within its budget rather than part of an evaluation (a compile, a full comparison) over it. Without the
    // joining term a busy 2-core machine's 15 s tune spent 17.4 s.
    const double mean_s = next_s(new_program);
    const std::vector<std::uint64_t> list = finalists();
    double joining_s = 0;
    if (timed_budget && settings.remeasure > 0) {
      joining_s = next_s(false);
      if (!list.empty()) joining_s = std::max(joining_s, estimate_s(candidates[list.front()]));
    }
    // And a new best is compared in full where the best now was compared before (so reserve_s has no
    // comparison): at 30 s a join's new best found late added 6.2 s.
    if (timed_budget && settings.remeasure > 0 && !list.empty() && candidates[list.front()].checked_on_host)
      joining_s += compared_in_full_s(candidates[list.front()]);
    // And a variant that runs past the budget is stopped where a new worker can still prepare the workload
    // for the re-measurement: room for that, else a join tune stopped with 1 s left, then paid 9 s more. Not
    // on the small instance, whose worker the re-measurement does not use: keeping room to prepare it again
    // (6 s) left a 30 s join tune two evaluations.
    const double stop_s = timed_budget && !small ? evaluator.replacement_s() : 0.0;
    return out.spent_s + reserve_s() + mean_s + joining_s + stop_s >= budget_s();
  };
  // The best so far by the objective, and its time: what the cut-off compares a first repetition with.
  auto incumbent = [&] {
    Incumbent i;
    if (out.history.empty() || !std::isfinite(out.history.back().best_value)) return i;
    i.value = out.history.back().best_value;
    i.time_ms = candidates.at(out.history.back().best_index).time_ms;
    return i;
  };
  // Time is the search's proxy under energy and edp (TuneSettings::energy_proxy): a variant's energy is
  // measured (a second or so on NVML's counter) only where its time leaves it a chance to beat the best's
  // energy, were it to draw less than the lowest power seen by as much again as the powers seen differ (5% at
  // least, for noise). On the H200 the selection's variants drew 680-710 W: at the board's limit, energy
  // follows time, and the band is narrow; where powers differ widely, it widens with them.
  double lowest_watts = std::numeric_limits<double>::infinity(), highest_watts = 0;
  auto energy_below_ms = [&](double best_value) {
    if (settings.objective == Objective::Time || !settings.energy_proxy || !std::isfinite(best_value) ||
        !std::isfinite(lowest_watts))
      return std::numeric_limits<double>::infinity();
    const double spread = std::max(kPowerMargin, 1 - lowest_watts / highest_watts);
    const double watts = lowest_watts * (1 - spread);
    const double seconds =
        settings.objective == Objective::Energy ? best_value / watts : std::sqrt(best_value / watts);
    return seconds * 1e3;
  };
  auto evaluate = [&](const Proposal& p, const std::string& purpose, double compare_in_full_below_ms = 0) {
    EvaluationRequest request{p.params, p.fidelity, purpose};
    request.compare_in_full_below_ms = compare_in_full_below_ms;
    const double incumbent_ms = incumbent().time_ms;
    if (purpose == "search" && settings.cutoff > 0 && std::isfinite(incumbent_ms))
      request.cutoff_ms = settings.cutoff * incumbent_ms;
    if (purpose == "search") request.energy_below_ms = energy_below_ms(incumbent().value);
    if (timed_budget) request.seconds_left = std::max(0.0, budget_s() - out.spent_s - reserve_s());
    request.stoppable = timed_budget && purpose == "search" && out.evaluations > 0;
    request.small = small && purpose == "search";
    Evaluation e = evaluator.evaluate(request);
    e.energy_skipped =
        e.m.ok() && !e.m.cut_off && !e.m.energy && !(e.m.kernel.median < request.energy_below_ms);
    return e;
  };

  // One search evaluation measured: counted and charged.
  bool stop = false;
  auto measure = [&](const Proposal& p) {
    space.mark(p.params);
    const Evaluation e = evaluate(p, "search");
    ++out.evaluations;
    out.spent_s += e.cost_s;
    charge(e);
    if (e.small) ++out.small_evaluations;
    if (e.m.ok() && e.m.energy) {
      lowest_watts = std::min(lowest_watts, e.m.energy->watts());
      highest_watts = std::max(highest_watts, e.m.energy->watts());
    }
    if (small && !e.small) small = false;  // the small instance could not be prepared: at full size on
    if (e.m.status != Status::CompileError) space.note_compiled(p.params);
    if (!e.small) host_check_s = std::max(host_check_s, e.m.host_check_ms / 1e3);
    return e;
  };
  // What the search learns of it: the strategy observes it (`observed`), the candidates keep it. The default
  // measured at full size before a search on the small instance is kept, not observed: the strategy and the
  // cut-off compare the small instance's values alone.
  auto learn = [&](const Proposal& p, const Evaluation& e, bool observed) {
    const Observation o = observation_of(p, e, settings.objective, incumbent());
    if (observed) strategy.observe(o);
    const std::uint64_t index = s.index_of(p.params);
    TunePoint point{out.evaluations, out.spent_s, std::numeric_limits<double>::infinity(), 0};
    if (!out.history.empty())
      point = {out.evaluations, out.spent_s, out.history.back().best_value, out.history.back().best_index};
    if (o.ok) {
      ++out.ok;
      if (o.cut_off) {
        ++(e.m.cut_off ? out.cut_off : out.energy_skipped);
      } else {
        Candidate& c = candidates[index];
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
        // At the bandwidth bound nothing faster is left: measured in full, not a cheap look.
        const bool at_bound = settings.objective == Objective::Time && settings.at_bound > 0 &&
                              p.fidelity == 0 && e.m.probe_fraction >= settings.at_bound;
        if (observed && o.value < point.best_value) {
          point = {out.evaluations, out.spent_s, o.value, index};
          best_seen = e.m;
          out.stopped_at_bound = out.stopped_at_bound || at_bound;
        }
      }
    } else {
      ++out.failed;
    }
    out.history.push_back(point);
    if (on_step && !on_step(out, p, e)) stop = true;
  };
  auto search = [&](const Proposal& p) { learn(p, measure(p), true); };

  // The default first, in every session: a search that finds nothing better still declares it. Then what
  // earlier sessions found best elsewhere.
  // Where what the default leaves of a budget in seconds would give a search at full size too little of it
  // (TuneSettings::small_share), the search runs on the small instance: preparing the 2^24 x 2^28 join took
  // 10 s of a 30 s tune on an H200 machine, its default 4.4 s, and the room for a stopped variant's new
  // worker 9 s more, so a search at full size had nothing left.
  const variants::Params defaults = s.canonical(s.defaults());
  auto choose_small = [&](const Evaluation& e) {
    using Mode = TuneSettings::SmallInstance;
    if (budget.kind != Budget::Kind::Seconds || settings.remeasure <= 0 || evaluator.small_divisor() < 2 ||
        settings.small_instance == Mode::Never)
      return false;
    if (settings.small_instance == Mode::Always) return true;
    if (settings.objective == Objective::Time && settings.at_bound > 0 &&
        e.m.probe_fraction >= settings.at_bound)
      return false;  // nothing faster to find
    // What is left once the default's re-measurement, its full comparison where it becomes a finalist
    // beside a new best, and the room for a stopped variant's new worker are kept.
    const double compiling = e.m.compile_cached ? 0.0 : e.m.compile_ms / 1e3;
    const double rerun_s = std::max(0.0, e.cost_s - compiling - e.m.host_check_ms / 1e3 - e.prepare_s);
    double left_s = budget_s() - out.spent_s - rerun_s - evaluator.replacement_s(false);
    if (e.m.checked == Check::Host) left_s -= 2 * host_check_s + e.m.kernel.median / 1e3;
    return left_s < settings.small_share * budget_s();
  };
  if (settings.measure_default && s.valid(defaults) && !space.seen(defaults)) {
    default_index = s.index_of(defaults);
    const Evaluation e = measure({defaults, 0});
    if (choose_small(e)) {
      small = true;
      out.small_divisor = evaluator.small_divisor();
      small_scale = static_cast<double>(out.small_divisor);
      // Until the small instance has run, its runs are taken as the workload's, that many times shorter.
      run_s /= small_scale;
    }
    learn({defaults, 0}, e, !small);
  }
  for (const variants::Params& p : settings.warm_start) {
    const variants::Params point = s.canonical(p);
    if (stop || out.stopped_at_bound || exhausted(!space.compiled(point))) break;
    if (s.valid(point) && !space.seen(point)) search({point, 0});
  }
  while (!stop && !out.stopped_at_bound && !exhausted()) {
    // Where what is left cannot pay for another compilation, the strategy draws from the programs compiled
    // so far: a short budget still searches their launch settings rather than end.
    space.set_only_compiled(timed_budget && exhausted(true));
    const std::vector<Proposal> batch = strategy.propose(space);
    if (batch.empty()) {
      out.space_exhausted = !space.only_compiled();
      break;
    }
    std::size_t evaluated = 0;
    for (std::size_t i = 0; i < batch.size() && !stop && !out.stopped_at_bound; ++i) {
      const bool new_program = !space.compiled(batch[i].params);
      if (exhausted(new_program)) {
        if (!new_program || exhausted()) {
          stop = true;
          break;
        }
        continue;  // its compilation does not fit, a variant of a compiled program still does
      }
      std::vector<variants::Params> next;
      for (std::size_t j = i + 1; j < batch.size(); ++j) next.push_back(batch[j].params);
      evaluator.upcoming(next);
      search(batch[i]);
      ++evaluated;
    }
    if (evaluated == 0 && space.only_compiled()) break;  // nothing the strategy offers fits
  }

  // A budget that paid for the default alone says what one that searches would take: what was spent, the
  // re-measurement, and twenty evaluations as the next would cost.
  if (timed_budget && default_index && out.evaluations == 1 && !out.stopped_at_bound &&
      !out.space_exhausted) {
    double needed = out.spent_s + reserve_s() + (small ? 0.0 : evaluator.replacement_s()) + 20 * next_s(true);
    const std::vector<std::uint64_t> list = finalists();
    if (!list.empty() && candidates[list.front()].checked_on_host)
      needed += compared_in_full_s(candidates[list.front()]);
    out.needed_s = 5 * std::ceil(needed / 5);
  }

  // Measurements are noisy, and cheap ones (halving) noisier: the best few and the default are measured
  // again with the full protocol before one is declared best.
  const std::vector<std::uint64_t> list = finalists();
  if (settings.remeasure <= 0) {
    if (!out.history.empty() && std::isfinite(out.history.back().best_value)) {
      out.best = s.at(out.history.back().best_index);
      out.best_value = out.history.back().best_value;
      out.best_measurement = best_seen;
    }
    return out;
  }
  // A finalist the session compared in full before is checked by its digest; any other is compared in full
  // too where its time beats every finalist compared in full so far (the first always): a wrong variant is
  // never declared best, and no time goes to comparing in full one that cannot be. Under energy or edp the
  // device compares before the energy is known: every finalist not compared before is compared in full.
  for (std::size_t i = 0; i < list.size(); ++i) {
    // The best and the default are always measured again; the others while the budget pays for them.
    const bool is_default = default_index && list[i] == *default_index;
    if (i > 0 && is_default && out.best && default_hopeless(out.best_value)) continue;
    const bool required = i == 0 || is_default;
    Candidate& c = candidates[list[i]];
    if (!required && timed_budget && out.spent_s + estimate_s(c) > budget_s()) continue;
    const variants::Params params = s.at(list[i]);
    const double compare_below = c.checked_on_host ? 0.0
                                 : settings.objective == Objective::Time
                                     ? out.best_value
                                     : std::numeric_limits<double>::infinity();
    const Evaluation e = evaluate({params, 0}, "remeasure", compare_below);
    ++out.remeasured;
    out.spent_s += e.cost_s;
    const bool compared = c.checked_on_host || e.m.checked == Check::Host;
    const std::optional<double> value = e.m.ok() ? objective_value(e.m, settings.objective) : std::nullopt;
    if (value && compared && *value < out.best_value) {
      out.best = params;
      out.best_value = *value;
      out.best_measurement = e.m;
    }
  }
  // (Not after a search on the small instance, whose values are not the workload's.)
  if (out.best && out.small_evaluations == 0 && !out.history.empty() &&
      std::isfinite(out.history.back().best_value) &&
      s.index_of(*out.best) != out.history.back().best_index) {
    out.search_best = s.at(out.history.back().best_index);
    out.search_best_value = out.history.back().best_value;
  }
  return out;
}

}  // namespace varex::tuner
