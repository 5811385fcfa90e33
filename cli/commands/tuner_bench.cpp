// `varex tuner-bench`: every strategy replayed against the recorded exhaustive sweeps.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "cli/commands/common.hpp"
#include "cli/commands/registry.hpp"
#include "cli/options.hpp"
#include "results/merge.hpp"
#include "tuner/bench.hpp"

namespace varex::cli {

namespace {

// Refuses, before any work, a path `write_output` could not write: empty, a directory, or in a folder that
// does not exist.
void check_output_path(const std::string& flag, const std::string& path) {
  if (path == "-") return;
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (path.empty() || fs::is_directory(p, ec))
    throw UsageError(flag + ": '" + path + "' is not a file to write");
  if (p.has_parent_path() && !fs::is_directory(p.parent_path(), ec))
    throw UsageError(flag + ": the folder of '" + path + "' does not exist");
}

struct BenchFlags {
  std::string db = "varex.db";
  std::optional<std::string> op;
  std::string device;
  std::string sessions;
  int seeds = 25;
  std::string budgets = "2%,5%,10%,20%";
  std::string strategies;
  bool warm_start = false;
  std::optional<std::string> csv;
  std::optional<std::string> json;
};

}  // namespace

void add_tuner_bench(CLI::App& app, int&) {
  auto* cmd =
      app.add_subcommand("tuner-bench", "Replay every strategy against the recorded exhaustive sweeps");
  auto f = std::make_shared<BenchFlags>();
  add_db_option(cmd, f->db, "Database with exhaustive sweeps");
  cmd->add_option("--op", f->op, "Only sweeps of this operator");
  cmd->add_option(
      "--device", f->device,
      "Only sweeps of these recorded devices (selector: cpu, gpu, cuda:0, cuda:0@host, a comma list)");
  cmd->add_option("--sessions", f->sessions, "Only these sweep sessions (comma list of ids)");
  cmd->add_option("--seeds", f->seeds, "Seeds per strategy and budget")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--budgets", f->budgets, "Budgets as shares of the exhaustive cost")->capture_default_str();
  cmd->add_option("--strategies", f->strategies, "Strategies (default: all but exhaustive)");
  cmd->add_flag("--warm-start", f->warm_start,
                "Start each sweep's replays from the fastest variants of the other sweeps of its operator "
                "(other devices and workloads), as a tune starts from the database's bests");
  cmd->add_option("--csv", f->csv,
                  "Also write the table as CSV to this file (-: print CSV instead of the table)");
  cmd->add_option(
         "--json", f->json,
         "Also write the results as JSON to this file (- or no file: print JSON instead of the table)")
      ->expected(0, 1)
      ->default_str("-");
  cmd->callback([f] {
    if (f->op) harness::find_operator(*f->op);
    if (f->csv) check_output_path("--csv", *f->csv);
    if (f->json) check_output_path("--json", *f->json);
    tuner::BenchOptions options;
    options.seeds = f->seeds;
    options.warm_start = f->warm_start;
    options.budgets.clear();
    for (const std::string& b : split(f->budgets, ',')) {
      const tuner::Budget budget = tuner::Budget::parse(b);
      if (budget.kind != tuner::Budget::Kind::Fraction)
        throw UsageError("--budgets: '" + b + "' is not a share such as 10%");
      options.budgets.push_back(budget.value);
    }
    if (!f->strategies.empty()) {
      for (const std::string& s : split(f->strategies, ',')) {
        tuner::make_strategy(s, variants::Space("check", {}, {}));  // rejects unknown names
        options.strategies.push_back(s);
      }
    }
    // The user's file is only read: an older schema is migrated in a private copy, never in place.
    results::PrivateCopy copy(f->db);
    results::Store& store = copy.store();
    const auto devices = recorded_devices(store, f->device, f->db);
    std::vector<std::int64_t> sessions;
    if (!f->sessions.empty()) {
      for (const std::string& id : split(f->sessions, ',')) sessions.push_back(parse_int(id, "--sessions"));
    }
    auto sweeps = tuner::load_sweeps(store, f->op, devices, sessions);
    if (sweeps.empty())
      throw UsageError("no recorded sweeps to replay in " + f->db + " (run varex sweep first)");
    for (const auto& sweep : sweeps) {
      if (!sweep.space_changes.empty())
        std::cerr << "tuner-bench: session " << sweep.session << " (" << sweep.op << " on " << sweep.device.id
                  << ") was recorded under an older space: " << sweep.space_changes << "\n";
    }
    // Progress on standard error: redrawn in place on a terminal, else a line every few seconds.
    const bool terminal = ::isatty(STDERR_FILENO) != 0;
    auto last = std::chrono::steady_clock::now();
    options.progress = [&](std::size_t done, std::size_t total) {
      const auto now = std::chrono::steady_clock::now();
      const bool finished = done == total;
      if (!finished && now - last < (terminal ? std::chrono::milliseconds(200) : std::chrono::seconds(5)))
        return;
      last = now;
      std::cerr << (terminal ? "\r" : "") << "tuner-bench: " << done << " of " << total << " replays ("
                << fixed(100.0 * static_cast<double>(done) / static_cast<double>(total), 0) << "%)"
                << (terminal && !finished ? "" : "\n");
      std::cerr.flush();
    };
    const tuner::BenchReport report = tuner::run_bench(std::move(sweeps), options);
    if (f->csv) write_output(*f->csv, report.to_csv());
    if (f->json) write_output(*f->json, report.to_json().dump(2) + "\n");
    if (f->csv != "-" && f->json != "-") std::cout << report.to_text();
  });
}

}  // namespace varex::cli
