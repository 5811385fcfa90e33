#include "tuner/tuner.hpp"

#include <algorithm>
#include <map>

namespace varex::tuner {

namespace {

Observation observation_of(const Proposal& p, const Evaluation& e) {
  Observation o;
  o.params = p.params;
  o.fidelity = p.fidelity;
  o.ok = e.m.ok();
  o.time_ms = o.ok ? e.m.kernel.median : std::numeric_limits<double>::infinity();
  o.rel_ci = o.ok ? e.m.kernel.relative_ci() : 0;
  o.cost_s = e.cost_s;
  return o;
}

}  // namespace

TuneOutcome run_tuning(Strategy& strategy, SearchSpace& space, Evaluator& evaluator,
                       const TuneSettings& settings, const StepCallback& on_step) {
  TuneOutcome out;
  const variants::Space& s = space.space();
  // The best observed time per variant (any fidelity), for the final re-measurement.
  std::map<std::uint64_t, double> observed;
  std::optional<varex::Measurement> best_seen;
  auto exhausted = [&] {
    const double mean = out.evaluations ? out.spent_s / static_cast<double>(out.evaluations) : 0;
    return out.evaluations > 0 &&
           settings.budget.exhausted(out.evaluations, out.spent_s, evaluator.exhaustive_cost_s(mean));
  };
  bool stop = false;
  while (!stop && !exhausted()) {
    const std::vector<Proposal> batch = strategy.propose(space);
    if (batch.empty()) {
      out.space_exhausted = true;
      break;
    }
    for (std::size_t i = 0; i < batch.size() && !stop; ++i) {
      if (exhausted()) {
        stop = true;
        break;
      }
      const Proposal& p = batch[i];
      std::vector<variants::Params> next;
      for (std::size_t j = i + 1; j < batch.size(); ++j) next.push_back(batch[j].params);
      evaluator.upcoming(next);
      space.mark(p.params);
      const Evaluation e = evaluator.evaluate(p.params, p.fidelity, "search");
      ++out.evaluations;
      out.spent_s += e.cost_s;
      const Observation o = observation_of(p, e);
      strategy.observe(o);
      const std::uint64_t index = s.index_of(p.params);
      TunePoint point{out.evaluations, out.spent_s, std::numeric_limits<double>::infinity(), 0};
      if (!out.history.empty())
        point = {out.evaluations, out.spent_s, out.history.back().best_ms, out.history.back().best_index};
      if (o.ok) {
        ++out.ok;
        auto [it, inserted] = observed.emplace(index, o.time_ms);
        if (!inserted) it->second = std::min(it->second, o.time_ms);
        if (o.time_ms < point.best_ms) {
          point = {out.evaluations, out.spent_s, o.time_ms, index};
          best_seen = e.m;
        }
      } else {
        ++out.failed;
      }
      out.history.push_back(point);
      if (on_step && !on_step(out, p, e)) stop = true;
    }
  }

  // Measurements are noisy, and cheap ones (halving) noisier: the best few are measured again with the
  // full protocol before one is declared best.
  std::vector<std::pair<double, std::uint64_t>> ranked;
  for (const auto& [index, time] : observed) ranked.emplace_back(time, index);
  std::sort(ranked.begin(), ranked.end());
  if (settings.remeasure <= 0) {
    if (!ranked.empty()) {
      out.best = s.at(ranked.front().second);
      out.best_ms = ranked.front().first;
      out.best_measurement = best_seen;
    }
    return out;
  }
  for (std::size_t i = 0; i < ranked.size() && i < static_cast<std::size_t>(settings.remeasure); ++i) {
    const variants::Params params = s.at(ranked[i].second);
    const Evaluation e = evaluator.evaluate(params, 0, "remeasure");
    ++out.remeasured;
    out.spent_s += e.cost_s;
    if (e.m.ok() && e.m.kernel.median < out.best_ms) {
      out.best = params;
      out.best_ms = e.m.kernel.median;
      out.best_measurement = e.m;
    }
  }
  return out;
}

}  // namespace varex::tuner
