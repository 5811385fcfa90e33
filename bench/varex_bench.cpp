// varex-bench: Google Benchmark cases for every operator on every device, timed with device events
// (manual time): the operator's default variant (the source's kernel), the tuned variant from a profile
// or a database, and the runtime's own copy of the operator's input bytes as the bandwidth reference (no
// vendor library produces these operators' outputs, a selection bitmap for one). Every variant's output is
// verified before it is timed. With --varex-transfers, also the host-device copies the source measured
// beside its kernels, from pinned and from pageable host memory. Its --benchmark_format=json output works
// with Google Benchmark's compare.py.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <varex/profile_json.hpp>
#include <vector>

#include "base/errors.hpp"
#include "base/objective.hpp"
#include "base/text.hpp"
#include "cli/options.hpp"
#include "harness/engine.hpp"
#include "harness/operators/operator.hpp"
#include "operators/install.hpp"
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
  std::string transfers;
  std::string objective = "time";
};

struct Flag {
  const char* name;
  std::string Options::*field;
  const char* help;
};
const Flag kFlags[] = {
    {"--varex-device", &Options::device,
     "devices: all, cpu, gpu, opencl, cuda, an id, or a comma list (all)"},
    {"--varex-op", &Options::op, "only this operator (every operator)"},
    {"--varex-rows", &Options::rows, "rows of the generated workload, N or 2^N (4x the device's cache)"},
    {"--varex-profile", &Options::profile, "the tuned variants from this exported JSON profile"},
    {"--varex-db", &Options::db, "the tuned variants from this varex database (its `varex best`)"},
    {"--varex-objective", &Options::objective,
     "the tuned variants best by time, energy or edp (energy x time), as `varex tune --objective` tuned "
     "them; "
     "their benchmarks are named tuned_energy and tuned_edp (time)"},
    {"--varex-transfers", &Options::transfers,
     "also time host-to-device and device-to-host copies of these sizes in bytes (N or 2^N, a comma list) "
     "from pinned and from pageable host memory on every device, instead of the operators unless "
     "--varex-op names one (none)"},
};

void print_help() {
  std::printf(
      "varex-bench: the default and the tuned variant of every operator on every device, and the runtime's "
      "copy\n"
      "of the same bytes, timed with device events (manual time, reported in ns) after a verified first "
      "run.\n\n"
      "varex flags:\n");
  for (const Flag& f : kFlags) std::printf("  %s=VALUE\n      %s\n", f.name, f.help);
  std::printf("\nGoogle Benchmark flags:\n");
  benchmark::PrintDefaultHelp();
}

// Pulls the --varex-* flags out of argv, refusing unknown ones; Google Benchmark parses the rest.
Options take_options(int& argc, char** argv) {
  Options o;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--varex-", 0) != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const Flag* flag =
        std::find_if(std::begin(kFlags), std::end(kFlags), [&](const Flag& f) { return name == f.name; });
    if (flag == std::end(kFlags)) {
      std::vector<std::string> names;
      for (const Flag& f : kFlags) names.push_back(f.name);
      throw UsageError("unknown flag '" + name + "' (varex flags: " + join(names, ", ") + "; --help)");
    }
    if (eq == std::string::npos || eq + 1 == a.size())
      throw UsageError(name + " needs a value: " + name + "=VALUE");
    o.*(flag->field) = a.substr(eq + 1);
  }
  argc = kept;
  if (!o.profile.empty() && !o.db.empty())
    throw UsageError("--varex-profile and --varex-db exclude each other");
  if (!o.op.empty()) harness::find_operator(o.op);          // names the operators when it is not one
  objective_from_string(o.objective, "--varex-objective");  // names the objectives when it is not one
  return o;
}

// What a benchmark needs kept alive while Google Benchmark runs. A workload whose working set fits in twice
// the device's last-level cache is prepared several times over: the timed runs go round the copies, so each
// finds its inputs evicted by the others' traffic, as varex's own protocol does with a cache flush. The
// flush is not timed, and Google Benchmark, which picks the iteration count from the (device) time it is
// told, would run far past its time budget with one; the copies need no untimed work.
struct Target {
  std::unique_ptr<harness::Engine> engine;
  std::vector<std::unique_ptr<harness::PreparedRun>> runs;
  // The copy reference: pairs of source and destination buffers, as many as keep them out of the cache.
  std::vector<std::pair<std::unique_ptr<harness::DeviceBuffer>, std::unique_ptr<harness::DeviceBuffer>>>
      copies;
};
std::vector<std::unique_ptr<Target>> g_targets;

// Copies of a workload that keep each one's inputs out of the cache between its uses.
std::size_t copies_for(std::uint64_t working_set, std::uint64_t cache_bytes) {
  if (!cache_bytes || working_set >= 2 * cache_bytes) return 1;
  const std::uint64_t others = (2 * cache_bytes + std::max<std::uint64_t>(working_set, 1) - 1) /
                               std::max<std::uint64_t>(working_set, 1);
  return static_cast<std::size_t>(std::min<std::uint64_t>(others + 1, 4096));
}

void time_variant(benchmark::State& state, Target* t, variants::Params params) {
  try {
    double total_ms = 0;
    std::size_t next = 0;
    for (auto _ : state) {
      const double ms = t->runs[next]->execute(params).total_ms;
      next = (next + 1) % t->runs.size();
      total_ms += ms;
      state.SetIterationTime(ms / 1e3);
    }
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(t->runs[0]->bytes_moved()) *
                                                static_cast<double>(state.iterations()) / (total_ms * 1e6));
    state.counters["input copies"] = static_cast<double>(t->runs.size());
    state.SetLabel(variants::describe(params));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void skip(benchmark::State& state, std::string why) {
  state.SkipWithError(why.c_str());
  for (auto _ : state) {
  }  // not run once skipped
}

void time_copy(benchmark::State& state, Target* t) {
  const std::size_t bytes = t->copies[0].first->bytes();
  // One untimed copy each first: the destinations' pages are first touched there, not in a timed iteration.
  for (auto& [src, dst] : t->copies) t->engine->copy(*dst, *src, bytes)->elapsed_ms();
  double total_ms = 0;
  std::size_t next = 0;
  for (auto _ : state) {
    auto& [src, dst] = t->copies[next];
    next = (next + 1) % t->copies.size();
    const double ms = t->engine->copy(*dst, *src, bytes)->elapsed_ms();
    total_ms += ms;
    state.SetIterationTime(ms / 1e3);
  }
  state.counters["GB/s"] = benchmark::Counter(2.0 * static_cast<double>(bytes) *
                                              static_cast<double>(state.iterations()) / (total_ms * 1e6));
}

// The copies the source measured beside every primitive's kernel (document 002, sec. 4.2): `bytes` between
// the device and pinned or pageable host memory, one direction, timed with device events.
struct Transfer {
  harness::Engine* engine;
  bool to_device;
  bool pinned;
  std::size_t bytes;
};

void time_transfer(benchmark::State& state, Transfer t) {
  try {
    auto host = t.pinned ? t.engine->allocate_host(t.bytes) : t.engine->allocate_pageable(t.bytes);
    auto device = t.engine->allocate(t.bytes);
    std::fill_n(host->as<unsigned char>(), t.bytes, static_cast<unsigned char>(0x5A));  // pages touched
    t.engine->fill(*device, 0x9E3779B9u, 0, t.bytes / 4 * 4)->elapsed_ms();
    double total_ms = 0;
    for (auto _ : state) {
      const double ms = (t.to_device ? t.engine->upload(*device, 0, *host, t.bytes)
                                     : t.engine->download(*host, *device, t.bytes))
                            ->elapsed_ms();
      total_ms += ms;
      state.SetIterationTime(ms / 1e3);
    }
    state.counters["GB/s"] = benchmark::Counter(static_cast<double>(t.bytes) *
                                                static_cast<double>(state.iterations()) / (total_ms * 1e6));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void register_transfers(harness::Engine* engine, const DeviceInfo& d, const std::string& sizes) {
  for (const std::string& size : split(sizes, ',')) {
    const std::uint64_t bytes = cli::parse_rows(size, "--varex-transfers");
    if (bytes == 0) throw UsageError("--varex-transfers: a copy of 0 bytes measures nothing");
    for (const bool to_device : {true, false}) {
      for (const bool pinned : {true, false}) {
        const std::string name = "transfer/" + d.id + "/" + (to_device ? "h2d/" : "d2h/") +
                                 (pinned ? "pinned/" : "pageable/") + std::to_string(bytes);
        benchmark::RegisterBenchmark(name.c_str(), time_transfer,
                                     Transfer{engine, to_device, pinned, static_cast<std::size_t>(bytes)})
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

// Registers one variant, verified first on every copy of the workload (a wrong one is registered as
// skipped, with the reason).
void register_variant(const std::string& name, Target* t, const variants::Params& params) {
  auto skipped = [&](const std::string& why) {
    benchmark::RegisterBenchmark(name.c_str(), skip, why)->Unit(benchmark::kNanosecond);
  };
  try {
    for (auto& run : t->runs) {
      run->compile(params);
      run->poison();
      run->execute(params);
      const harness::Collected c = run->collect();
      if (!c.verified) return skipped("wrong result: " + c.mismatch);
    }
    benchmark::RegisterBenchmark(name.c_str(), time_variant, t, params)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
  } catch (const std::exception& e) {
    skipped(e.what());
  }
}

// The tuned variant from a profile, or from a database through the same export and lookup (one definition
// of best: docs/PROFILE.md).
std::optional<variants::Params> tuned_params(const profile::Profile* tuned, const harness::Operator& op,
                                             const DeviceInfo& d, const variants::Space& space,
                                             const datasets::WorkloadSpec& spec,
                                             const std::string& objective) {
  if (!tuned) return std::nullopt;
  const profile::Choice c = tuned->lookup(op.name(), results::profile_device(d),
                                          results::profile_workload(op.workload_class(spec)), objective);
  if (c.level == profile::Level::Default) return std::nullopt;
  const auto params = space.with_settings(space.defaults(), {c.params.begin(), c.params.end()});
  return space.valid(params) ? std::optional(params) : std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  varex::operators::install();
  try {
    const Options o = take_options(argc, argv);
    benchmark::Initialize(&argc, argv, print_help);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    const auto devices = cli::resolve_devices(o.device);
    std::optional<profile::Profile> tuned;
    if (!o.profile.empty()) {
      try {
        tuned = profile::load_profile_file(o.profile);
      } catch (const std::exception& e) {
        throw UsageError("--varex-profile: " + std::string(e.what()));
      }
    }
    if (!o.db.empty()) {
      results::Store store(o.db, results::Database::Mode::Existing);
      store.classify_workloads(harness::workload_class_of);
      tuned = profile::load_profile(results::profile_json(store, {}, {}));
    }
    if (!o.transfers.empty()) {
      for (const DeviceInfo& d : devices) {
        auto t = std::make_unique<Target>();
        t->engine = harness::open_engine(d);
        register_transfers(t->engine.get(), d, o.transfers);
        g_targets.push_back(std::move(t));
      }
    }
    // One row count for every operator: zero would leave most of them out and time the rest on nothing.
    const std::optional<std::uint64_t> rows =
        o.rows.empty() ? std::nullopt : std::optional(cli::parse_rows(o.rows, "--varex-rows"));
    if (rows == 0u) throw UsageError("--varex-rows 0: a benchmark needs at least one row");
    for (const harness::Operator* op : harness::operators()) {
      if (!o.op.empty() ? o.op != op->name() : !o.transfers.empty()) continue;
      for (const DeviceInfo& d : devices) {
        harness::WorkloadOptions w;
        w.flags["rows"] = std::to_string(rows ? *rows : op->default_rows(cli::default_rows({d})));
        datasets::WorkloadSpec spec;
        try {
          spec = op->workload(w);
          harness::check_fits(*op, spec, d);
        } catch (const UsageError& e) {
          // One --varex-rows for every operator may be more than one of them takes (a product of two
          // relations of that size): that operator is left out, unless it was asked for by name.
          if (!o.op.empty()) throw;
          std::cerr << "varex-bench: " << op->name() << " on " << d.id << " left out: " << e.what() << "\n";
          continue;
        }
        // Preparing a workload at the sources' sizes (generation, host reference, upload) takes seconds to
        // minutes before the first benchmark prints: say what is being done meanwhile.
        std::cerr << "varex-bench: preparing " << op->name() << " on " << d.id << " (" << spec.describe()
                  << ")\n";
        auto t = std::make_unique<Target>();
        t->engine = harness::open_engine(d);
        try {
          t->runs.push_back(op->prepare(*t->engine, spec));
          const std::size_t copies = copies_for(t->runs[0]->working_set_bytes(), d.cache_bytes);
          while (t->runs.size() < copies) t->runs.push_back(op->prepare(*t->engine, spec));
        } catch (const std::bad_alloc&) {
          // The device may hold the workload while the host cannot also hold its data and reference.
          if (!o.op.empty())
            throw UsageError(op->name() + ": the host ran out of memory preparing " + spec.describe());
          std::cerr << "varex-bench: " << op->name() << " on " << d.id
                    << " left out: the host ran out of memory preparing it\n";
          continue;
        }
        const std::uint64_t copy_bytes = std::max<std::uint64_t>(spec.rows() * 4, 4);
        for (std::size_t i = 0; i < copies_for(2 * copy_bytes, d.cache_bytes); ++i) {
          t->copies.emplace_back(t->engine->allocate(copy_bytes), t->engine->allocate(copy_bytes));
          t->engine->fill(*t->copies.back().first, 0x9E3779B9u, 0, copy_bytes)->elapsed_ms();  // not zeros
        }
        Target* target = t.get();
        g_targets.push_back(std::move(t));
        const auto space = harness::space_for(*op, d, spec);
        const std::string prefix = op->name() + "/" + d.id + "/";
        register_variant(prefix + "default", target, space.defaults());
        if (const auto params = tuned_params(tuned ? &*tuned : nullptr, *op, d, space, spec, o.objective))
          register_variant(prefix + (o.objective == "time" ? "tuned" : "tuned_" + o.objective), target,
                           *params);
        benchmark::RegisterBenchmark((prefix + "runtime_copy").c_str(), time_copy, target)
            ->UseManualTime()
            ->Unit(benchmark::kNanosecond);
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
