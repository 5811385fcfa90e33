// varex: the command line. Exit status 0 on success, 2 on bad usage or input, 1 on a runtime failure,
// 3 when another process runs the same session, 130 when interrupted (cli::kExitStatuses).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "base/interrupt.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/messages.hpp"
#include "cli/options.hpp"
#include "harness/worker.hpp"

int main(int argc, char** argv) {
  varex::harness::save_startup_environment();
  // The same binary serves as the worker process that owns a device (see harness/worker.hpp).
  if ((argc == 2 || argc == 3) && std::strcmp(argv[1], "__worker") == 0)
    return varex::harness::worker_main(3, 4, argc == 3 ? std::atol(argv[2]) : 0);

  // `varex plan run|sweep|tune PLAN …` is `varex run|sweep|tune --op plan --plan PLAN …`.
  std::vector<std::string> words(argv, argv + argc);
  auto is_help = [](const std::string& w) { return w == "--help" || w == "-h"; };
  if (argc >= 2 && words[1] == "plan") {
    const bool command = argc >= 3 && (words[2] == "run" || words[2] == "sweep" || words[2] == "tune");
    if (argc == 3 && is_help(words[2])) {
      std::cout << varex::cli::plan_help();
      return 0;
    }
    if (command && argc >= 4 && is_help(words[3])) {
      words = {words[0], words[2], "--op", "plan", "--help"};  // the command's flags with the plan's own
    } else if (!command || argc < 4 || words[3][0] == '-') {
      std::cerr << "varex: plan takes run, sweep or tune and a plan (a shipped one or a file), as in "
                   "`varex plan run A --device ocl:0:0` (varex help plan)\n";
      return 2;
    } else {
      std::vector<std::string> w{words[0], words[2], "--op", "plan", "--plan", words[3]};
      w.insert(w.end(), words.begin() + 4, words.end());
      words = std::move(w);
    }
  }
  std::vector<char*> arg_pointers;
  for (std::string& w : words) arg_pointers.push_back(w.data());
  argc = static_cast<int>(arg_pointers.size());
  argv = arg_pointers.data();

  CLI::App app{"varex: variant explorer and auto-tuner for database operators on OpenCL and CUDA devices",
               "varex"};
  app.set_version_flag("-V,--version", VAREX_VERSION);
  app.footer(std::string("Also: plan run|sweep|tune PLAN  a whole TPC-H query plan (varex help plan)\n\n") +
             varex::cli::kExitStatuses);
  app.require_subcommand(1);
  int exit_code = 0;
  varex::cli::add_commands(app, exit_code);
  varex::install_interrupt_handler();

  // The command word first, as git and cargo read it: `help [command]`, and an unknown word named.
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
  const std::string list = varex::join(commands, ", ");
  if (argc >= 2 && argv[1][0] != '-') {
    const std::string word = argv[1];
    if (word == "help") {
      if (argc == 2) {
        std::cout << app.help();
        return 0;
      }
      const std::string topic = argv[2];
      if (topic == "plan") {
        std::cout << varex::cli::plan_help();
        return 0;
      }
      for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_name() == topic) {
          std::cout << sub->help();
          return 0;
        }
      }
      std::cerr << "varex: no command '" << topic << "' (commands: " << list << ")\n";
      return 2;
    }
    if (std::find(commands.begin(), commands.end(), word) == commands.end()) {
      std::cerr << "varex: unknown command '" << word << "' (commands: " << list << "; varex help)\n";
      return 2;
    }
  } else if (argc < 2) {
    std::cerr << "varex: a command is needed (commands: " << list << "; varex help)\n";
    return 2;
  }
  // `run|sweep|tune --op X --help`: the command's flags, then the operator's own workload.
  const auto op = varex::cli::op_argument(argc, argv);
  const bool help = std::any_of(argv + 1, argv + argc, [](const char* a) {
    return std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0;
  });
  if (op && help && argc >= 2) {
    try {
      const varex::harness::Operator& o = varex::harness::find_operator(*op);
      for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_name() == argv[1]) std::cout << sub->help() << "\n";
      }
      std::cout << varex::cli::workload_help(o);
      return 0;
    } catch (const varex::UsageError& e) {
      std::cerr << "varex: " << varex::printable(e.what()) << "\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "varex: " << varex::printable(varex::cli::rephrase_parse_error(e.what())) << "\n";
    return 2;
  } catch (const varex::BusyError& e) {
    std::cerr << "varex: " << varex::printable(e.what()) << "\n";
    return 3;
  } catch (const varex::UsageError& e) {
    std::cerr << "varex: " << varex::printable(e.what()) << "\n";
    return 2;
  } catch (const varex::harness::Interrupted&) {
    std::cerr << "varex: interrupted; everything measured so far is recorded\n";
    return 130;
  } catch (const std::exception& e) {
    std::cerr << "varex: " << varex::printable(e.what()) << "\n";
    return 1;
  }
  return exit_code;
}
