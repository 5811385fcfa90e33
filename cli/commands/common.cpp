#include "cli/commands/common.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "cli/options.hpp"
#include "harness/operators/operator.hpp"

namespace varex::cli {

std::unique_ptr<results::Store> open_results(const std::string& path) {
  const std::string directory = std::filesystem::absolute(path).parent_path().string();
  const bool writable = ::access(path.c_str(), W_OK) == 0 && ::access(directory.c_str(), W_OK) == 0;
  if (!writable && std::filesystem::exists(path))
    return std::make_unique<results::Store>(path, results::Database::Mode::ReadOnly);
  auto store = std::make_unique<results::Store>(path, results::Database::Mode::Existing);
  store->classify_workloads(harness::workload_class_of);
  return store;
}

CLI::Option* add_db_option(CLI::App* cmd, std::string& db, const std::string& help) {
  return cmd->add_option("--db", db, help)
      ->check(CLI::Validator(
          [](std::string& path) {
            return trim(path).empty() ? std::string("empty; give a database file such as varex.db")
                                      : std::string();
          },
          "PATH"))
      ->capture_default_str();
}

void add_objectives_option(CLI::App* cmd, std::vector<std::string>& objectives) {
  cmd->add_option(
      "--objective", objectives,
      "Only the bests by these objectives: time, energy, edp (repeatable, or a comma list; default: "
      "time, and energy and edp where measurements carry energy)");
}

std::optional<std::vector<std::int64_t>> recorded_devices(results::Store& store, const std::string& selector,
                                                          const std::string& where) {
  if (selector.empty()) return std::nullopt;
  const auto recorded = store.devices();
  std::vector<DeviceInfo> infos;
  for (const auto& r : recorded) infos.push_back(r.device);
  std::vector<std::int64_t> rows;
  for (const DeviceInfo& d :
       select_devices(infos, selector, "in " + (where.empty() ? store.path() : where))) {
    for (const auto& r : recorded) {
      if (r.device.uid() == d.uid()) rows.push_back(r.row);
    }
  }
  return rows;
}

results::ExportFilter export_filter(results::Store& store, const std::optional<std::string>& op,
                                    const std::string& devices, bool include_runs,
                                    const std::vector<std::string>& objectives) {
  if (op) harness::find_operator(*op);
  results::ExportFilter filter{op, recorded_devices(store, devices), include_runs, {}};
  for (const std::string& list : objectives) {
    for (const std::string& name : split(list, ',')) {
      const Objective o = objective_from_string(trim(name));
      if (std::find(filter.objectives.begin(), filter.objectives.end(), o) == filter.objectives.end())
        filter.objectives.push_back(o);
    }
  }
  return filter;
}

results::DefaultParams operator_defaults() {
  results::DefaultParams out;
  for (const harness::Operator* op : harness::operators()) {
    for (const auto& [name, value] : harness::generic_space(*op).defaults())
      out[op->name()][name] = variants::to_string(value);
  }
  return out;
}

std::set<std::string> probe_not_a_bound() {
  std::set<std::string> out;
  for (const harness::Operator* op : harness::operators()) {
    if (!op->moves_all_its_bytes()) out.insert(op->name());
  }
  return out;
}

void write_output(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    std::cout.flush();
    return;
  }
  std::ofstream out(path);
  out << text;
  if (!out) throw UsageError("cannot write '" + path + "'");
}

}  // namespace varex::cli
