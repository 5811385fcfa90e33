// `varex best`: the best variant per device, operator and workload class a database holds.
#include <iostream>
#include <memory>
#include <set>

#include "base/text.hpp"
#include "cli/commands/common.hpp"
#include "cli/commands/registry.hpp"
#include "cli/options.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

struct BestFlags {
  std::optional<std::string> op;
  std::string device;
  std::string db = "varex.db";
  bool include_runs = false;
  bool json_out = false;
  std::string objective = "time";
};

}  // namespace

void add_best(CLI::App& app, int&) {
  auto* cmd = app.add_subcommand(
      "best",
      "Show the best variant per device, operator and workload class (re-measured times; docs/PROFILE.md)");
  auto f = std::make_shared<BestFlags>();
  cmd->add_option("--op", f->op, "Only this operator");
  cmd->add_option("--device", f->device,
                  "Only these recorded devices (selector: cpu, gpu, cuda:0, cuda:0@host, a comma list)");
  add_db_option(cmd, f->db, "Results database");
  cmd->add_flag(
      "--include-runs", f->include_runs,
      "Let single `varex run` measurements compete (by default only re-measured candidates of sweeps "
      "and tunings do)");
  cmd->add_option("--objective", f->objective,
                  "Best by: time (the median kernel time), energy (per repetition) or edp (energy x time); "
                  "energy and edp count only measurements that carry energy (--energy-ms)")
      ->capture_default_str();
  cmd->add_flag("--json", f->json_out, "Print JSON");
  cmd->callback([f] {
    if (f->op) harness::find_operator(*f->op);
    const Objective objective = objective_from_string(f->objective);
    const auto store = open_results(f->db);
    const auto best = store->best({f->op, recorded_devices(*store, f->device), f->include_runs, objective});
    const std::set<std::string> unbounded = probe_not_a_bound();
    json out = json::array();
    std::vector<std::vector<std::string>> rows;
    bool any_energy = false;
    for (const auto& b : best) {
      const std::string device = b.device.id + "@" + b.device.host;
      out.push_back({{"device", device},
                     {"device_name", b.device.name},
                     {"host", b.device.host},
                     {"backend", to_string(b.device.backend)},
                     {"op", b.op},
                     {"workload", b.workload.to_json()},
                     {"workload_class", b.workload_class.to_json()},
                     {"variant", b.variant_id},
                     {"params", variants::to_json(b.params)},
                     {"kernel_ms", b.kernel_ms},
                     {"kernel_ci", {b.kernel_ci_low, b.kernel_ci_high}},
                     {"h2d_ms", b.h2d_ms},
                     {"d2h_ms", b.d2h_ms},
                     {"gbps", b.gbps},
                     {"probe_gbps", b.probe_gbps ? json(*b.probe_gbps) : json(nullptr)},
                     {"probe_fraction", b.probe_fraction},
                     {"probe_is_bound", !unbounded.count(b.op)},
                     {"method", b.method},
                     {"session", b.session},
                     {"candidates", b.candidates},
                     {"candidate_measurements", b.measurements},
                     {"objective", to_string(b.objective)},
                     {"value", b.value},
                     {"energy_j", b.energy_j ? json(*b.energy_j) : json(nullptr)},
                     {"power_w", b.power_w ? json(*b.power_w) : json(nullptr)}});
      rows.push_back({device, b.op, b.workload_class.describe(), fixed(b.kernel_ms, 4),
                      b.energy_j ? fixed(*b.energy_j * 1e3, 2) : "-", b.power_w ? fixed(*b.power_w, 0) : "-",
                      fixed(b.gbps, 1),
                      fixed(100 * b.probe_fraction, 1) + "%" + (unbounded.count(b.op) ? " (no bound)" : ""),
                      variants::describe(b.params)});
      any_energy = any_energy || b.energy_j.has_value();
    }
    if (f->json_out) {
      std::cout << out.dump(2) << "\n";
      return;
    }
    if (best.empty()) {
      std::cout << "no re-measured verified variants in " << f->db
                << (objective == Objective::Time ? "" : " with their energy measured")
                << (f->include_runs ? "" : " (single runs count only with --include-runs)") << "\n";
      return;
    }
    // The energy columns where a best carries energy.
    if (!any_energy) {
      for (auto& row : rows) row.erase(row.begin() + 4, row.begin() + 6);
    }
    print_table(any_energy ? std::vector<std::string>{"device", "op", "workload", "kernel ms", "mJ", "W",
                                                      "GB/s", "of probe", "variant"}
                           : std::vector<std::string>{"device", "op", "workload", "kernel ms", "GB/s",
                                                      "of probe", "variant"},
                rows);
  });
}

}  // namespace varex::cli
