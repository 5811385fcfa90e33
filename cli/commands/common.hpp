#pragma once
// What several commands share (cli/commands/<command>.cpp): the results database, its --db and --objective
// options, its recorded devices, and what report and export take from the operators.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "results/export.hpp"
#include "results/store.hpp"

namespace varex::cli {

// A database opened for reading results: workloads recorded before workload classes (schema version 5)
// get theirs first. A database that cannot be written (read-only file or directory: a fleet's results on
// a read-only share) is opened read-only, and then left as it is.
std::unique_ptr<results::Store> open_results(const std::string& path);

// Every command's `--db`: an empty path (an unset shell variable) would open SQLite's private temporary
// database, whose results vanish, so it is refused as it is parsed.
CLI::Option* add_db_option(CLI::App* cmd, std::string& db, const std::string& help);

// --objective for export and report: which objectives' bests they take.
void add_objectives_option(CLI::App* cmd, std::vector<std::string>& objectives);

// The device rows of a database that a selector names (the same selectors as for this machine's devices,
// matched against the devices the database recorded: `cuda:0`, `cuda:0@node7`, `gpu`, …); every device
// when the selector is empty.
std::optional<std::vector<std::int64_t>> recorded_devices(results::Store& store, const std::string& selector,
                                                          const std::string& where = "");

// What export and report take: the bests of `op` (every operator when unset) on the recorded `devices`,
// single runs too with `include_runs`, by the `objectives` given (each a name or a comma list).
results::ExportFilter export_filter(results::Store& store, const std::optional<std::string>& op,
                                    const std::string& devices, bool include_runs,
                                    const std::vector<std::string>& objectives);

// Every operator's default (source) parameters as text, which profiles carry for their last fallback.
results::DefaultParams operator_defaults();

// The operators whose variants may move fewer bytes than their runs count: their share of the copy probe is
// no bound (Operator::moves_all_its_bytes).
std::set<std::string> probe_not_a_bound();

// Writes `text` to the file, or to standard output for "-".
void write_output(const std::string& path, const std::string& text);

}  // namespace varex::cli
