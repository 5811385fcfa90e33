// The commands operators add of their own (harness::OperatorCommand): those that run, and the aliases
// main expands.
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.hpp"
#include "cli/commands/registry.hpp"

namespace varex::cli {

std::vector<harness::OperatorCommand> operator_aliases() {
  std::vector<harness::OperatorCommand> out;
  for (const harness::Operator* op : harness::operators()) {
    for (harness::OperatorCommand& command : op->commands()) {
      if (command.expand) out.push_back(std::move(command));
    }
  }
  return out;
}

void add_operator_commands(CLI::App& app) {
  for (const harness::Operator* op : harness::operators()) {
    for (const harness::OperatorCommand& command : op->commands()) {
      if (!command.run) continue;
      auto* cmd = app.add_subcommand(command.name, command.summary);
      auto values = std::make_shared<std::map<std::string, std::string>>();
      for (const harness::CommandFlag& flag : command.flags) {
        (*values)[flag.name] = flag.default_value;
        auto* option = cmd->add_option("--" + flag.name, (*values)[flag.name], flag.help);
        option->type_name(flag.value_name);
        if (flag.required) option->required();
        if (!flag.default_value.empty()) option->capture_default_str();
      }
      cmd->callback([values, run = command.run] { std::cout << run(*values); });
    }
  }
}

}  // namespace varex::cli
