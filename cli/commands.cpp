#include "cli/commands.hpp"

#include "cli/commands/registry.hpp"
#include "cli/fleet_command.hpp"

namespace varex::cli {

const char* const kExitStatuses =
    "Exit status: 0 done; 1 a runtime failure (driver, device, I/O); 2 bad usage or input (one line says\n"
    "what); 3 busy: another process runs the same session (retry, or pass --wait); 130 interrupted\n"
    "(everything measured so far is recorded).";

void add_commands(CLI::App& app, int& exit_code) {
  add_devices(app, exit_code);
  add_ops(app, exit_code);
  add_variants(app, exit_code);
  add_run(app, exit_code);
  add_sweep(app, exit_code);
  add_tune(app, exit_code);
  add_tuner_bench(app, exit_code);
  add_best(app, exit_code);
  add_probe(app, exit_code);
  add_export(app, exit_code);
  add_merge(app, exit_code);
  add_import(app, exit_code);
  add_report(app, exit_code);
  add_fleet(app, check_session_args);
  add_operator_commands(app);
}

}  // namespace varex::cli
