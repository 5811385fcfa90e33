#pragma once
#include <CLI/CLI.hpp>
#include <vector>

#include "harness/operators/operator.hpp"

namespace varex::cli {

// Registers every varex command on `app`. Each command's callback does the work and sets `exit_code`.
void add_commands(CLI::App& app, int& exit_code);

// The aliases operators add to the command line (OperatorCommand with `expand`), which main expands before
// parsing.
std::vector<harness::OperatorCommand> operator_aliases();

// What every exit status means, for `varex help`.
extern const char* const kExitStatuses;

}  // namespace varex::cli
