#pragma once
// Running another program (Slurm's client commands, for varex fleet) and reading what it printed.
#include <string>
#include <vector>

namespace varex {

struct CommandResult {
  int status = 0;  // the exit status; 127 when the program was not found, 128 + N when killed by signal N
  std::string out;
  std::string err;
  bool ok() const { return status == 0; }
  // The first line of stderr that says something (else of stdout), for one-line messages.
  std::string first_line() const;
};

// Runs argv[0] (searched in PATH) with the rest as its arguments, stdin from /dev/null, and waits for it.
// RuntimeError only when it cannot be started at all (no pipes, no processes).
CommandResult run_command(const std::vector<std::string>& argv);

// `text` quoted for a POSIX shell: one word, whatever it holds.
std::string shell_quote(const std::string& text);

}  // namespace varex
