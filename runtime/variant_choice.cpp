#include "runtime/variant_choice.hpp"

#include "base/errors.hpp"
#include "harness/kernel_source.hpp"
#include "results/export.hpp"

namespace varex::runtime {

namespace {

variants::Params with_text(const variants::Space& space, const profile::Params& text) {
  return space.with_settings(space.defaults(), {text.begin(), text.end()});
}

// Why an entry measured with other kernels cannot stand for this build's: by the source hash a version-3
// profile carries, else by the variant id, which hashes the source in.
std::string foreign_kernels(const harness::Operator& op, const DeviceInfo& device,
                            const profile::Entry& entry, const variants::Params& params) {
  const std::string& own = harness::kernel_source(device.backend, op.kernel_family()).hash;
  if (!entry.source_hash.empty()) {
    if (entry.source_hash == own) return {};
    return "the profile's entry was measured with other " + op.kernel_family() + " kernels (source " +
           entry.source_hash + ", this build's " + own + ")";
  }
  if (entry.variant.empty() || entry.variant == harness::variant_id(op, device.backend, params)) return {};
  return "the profile's entry (variant " + entry.variant +
         ") was measured with other kernels than this build's";
}

}  // namespace

variants::Params call_defaults(const variants::Space& space, const harness::BoundRun& run) {
  std::map<std::string, std::string> fixed;
  for (const auto& [name, value] : run.fixed()) {
    for (const variants::Tunable& t : space.tunables()) {
      if (t.name == name) fixed[name] = value;
    }
  }
  return space.with_settings(space.defaults(), fixed);
}

VariantChoice choose_variant(const harness::Operator& op, const DeviceInfo& device,
                             const variants::Space& space, const harness::BoundRun& run,
                             const profile::Profile* profile, const std::optional<profile::Params>& pinned,
                             const std::string& objective) {
  VariantChoice choice;
  const auto settle = [&](variants::Params params) {
    choice.params = space.canonical(params);
    choice.variant = harness::variant_id(op, device.backend, choice.params);
    return choice;
  };
  const auto defaults_because = [&](std::string why) {
    choice.level = profile::Level::Default;
    choice.exact_class = false;
    choice.note = std::move(why);
    const variants::Params defaults = call_defaults(space, run);
    if (const std::string refused = run.refuses(defaults); !refused.empty())
      throw UsageError(op.name() + ": the default variant cannot run on these buffers: " + refused);
    return settle(defaults);
  };

  if (pinned) {
    // The tunables not named keep the call's defaults, which take what the buffers decide (a relation's
    // layout); a pin that names one of those overrides the buffers, and the call refuses what cannot run.
    const variants::Params params =
        space.with_settings(call_defaults(space, run), {pinned->begin(), pinned->end()});
    if (const auto violation = space.violation(params))
      throw UsageError(op.name() + ": the pinned parameters are not a variant: " + *violation);
    if (const std::string refused = run.refuses(params); !refused.empty())
      throw UsageError(op.name() + ": the pinned variant cannot run on these buffers: " + refused);
    choice.pinned = true;
    return settle(params);
  }
  if (!profile) return defaults_because({});

  const profile::Choice looked_up = profile->lookup(
      op.name(), results::profile_device(device), results::profile_workload(run.workload_class()), objective);
  if (looked_up.level == profile::Level::Default || !looked_up.entry) return defaults_because({});
  choice.level = looked_up.level;
  choice.exact_class = looked_up.exact_class;
  variants::Params params;
  try {
    params = with_text(space, looked_up.params);
  } catch (const std::exception& e) {
    return defaults_because(std::string("the profile's parameters are not this build's: ") + e.what());
  }
  if (const auto violation = space.violation(params))
    return defaults_because("the profile's parameters are not a variant here: " + *violation);
  if (const std::string foreign = foreign_kernels(op, device, *looked_up.entry, space.canonical(params));
      !foreign.empty())
    return defaults_because(foreign);
  if (const std::string refused = run.refuses(params); !refused.empty())
    return defaults_because("the profile's variant cannot run on these buffers: " + refused);
  for (const profile::Params& text : looked_up.entry->runners_up) {
    try {
      if (const variants::Params p = with_text(space, text); space.valid(p)) choice.runners_up.push_back(p);
    } catch (const std::exception&) {
      // a runner-up this build does not know is no candidate
    }
  }
  return settle(params);
}

}  // namespace varex::runtime
