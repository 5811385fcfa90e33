#pragma once
#include <CLI/CLI.hpp>

namespace varex::cli {

// Registers every varex command on `app`. Each command's callback does the work and sets `exit_code`.
void add_commands(CLI::App& app, int& exit_code);

}  // namespace varex::cli
