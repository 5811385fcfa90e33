// `varex devices`: this machine's OpenCL and CUDA devices, each with the other views of the same device.
#include <iostream>
#include <memory>

#include "base/text.hpp"
#include "cli/commands/registry.hpp"
#include "cli/options.hpp"
#include "harness/worker.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

}  // namespace

void add_devices(CLI::App& app, int&) {
  auto* cmd = app.add_subcommand("devices", "List every OpenCL and CUDA device of this machine");
  auto json_out = std::make_shared<bool>(false);
  auto selector = std::make_shared<std::string>("all");
  cmd->add_flag("--json", *json_out, "Print JSON");
  cmd->add_option("--device", *selector,
                  "Device selector: all, cpu, gpu, opencl, cuda, an id, or a comma list")
      ->capture_default_str();
  cmd->callback([=] {
    const auto all = harness::enumerate_devices();
    const auto devices = *selector == "all" ? all : select_devices(all, *selector);
    if (*json_out) {
      json out = json::array();
      for (const auto& d : devices) {
        json j = d.to_json();
        j["views"] = json::array();  // every id of the same physical device, this one included
        for (const auto& other : all) {
          if (other.physical == d.physical) j["views"].push_back(other.id);
        }
        out.push_back(j);
      }
      std::cout << out.dump(2) << "\n";
      return;
    }
    if (devices.empty()) {
      std::cout << "no OpenCL or CUDA devices found\n";
      return;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& d : devices) {
      // The other views of the same physical device: its OpenCL and CUDA sides.
      std::string physical = d.physical;
      for (const auto& other : all) {
        if (other.id != d.id && other.physical == d.physical) physical += " = " + other.id;
      }
      // The vendor as a profile names it (docs/PROFILE.md): what a consumer's lookup matches on.
      rows.push_back({d.id, to_string(d.backend), d.type, d.vendor, d.name, d.arch,
                      std::to_string(d.compute_units), format_bytes(d.global_mem), format_bytes(d.local_mem),
                      std::to_string(d.max_work_group), format_bytes(d.cache_bytes), physical});
    }
    print_table({"id", "backend", "type", "vendor", "name", "arch", "CUs", "global mem", "local mem",
                 "max wg", "cache", "physical device"},
                rows);
  });
}

}  // namespace varex::cli
