// `varex ops`: the operators, their workload flags and query keys, tunables and constraints.
#include <iostream>
#include <memory>

#include "base/text.hpp"
#include "cli/commands/registry.hpp"
#include "cli/options.hpp"
#include "harness/operators/operator.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

}  // namespace

void add_ops(CLI::App& app, int&) {
  auto* cmd =
      app.add_subcommand("ops", "List the operators: their workloads (flags, query keys) and tunables");
  auto json_out = std::make_shared<bool>(false);
  auto only = std::make_shared<std::string>();
  cmd->add_option("op", *only, "Show this operator only");
  cmd->add_flag("--json", *json_out, "Print JSON");
  cmd->callback([=] {
    if (!only->empty()) harness::find_operator(*only);  // names the operators when unknown
    // Values that depend on the device are shown for a generic OpenCL GPU (harness::generic_space).
    json out = json::array();
    for (const harness::Operator* op : harness::operators()) {
      if (!only->empty() && op->name() != *only) continue;
      const auto space = harness::generic_space(*op);
      json tunables = json::array();
      for (const auto& t : space.tunables()) {
        json values = json::array();
        for (const auto& v : t.values) values.push_back(variants::to_json(v));
        tunables.push_back({{"name", t.name},
                            {"kind", t.kind == variants::TunableKind::Compile ? "compile" : "launch"},
                            {"default", variants::to_json(t.default_value)},
                            {"values", values},
                            {"help", t.help}});
      }
      json constraints = json::array();
      for (const auto& c : space.constraints()) constraints.push_back(c.description);
      out.push_back({{"name", op->name()},
                     {"description", op->description()},
                     {"workload", workload_json(*op)},
                     {"tunables", tunables},
                     {"constraints", constraints}});
      // What a user operator that names this one's contract gets (docs/USER-OPERATORS.md).
      if (const auto contract = op->contract()) {
        out.back()["contract"] = {
            {"buffers", contract->buffers}, {"scalars", contract->scalars}, {"help", contract->help}};
      }
    }
    if (*json_out) {
      std::cout << out.dump(2) << "\n";
      return;
    }
    for (const auto& o : out) {
      std::cout << workload_help(harness::find_operator(o["name"].get<std::string>())) << "  tunables:\n";
      for (const auto& t : o["tunables"]) {
        std::vector<std::string> values;
        for (const auto& v : t["values"]) values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
        std::cout << "    " << t["name"].get<std::string>() << " (" << t["kind"].get<std::string>()
                  << ", default "
                  << (t["default"].is_string() ? t["default"].get<std::string>() : t["default"].dump())
                  << "): " << join(values, ", ") << "\n        " << t["help"].get<std::string>() << "\n";
      }
      std::cout << "  constraints:\n";
      for (const auto& c : o["constraints"]) std::cout << "    - " << c.get<std::string>() << "\n";
      if (o.contains("contract")) {
        const json& c = o["contract"];
        std::cout << "  contract for a user's kernels (\"contract\": \"" << o["name"].get<std::string>()
                  << "\"):\n    buffers: " << join(c["buffers"].get<std::vector<std::string>>(), ", ")
                  << "\n    scalars: " << join(c["scalars"].get<std::vector<std::string>>(), ", ") << "\n    "
                  << c["help"].get<std::string>() << "\n";
      }
    }
  });
}

}  // namespace varex::cli
