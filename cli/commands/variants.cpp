// `varex variants`: the valid variants of an operator's space on each device, or of one shard of it.
#include <iostream>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "cli/commands/registry.hpp"
#include "cli/options.hpp"
#include "harness/operators/operator.hpp"
#include "variants/launch.hpp"
#include "variants/shard.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

struct VariantsFlags {
  std::string op;
  std::string device = "all";
  WorkloadFlags workload;
  std::vector<std::string> set;
  std::optional<std::string> shard;
  bool json_out = false;
};

}  // namespace

void add_variants(CLI::App& app, int&) {
  auto* cmd = app.add_subcommand("variants", "List the valid variants of an operator's space per device");
  auto f = std::make_shared<VariantsFlags>();
  cmd->add_option("--op", f->op, "Operator")->required();
  cmd->add_option("--device", f->device, "Device selector")->capture_default_str();
  cmd->add_option("--set", f->set, "Restrict a tunable to values: name=v1,v2 (repeatable)");
  cmd->add_option("--shard", f->shard,
                  "Only the variants of shard K of N (K/N), as `sweep --shard` measures them");
  f->workload.add_to(*cmd);
  cmd->add_flag("--json", f->json_out, "Print JSON");
  cmd->callback([f] {
    const harness::Operator& op = harness::find_operator(f->op);
    const auto devices = resolve_devices(f->device, op);
    const auto spec = f->workload.resolve(op, devices);
    const auto pins =
        variants::upgrade_settings(parse_assignments(f->set, "--set"), harness::generic_space(op));
    const auto shard = f->shard ? std::optional(variants::Shard::parse(*f->shard)) : std::nullopt;
    json out = json::array();
    for (const DeviceInfo& d : devices) {
      const auto space = harness::space_for(op, d, spec);
      // A plan's space can hold 10^8 points: listing is for what fits on a screen or in a file.
      constexpr std::uint64_t kMostListed = 1000000;
      const std::uint64_t size = space.restricted(pins).cardinality();
      if (size > kMostListed)
        throw UsageError(op.name() + "'s space holds " + std::to_string(size) + " points on " + d.id +
                         " (at most " + std::to_string(kMostListed) +
                         " are listed): pin tunables with --set");
      // The sub-space, as a sweep sees it: a pinned tunable that is inactive in part of the space takes its
      // first pinned value there.
      const variants::Space pinned = space.restricted(pins);
      const auto points = shard ? variants::shard_of(pinned, *shard).enumerate() : pinned.enumerate();
      json list = json::array();
      for (const auto& p : points) {
        list.push_back({{"id", harness::variant_id(op, d.backend, p)}, {"params", variants::to_json(p)}});
      }
      out.push_back({{"device", d.id},
                     {"op", op.name()},
                     {"rows", spec.rows()},
                     {"space_size", space.cardinality()},
                     {"count", points.size()},
                     {"variants", list}});
    }
    if (f->json_out) {
      std::cout << out.dump(2) << "\n";
      return;
    }
    for (const auto& d : out) {
      std::cout << d["device"].get<std::string>() << ": " << d["count"].get<std::size_t>()
                << " valid variants of " << d["space_size"].get<std::uint64_t>() << " points for "
                << d["rows"].get<std::uint64_t>() << " rows\n";
      for (const auto& v : d["variants"]) {
        std::cout << "  " << v["id"].get<std::string>() << "  "
                  << variants::describe(variants::params_from_json(v["params"])) << "\n";
      }
    }
  });
}

}  // namespace varex::cli
