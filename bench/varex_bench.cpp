// varex-bench: Google Benchmark cases for every operator on every device, timed with device events
// (manual time): the operator's default variant (the source's kernel), the tuned variant from a profile
// or a database, and the runtime's own copy of the operator's input bytes as the bandwidth reference (no
// vendor library produces these operators' outputs, a selection bitmap for one). Every variant's output is
// verified before it is timed. Its --benchmark_format=json output works with Google Benchmark's compare.py.
//
//   varex-bench [--varex-device=all] [--varex-rows=N] [--varex-profile=FILE | --varex-db=FILE]
//               [--varex-op=selection] [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <iostream>
#include <memory>
#include <string>
#include <varex/profile_json.hpp>
#include <vector>

#include "harness/cli/options.hpp"
#include "harness/engine.hpp"
#include "harness/errors.hpp"
#include "harness/operators/operator.hpp"
#include "results/export.hpp"
#include "results/store.hpp"

namespace {

using namespace varex;

struct Options {
  std::string device = "all";
  std::string rows;
  std::string profile;
  std::string db;
  std::string op;
};

// Pulls --varex-* flags out of argv; Google Benchmark parses the rest.
Options take_options(int& argc, char** argv) {
  Options o;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const std::string& flag, std::string& into) {
      if (a.rfind(flag + "=", 0) != 0) return false;
      into = a.substr(flag.size() + 1);
      return true;
    };
    if (value("--varex-device", o.device) || value("--varex-rows", o.rows) ||
        value("--varex-profile", o.profile) || value("--varex-db", o.db) || value("--varex-op", o.op)) {
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  return o;
}

// What a benchmark needs kept alive while Google Benchmark runs.
struct Target {
  std::unique_ptr<harness::Engine> engine;
  std::unique_ptr<harness::PreparedRun> run;
  std::unique_ptr<harness::DeviceBuffer> copy_src, copy_dst;
};
std::vector<std::unique_ptr<Target>> g_targets;

void time_variant(benchmark::State& state, Target* t, variants::Params params) {
  try {
    t->run->compile(params);
    t->run->poison();
    t->run->execute(params);
    const harness::Collected c = t->run->collect();
    if (!c.verified) {
      state.SkipWithError(("wrong result: " + c.mismatch).c_str());
      return;
    }
    const bool flush =
        t->engine->device().cache_bytes && t->run->working_set_bytes() < 2 * t->engine->device().cache_bytes;
    double total_ms = 0;
    for (auto _ : state) {
      if (flush) t->engine->flush_cache();
      const double ms = t->run->execute(params).total_ms;
      total_ms += ms;
      state.SetIterationTime(ms / 1e3);
    }
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(t->run->bytes_moved()) *
                                                state.iterations() / (total_ms * 1e6));
    state.SetLabel(variants::describe(params));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void time_copy(benchmark::State& state, Target* t) {
  const std::size_t bytes = t->copy_src->bytes();
  // One untimed copy first: the destination's pages are first touched there, not in a timed iteration.
  t->engine->copy(*t->copy_dst, *t->copy_src, bytes)->elapsed_ms();
  double total_ms = 0;
  for (auto _ : state) {
    const double ms = t->engine->copy(*t->copy_dst, *t->copy_src, bytes)->elapsed_ms();
    total_ms += ms;
    state.SetIterationTime(ms / 1e3);
  }
  state.counters["GB/s"] = benchmark::Counter(2.0 * bytes * state.iterations() / (total_ms * 1e6));
}

// The workload as a profile lookup describes it.
profile::Workload lookup_workload(const datasets::WorkloadClass& c) {
  profile::Workload w;
  for (const auto& [key, value] : c.shape.items()) w.shape[key] = value.get<std::string>();
  for (const auto& [key, value] : c.scale.items()) w.scale[key] = value.get<double>();
  return w;
}

// The tuned variant from a profile, or from a database through the same export and lookup (one definition
// of best: docs/PROFILE.md).
std::optional<variants::Params> tuned_params(const profile::Profile* tuned, const harness::Operator& op,
                                             const DeviceInfo& d, const variants::Space& space,
                                             const datasets::WorkloadSpec& spec) {
  if (!tuned) return std::nullopt;
  const profile::Choice c =
      tuned->lookup(op.name(), {to_string(d.backend), d.vendor, d.name, d.arch, d.type, d.driver},
                    lookup_workload(op.workload_class(spec)));
  if (c.level == profile::Level::Default) return std::nullopt;
  const auto params = space.with_settings(space.defaults(), {c.params.begin(), c.params.end()});
  return space.valid(params) ? std::optional(params) : std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = take_options(argc, argv);
    benchmark::Initialize(&argc, argv);
    const auto devices = cli::resolve_devices(o.device);
    std::optional<profile::Profile> tuned;
    if (!o.profile.empty()) tuned = profile::load_profile_file(o.profile);
    if (!o.db.empty()) {
      results::Store store(o.db, results::Database::Mode::Existing);
      store.classify_workloads(harness::workload_class_of);
      tuned = profile::load_profile(results::profile_json(store, {}, {}));
    }
    for (const harness::Operator* op : harness::operators()) {
      if (!o.op.empty() && o.op != op->name()) continue;
      for (const DeviceInfo& d : devices) {
        harness::WorkloadOptions w;
        w.rows = o.rows.empty() ? cli::default_rows({d}) : cli::parse_rows(o.rows);
        const auto spec = op->workload(w);
        harness::check_fits(*op, spec, d);
        auto t = std::make_unique<Target>();
        t->engine = harness::open_engine(d);
        t->run = op->prepare(*t->engine, spec);
        t->copy_src = t->engine->allocate(spec.rows() * 4);
        t->copy_dst = t->engine->allocate(spec.rows() * 4);
        t->engine->fill(*t->copy_src, 0x9E3779B9u, 0, t->copy_src->bytes())->elapsed_ms();  // not zeros
        Target* target = t.get();
        g_targets.push_back(std::move(t));
        const auto space = op->space({d, spec.rows()});
        const std::string prefix = op->name() + "/" + d.id + "/";
        benchmark::RegisterBenchmark((prefix + "default").c_str(), time_variant, target, space.defaults())
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
        if (const auto params = tuned_params(tuned ? &*tuned : nullptr, *op, d, space, spec)) {
          benchmark::RegisterBenchmark((prefix + "tuned").c_str(), time_variant, target, *params)
              ->UseManualTime()
              ->Unit(benchmark::kMillisecond);
        }
        benchmark::RegisterBenchmark((prefix + "runtime_copy").c_str(), time_copy, target)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    g_targets.clear();
  } catch (const UsageError& e) {
    std::cerr << "varex-bench: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "varex-bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
