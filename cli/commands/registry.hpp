#pragma once
// Each varex command's registration, one file each: cli/commands/<command>.cpp (sweep and tune share
// sweep_tune.cpp; `varex fleet` is cli/fleet_command.cpp). cli/commands.cpp's add_commands calls them in
// the order `varex --help` lists them. Each adds its subcommand to `app`; a command whose work can fail
// in part sets `exit_code` from its callback.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace varex::cli {

void add_devices(CLI::App& app, int& exit_code);
void add_ops(CLI::App& app, int& exit_code);
void add_variants(CLI::App& app, int& exit_code);
void add_run(CLI::App& app, int& exit_code);
void add_sweep(CLI::App& app, int& exit_code);
void add_tune(CLI::App& app, int& exit_code);
void add_tuner_bench(CLI::App& app, int& exit_code);
void add_best(CLI::App& app, int& exit_code);
void add_probe(CLI::App& app, int& exit_code);
void add_export(CLI::App& app, int& exit_code);
void add_merge(CLI::App& app, int& exit_code);
void add_import(CLI::App& app, int& exit_code);
void add_report(CLI::App& app, int& exit_code);

// `varex KIND ARGS --check` in this process: a fleet's flags refused as the sweep or tune would refuse them.
void check_session_args(const std::string& kind, const std::vector<std::string>& args);

// The commands operators add of their own (OperatorCommand with `run`; aliases are main's): their declared
// flags as string options, their output printed.
void add_operator_commands(CLI::App& app);

}  // namespace varex::cli
