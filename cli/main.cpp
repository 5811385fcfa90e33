// varex: the command line. Exit status 0 on success, 2 on bad usage or input, 1 on a runtime failure,
// 3 when another process runs the same session, 130 when interrupted (cli::kExitStatuses).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "base/interrupt.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/messages.hpp"
#include "cli/options.hpp"
#include "harness/worker.hpp"
#include "operators/install.hpp"

namespace {

using Aliases = std::vector<varex::harness::OperatorCommand>;

// An operator's alias (`varex plan run PLAN …` is `varex run --op plan --plan PLAN …`) becomes the command
// it stands for in `words`; `varex NAME --help` prints its help. An exit status where that ends the run.
std::optional<int> expand_alias(std::vector<std::string>& words, const Aliases& aliases) {
  const std::size_t argc = words.size();
  for (const auto& alias : aliases) {
    if (argc < 2 || words[1] != alias.name) continue;
    if (argc == 3 && (words[2] == "--help" || words[2] == "-h")) {
      std::cout << alias.help;
      return 0;
    }
    try {
      std::vector<std::string> expanded{words[0]};
      for (auto& w : alias.expand({words.begin() + 2, words.end()})) expanded.push_back(std::move(w));
      words = std::move(expanded);
    } catch (const varex::UsageError& e) {
      std::cerr << "varex: " << varex::printable(e.what()) << "\n";
      return 2;
    }
    break;
  }
  return std::nullopt;
}

// The application with its version flag, every command, and a footer of the aliases and exit statuses.
void set_up_app(CLI::App& app, const Aliases& aliases, int& exit_code) {
  app.set_version_flag("-V,--version", VAREX_VERSION);
  std::string also;
  for (const auto& alias : aliases) also += "Also: " + alias.name + " " + alias.summary + "\n";
  app.footer(also + (also.empty() ? "" : "\n") + varex::cli::kExitStatuses);
  app.require_subcommand(1);
  varex::cli::add_commands(app, exit_code);
}

// `varex help [topic]`: the application's help, an alias's or a command's.
int print_help_topic(const CLI::App& app, const Aliases& aliases, int argc, char** argv,
                     const std::string& list) {
  if (argc == 2) {
    std::cout << app.help();
    return 0;
  }
  const std::string topic = argv[2];
  for (const auto& alias : aliases) {
    if (alias.name == topic) {
      std::cout << alias.help;
      return 0;
    }
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

// The command word first, as git and cargo read it: `help [command]`, and an unknown or missing word
// named. An exit status where that ends the run.
std::optional<int> read_command_word(const CLI::App& app, const Aliases& aliases, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
  const std::string list = varex::join(commands, ", ");
  if (argc >= 2 && argv[1][0] != '-') {
    const std::string word = argv[1];
    if (word == "help") return print_help_topic(app, aliases, argc, argv, list);
    if (std::find(commands.begin(), commands.end(), word) == commands.end()) {
      std::cerr << "varex: unknown command '" << word << "' (commands: " << list << "; varex help)\n";
      return 2;
    }
  } else if (argc < 2) {
    std::cerr << "varex: a command is needed (commands: " << list << "; varex help)\n";
    return 2;
  }
  return std::nullopt;
}

// `run|sweep|tune --op X --help`: the command's flags, then the operator's own workload. An exit status
// where that is what was asked.
std::optional<int> print_operator_help(const CLI::App& app, int argc, char** argv) {
  const auto op = varex::cli::op_argument(argc, argv);
  const bool help = std::any_of(argv + 1, argv + argc, [](const char* a) {
    return std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0;
  });
  if (!op || !help || argc < 2) return std::nullopt;
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

// `--op-dir DIR` (anywhere, repeatable): a user operator's directory, or a directory of them, put in front of
// VAREX_OP_PATH before the operators are installed, so that the worker processes (which inherit the
// environment) and everything else see the same operators. Taken out of the words CLI11 parses.
std::vector<std::string> take_operator_dirs(std::vector<std::string> words) {
  std::vector<std::string> dirs, rest;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--op-dir") {
      if (i + 1 >= words.size()) throw varex::UsageError("--op-dir needs a directory");
      dirs.push_back(words[++i]);
    } else if (words[i].starts_with("--op-dir=")) {
      dirs.push_back(words[i].substr(9));
    } else {
      rest.push_back(words[i]);
    }
  }
  if (std::any_of(dirs.begin(), dirs.end(), [](const std::string& d) { return d.empty(); }))
    throw varex::UsageError("--op-dir needs a directory");
  if (!dirs.empty()) {
    // Absolute, so that a worker, a fleet's task on another node or a later command finds them from anywhere.
    for (std::string& d : dirs) d = std::filesystem::absolute(d).lexically_normal().string();
    if (const char* path = std::getenv("VAREX_OP_PATH"); path && *path) dirs.emplace_back(path);
    ::setenv("VAREX_OP_PATH", varex::join(dirs, ":").c_str(), 1);
  }
  return rest;
}

// Parses the command line and runs the command; every failure becomes one line and its exit status.
int parse_and_run(CLI::App& app, int argc, char** argv, const int& exit_code) {
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

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> words(argv, argv + argc);
  try {
    words = take_operator_dirs(std::move(words));
    varex::harness::save_startup_environment();
    varex::operators::install();          // first: the worker process below runs operators too
  } catch (const varex::UsageError& e) {  // a user operator's declaration, or a directory that has none
    std::cerr << "varex: " << varex::printable(e.what()) << "\n";
    return 2;
  }
  // The same binary serves as the worker process that owns a device (see harness/worker.hpp).
  if ((argc == 2 || argc == 3) && std::strcmp(argv[1], "__worker") == 0)
    return varex::harness::worker_main(3, 4, argc == 3 ? std::atol(argv[2]) : 0);

  const Aliases aliases = varex::cli::operator_aliases();
  if (const auto status = expand_alias(words, aliases)) return *status;
  std::vector<char*> arg_pointers;
  for (std::string& w : words) arg_pointers.push_back(w.data());
  argc = static_cast<int>(arg_pointers.size());
  argv = arg_pointers.data();

  CLI::App app{"varex: variant explorer and auto-tuner for database operators on OpenCL and CUDA devices",
               "varex"};
  int exit_code = 0;
  set_up_app(app, aliases, exit_code);
  varex::install_interrupt_handler();
  if (const auto status = read_command_word(app, aliases, argc, argv)) return *status;
  if (const auto status = print_operator_help(app, argc, argv)) return *status;
  return parse_and_run(app, argc, argv, exit_code);
}
