// `varex probe`: the devices' copy bandwidth, measured and stored.
#include <iostream>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "cli/commands/common.hpp"
#include "cli/commands/registry.hpp"
#include "cli/options.hpp"
#include "harness/worker.hpp"
#include "tuner/session.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

}  // namespace

void add_probe(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("probe", "Measure and store the devices' copy bandwidth");
  auto device = std::make_shared<std::string>("all");
  auto db = std::make_shared<std::string>("varex.db");
  auto json_out = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_option("--device", *device, "Device selector")->capture_default_str();
  add_db_option(cmd, *db, "Results database");
  cmd->add_flag("--quiet", *quiet, "Say nothing on stderr about what it does");
  cmd->add_flag("--json", *json_out, "Print JSON");
  cmd->callback([=, &exit_code] {
    const auto devices = resolve_devices(*device);
    results::Store store(*db);
    json out = json::array();
    std::vector<std::vector<std::string>> rows;
    for (const DeviceInfo& d : devices) {
      harness::RemoteDevice remote(self_executable(), d);
      if (!*quiet)
        std::cerr << "varex: probing " << d.id << "'s copy bandwidth (at most about 10 s of copies)\n";
      tuner::ProbeOutcome p;
      try {
        p = tuner::probe_device(store, store.device(d), remote, true);
      } catch (const RuntimeError& e) {
        std::cerr << "varex: " << d.id << " failed: " << e.what() << "\n";
        exit_code = 1;
        continue;
      }
      if (!p.note.empty()) {
        std::cerr << "varex: " << d.id << ": " << p.note << "\n";
        exit_code = 1;
      }
      out.push_back({{"device", d.id},
                     {"name", d.name},
                     {"gbps", p.gbps},
                     {"stored", p.stored},
                     {"method", p.measured ? p.measured->method : ""},
                     {"details", p.measured ? p.measured->details : json::object()}});
      rows.push_back({d.id, d.name, fixed(p.gbps, 1), p.measured ? p.measured->method : "",
                      p.stored ? "stored" : "kept the stored figure"});
    }
    if (*json_out)
      std::cout << out.dump(2) << "\n";
    else
      print_table({"device", "name", "GB/s", "best method", "result"}, rows);
  });
}

}  // namespace varex::cli
