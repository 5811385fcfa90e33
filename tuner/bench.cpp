#include "tuner/bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "harness/operators/operator.hpp"
#include "tuner/space_fit.hpp"
#include "tuner/warm_start.hpp"

namespace varex::tuner {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return kInf;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  if (std::isinf(v[lo]) || std::isinf(v[hi])) return v[hi];
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// A seed per (strategy, seed number) that does not depend on the order strategies run in.
std::uint64_t seed_of(const std::string& strategy, int k) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : strategy) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h ^ (static_cast<std::uint64_t>(k) * 0x9e3779b97f4a7c15ULL);
}

std::string fmt(double v, int decimals = 4) {
  if (std::isinf(v)) return "inf";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

}  // namespace

std::vector<BenchSweep> load_sweeps(results::Store& store, const std::optional<std::string>& op,
                                    const std::optional<std::vector<std::int64_t>>& devices,
                                    const std::vector<std::int64_t>& sessions) {
  std::vector<BenchSweep> out;
  for (const results::RecordedSession& s : store.sessions(std::string("sweep"), op)) {
    if (s.status != "finished" && s.status != "interrupted") continue;
    if (devices && std::find(devices->begin(), devices->end(), s.device_row) == devices->end()) continue;
    if (!sessions.empty() && std::find(sessions.begin(), sessions.end(), s.id) == sessions.end()) continue;
    const harness::Operator& o = harness::find_operator(s.op);
    BenchSweep sweep{s.id, s.device, s.op, s.workload.rows(), s.status, nullptr, {}, {}, {}, {}};
    if (auto c = harness::workload_class_of(s.workload)) sweep.workload_class = std::move(*c);
    const variants::Space space = harness::space_for(o, s.device, s.workload);
    FittedMeasurements fitted = fit_to_space(space, store.session_measurements(s.id));
    sweep.space_changes = fitted.summary();
    // GPU devices compile a batch's programs in the background (harness::Engine::prefetch); CPUs do not.
    sweep.recording = std::make_shared<Recording>(space, std::move(fitted.kept), s.device.type != "cpu");
    std::size_t ok = 0;
    for (const auto& p : sweep.recording->space().enumerate())
      ok += std::isfinite(sweep.recording->true_ms(p));
    if (ok >= 2) out.push_back(std::move(sweep));
  }
  return out;
}

BenchReport run_bench(std::vector<BenchSweep> sweeps, const BenchOptions& options) {
  BenchReport report;
  report.sweeps = std::move(sweeps);
  std::vector<std::string> strategies = options.strategies;
  if (strategies.empty()) {
    for (const auto& s : strategy_names()) {
      if (s != "exhaustive") strategies.push_back(s);
    }
  }
  const std::size_t total = report.sweeps.size() * strategies.size() * (options.budgets.size() + 1) *
                            static_cast<std::size_t>(options.seeds);
  if (options.warm_start) {
    for (BenchSweep& sweep : report.sweeps) {
      std::vector<WarmStartSource> sources;
      for (const BenchSweep& other : report.sweeps) {
        if (other.session == sweep.session || other.op != sweep.op || !other.recording->optimum()) continue;
        sources.push_back({other.device, other.workload_class, *other.recording->optimum()});
        sweep.warm_start_from.push_back(other.session);
      }
      sweep.warm_start =
          warm_start_points(sources, sweep.device, sweep.workload_class, sweep.recording->space());
    }
  }
  std::size_t done = 0;
  auto step = [&] {
    ++done;
    if (options.progress) options.progress(done, total);
  };
  for (const BenchSweep& sweep : report.sweeps) {
    const Recording& rec = *sweep.recording;
    const double optimum = rec.optimum_ms();
    for (const std::string& name : strategies) {
      // Quality at each budget: a separate run per budget, since a strategy may plan by its budget.
      for (double budget : options.budgets) {
        BenchRow row;
        row.sweep = &sweep;
        row.strategy = name;
        row.budget = budget;
        for (int k = 0; k < options.seeds; ++k) {
          SearchSpace space(rec.space(), seed_of(name, k));
          ReplayEvaluator evaluator(rec, seed_of(name, k) + 1);
          auto strategy = make_strategy(name, space.space());
          TuneSettings settings{Budget{Budget::Kind::Fraction, budget}, options.remeasure};
          settings.warm_start = sweep.warm_start;
          if (!harness::find_operator(sweep.op).moves_all_its_bytes()) settings.at_bound = 0;
          const TuneOutcome o = run_tuning(*strategy, space, evaluator, settings);
          row.ratios.push_back(o.best ? rec.true_ms(*o.best) / optimum : kInf);
          row.evaluations.push_back(static_cast<double>(o.evaluations));
          step();
        }
        row.median_ratio = quantile(row.ratios, 0.5);
        row.p10 = quantile(row.ratios, 0.1);
        row.p25 = quantile(row.ratios, 0.25);
        row.p75 = quantile(row.ratios, 0.75);
        row.p90 = quantile(row.ratios, 0.9);
        row.evaluations_p25 = quantile(row.evaluations, 0.25);
        row.evaluations_median = quantile(row.evaluations, 0.5);
        row.evaluations_p75 = quantile(row.evaluations, 0.75);
        row.within_5pct = static_cast<double>(std::count_if(row.ratios.begin(), row.ratios.end(),
                                                            [](double r) { return r <= 1.05; })) /
                          static_cast<double>(row.ratios.size());
        report.rows.push_back(std::move(row));
      }
      // Cost until the best observed variant is truly within 5% of the optimum.
      CostRow cost;
      cost.sweep = &sweep;
      cost.strategy = name;
      for (int k = 0; k < options.seeds; ++k) {
        SearchSpace space(rec.space(), seed_of(name, k));
        ReplayEvaluator evaluator(rec, seed_of(name, k) + 1);
        auto strategy = make_strategy(name, space.space());
        double reached = kInf, evaluations = kInf;
        TuneSettings settings{
            options.cost_cap < 1 ? Budget{Budget::Kind::Fraction, options.cost_cap} : Budget{}, 0};
        settings.warm_start = sweep.warm_start;
        settings.at_bound = 0;  // the cost until within 5%, not until the bound
        run_tuning(*strategy, space, evaluator, settings,
                   [&](const TuneOutcome& o, const Proposal&, const Evaluation&) {
                     const TunePoint& p = o.history.back();
                     if (std::isfinite(p.best_value) &&
                         rec.true_ms(rec.space().at(p.best_index)) <= 1.05 * optimum) {
                       reached = p.cost_s;
                       evaluations = static_cast<double>(p.evaluations);
                       return false;
                     }
                     return true;
                   });
        cost.cost_s.push_back(reached);
        cost.evaluations.push_back(evaluations);
        step();
      }
      cost.median_cost_s = quantile(cost.cost_s, 0.5);
      cost.p25_cost_s = quantile(cost.cost_s, 0.25);
      cost.p75_cost_s = quantile(cost.cost_s, 0.75);
      cost.median_evaluations = quantile(cost.evaluations, 0.5);
      cost.share_of_exhaustive = cost.median_cost_s / rec.exhaustive_cost_s();
      cost.reached = static_cast<double>(std::count_if(cost.cost_s.begin(), cost.cost_s.end(),
                                                       [](double c) { return std::isfinite(c); })) /
                     static_cast<double>(cost.cost_s.size());
      report.costs.push_back(std::move(cost));
    }
  }
  // Normalise against random search on the same sweep.
  for (CostRow& c : report.costs) {
    for (const CostRow& r : report.costs) {
      if (r.sweep == c.sweep && r.strategy == "random") c.vs_random = c.median_cost_s / r.median_cost_s;
    }
  }
  return report;
}

nlohmann::json BenchReport::to_json() const {
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json out{{"sweeps", nlohmann::json::array()},
                     {"quality", nlohmann::json::array()},
                     {"cost_to_5pct", nlohmann::json::array()}};
  for (const BenchSweep& s : sweeps) {
    out["sweeps"].push_back({{"session", s.session},
                             {"device", s.device.id},
                             {"device_name", s.device.name},
                             {"host", s.device.host},
                             {"op", s.op},
                             {"rows", s.rows},
                             {"status", s.status},
                             {"variants", s.recording->size()},
                             {"optimum_ms", s.recording->optimum_ms()},
                             {"exhaustive_cost_s", s.recording->exhaustive_cost_s()},
                             {"warm_start_from", s.warm_start_from},
                             {"warm_start_points", s.warm_start.size()},
                             {"space_changes", s.space_changes.empty() ? nlohmann::json(nullptr)
                                                                       : nlohmann::json(s.space_changes)}});
  }
  for (const BenchRow& r : rows) {
    nlohmann::json ratios = nlohmann::json::array();
    for (double v : r.ratios) ratios.push_back(finite(v));
    out["quality"].push_back({{"session", r.sweep->session},
                              {"device", r.sweep->device.id},
                              {"strategy", r.strategy},
                              {"budget", r.budget},
                              {"median_ratio", finite(r.median_ratio)},
                              {"p10", finite(r.p10)},
                              {"p25", finite(r.p25)},
                              {"p75", finite(r.p75)},
                              {"p90", finite(r.p90)},
                              {"within_5pct", r.within_5pct},
                              {"evaluations_p25", r.evaluations_p25},
                              {"evaluations_median", r.evaluations_median},
                              {"evaluations_p75", r.evaluations_p75},
                              {"ratios", ratios},
                              {"evaluations", r.evaluations}});
  }
  for (const CostRow& c : costs) {
    out["cost_to_5pct"].push_back({{"session", c.sweep->session},
                                   {"device", c.sweep->device.id},
                                   {"strategy", c.strategy},
                                   {"median_cost_s", finite(c.median_cost_s)},
                                   {"p25_cost_s", finite(c.p25_cost_s)},
                                   {"p75_cost_s", finite(c.p75_cost_s)},
                                   {"median_evaluations", finite(c.median_evaluations)},
                                   {"share_of_exhaustive", finite(c.share_of_exhaustive)},
                                   {"vs_random", finite(c.vs_random)},
                                   {"reached", c.reached}});
  }
  return out;
}

std::string BenchReport::to_csv() const {
  std::ostringstream s;
  s << "session,device,op,rows,strategy,budget,median_ratio,p10,p25,p75,p90,within_5pct,evaluations_p25,"
       "evaluations_median,evaluations_p75,median_cost_to_5pct_s,evaluations_to_5pct,"
       "cost_share_of_exhaustive,cost_vs_random,reached_5pct\n";
  for (const BenchRow& r : rows) {
    const CostRow* c = nullptr;
    for (const CostRow& x : costs) {
      if (x.sweep == r.sweep && x.strategy == r.strategy) c = &x;
    }
    s << r.sweep->session << "," << r.sweep->device.id << "," << r.sweep->op << "," << r.sweep->rows << ","
      << r.strategy << "," << r.budget << "," << fmt(r.median_ratio) << "," << fmt(r.p10) << "," << fmt(r.p25)
      << "," << fmt(r.p75) << "," << fmt(r.p90) << "," << fmt(r.within_5pct, 2) << ","
      << fmt(r.evaluations_p25, 0) << "," << fmt(r.evaluations_median, 0) << "," << fmt(r.evaluations_p75, 0)
      << "," << fmt(c->median_cost_s, 2) << "," << fmt(c->median_evaluations, 0) << ","
      << fmt(c->share_of_exhaustive) << "," << fmt(c->vs_random, 3) << "," << fmt(c->reached, 2) << "\n";
  }
  return s.str();
}

std::string BenchReport::to_text() const {
  std::ostringstream s;
  for (const BenchSweep& sweep : sweeps) {
    const Recording& rec = *sweep.recording;
    s << "## " << sweep.device.id << " (" << sweep.device.name << ") " << sweep.op << ", " << sweep.rows
      << " rows, session " << sweep.session << " (" << sweep.status << "): " << rec.size()
      << " variants, optimum " << fmt(rec.optimum_ms()) << " ms, exhaustive cost "
      << fmt(rec.exhaustive_cost_s(), 1) << " s\n";
    if (!sweep.space_changes.empty()) s << "recorded under an older space: " << sweep.space_changes << "\n";
    if (!sweep.warm_start_from.empty()) {
      s << "warm-started from sweep" << (sweep.warm_start_from.size() > 1 ? "s" : "");
      for (std::size_t i = 0; i < sweep.warm_start_from.size(); ++i)
        s << (i ? ", " : " ") << sweep.warm_start_from[i];
      s << ": " << sweep.warm_start.size() << " point" << (sweep.warm_start.size() == 1 ? "" : "s")
        << " measured first\n";
    }
    // Quartiles over the seeds: of the declared best's true time over the optimum, and of the search
    // evaluations the budget paid for.
    s << "strategy      budget  best/opt p25  median  p75     within 5%  evaluations p25  median  p75\n";
    for (const BenchRow& r : rows) {
      if (r.sweep != &sweep) continue;
      char line[200];
      std::snprintf(line, sizeof line, "%-12s  %5.0f%%  %12s  %-6s  %-6s  %8.0f%%  %15s  %6s  %s\n",
                    r.strategy.c_str(), 100 * r.budget, fmt(r.p25, 3).c_str(), fmt(r.median_ratio, 3).c_str(),
                    fmt(r.p75, 3).c_str(), 100 * r.within_5pct, fmt(r.evaluations_p25, 0).c_str(),
                    fmt(r.evaluations_median, 0).c_str(), fmt(r.evaluations_p75, 0).c_str());
      s << line;
    }
    s << "strategy      cost to 5%: p25  median  p75 s   evaluations  share of exhaustive  vs random  seeds "
         "that got there\n";
    for (const CostRow& c : costs) {
      if (c.sweep != &sweep) continue;
      char line[200];
      std::snprintf(line, sizeof line, "%-12s  %15s  %6s  %6s   %11s  %18s%%  %9s  %5.0f%%\n",
                    c.strategy.c_str(), fmt(c.p25_cost_s, 1).c_str(), fmt(c.median_cost_s, 1).c_str(),
                    fmt(c.p75_cost_s, 1).c_str(), fmt(c.median_evaluations, 0).c_str(),
                    fmt(100 * c.share_of_exhaustive, 1).c_str(), fmt(c.vs_random, 2).c_str(),
                    100 * c.reached);
      s << line;
    }
    s << "\n";
  }
  return s.str();
}

}  // namespace varex::tuner
