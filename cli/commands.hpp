#pragma once
#include <CLI/CLI.hpp>

namespace varex::cli {

// Registers every varex command on `app`. Each command's callback does the work and sets `exit_code`.
void add_commands(CLI::App& app, int& exit_code);

// `varex plan`'s help: the pseudo-command that stands for `run|sweep|tune --op plan --plan PLAN`.
std::string plan_help();

// What every exit status means, for `varex help`.
extern const char* const kExitStatuses;

}  // namespace varex::cli
