// varex: the command line. Exit status 0 on success, 2 on bad usage or input, 1 on a runtime failure,
// 130 when interrupted.
#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>

#include "harness/cli/commands.hpp"
#include "harness/errors.hpp"
#include "harness/interrupt.hpp"
#include "harness/worker.hpp"

int main(int argc, char** argv) {
  varex::harness::save_startup_environment();
  // The same binary serves as the worker process that owns a device (see harness/worker.hpp).
  if (argc == 2 && std::strcmp(argv[1], "__worker") == 0) return varex::harness::worker_main(3, 4);

  CLI::App app{"varex: variant explorer and auto-tuner for database operators on OpenCL and CUDA devices"};
  app.set_version_flag("--version", VAREX_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  varex::cli::add_commands(app, exit_code);
  varex::install_interrupt_handler();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "varex: " << e.what() << "\n";
    return 2;
  } catch (const varex::UsageError& e) {
    std::cerr << "varex: " << e.what() << "\n";
    return 2;
  } catch (const varex::harness::Interrupted&) {
    std::cerr << "varex: interrupted; everything measured so far is recorded\n";
    return 130;
  } catch (const std::exception& e) {
    std::cerr << "varex: " << e.what() << "\n";
    return 1;
  }
  return exit_code;
}
