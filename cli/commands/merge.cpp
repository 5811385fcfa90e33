// `varex merge`: databases from several machines merged into one, without duplicates.
#include <iostream>
#include <memory>

#include "cli/commands/registry.hpp"
#include "results/merge.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

}  // namespace

void add_merge(CLI::App& app, int&) {
  auto* cmd =
      app.add_subcommand("merge", "Merge databases from several machines into one, without duplicates");
  auto into = std::make_shared<std::string>();
  auto sources = std::make_shared<std::vector<std::string>>();
  auto json_out = std::make_shared<bool>(false);
  cmd->add_option("--into", *into, "Target database (created if missing)")->required();
  cmd->add_option("sources", *sources, "Databases to merge in")->required();
  cmd->add_flag("--json", *json_out, "Print JSON");
  cmd->callback([=] {
    const results::MergeReport report = results::merge_databases(*into, *sources);
    json out = json::array();
    for (std::size_t i = 0; i < sources->size(); ++i) {
      const auto& stats = report.sources[i];
      out.push_back({{"source", (*sources)[i]},
                     {"devices", stats.devices},
                     {"sessions", stats.sessions},
                     {"measurements", stats.measurements}});
      if (!*json_out) {
        std::cout << (*sources)[i] << ": " << stats.devices << " devices, " << stats.sessions << " sessions, "
                  << stats.measurements << " measurements\n";
      }
    }
    if (*json_out) {
      std::cout << json{{"sources", out},
                        {"added",
                         {{"devices", report.added.devices},
                          {"sessions", report.added.sessions},
                          {"measurements", report.added.measurements}}}}
                       .dump(2)
                << "\n";
    } else {
      std::cout << "added to " << *into << ": " << report.added.devices << " devices, "
                << report.added.sessions << " sessions, " << report.added.measurements << " measurements\n";
    }
  });
}

}  // namespace varex::cli
