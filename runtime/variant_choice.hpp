#pragma once
// Which variant a runtime call runs: the application's pinned parameters, else the profile's entry for the
// device and the call's workload class, else the operator's defaults. An entry whose kernels are not this
// build's, whose parameters the space does not take, or that cannot run on the caller's buffers falls back
// to the defaults, with a note that says why.
#include <map>
#include <optional>
#include <string>

#include "harness/operators/bound_run.hpp"
#include "varex/profile.hpp"

namespace varex::runtime {

struct VariantChoice {
  variants::Params params;
  std::string variant;  // varex's variant id
  profile::Level level = profile::Level::Default;
  bool exact_class = false;
  bool pinned = false;
  std::string note;
  std::vector<variants::Params> runners_up;  // the profile entry's next fastest variants this space takes
};

// The operator's defaults with what the caller's buffers decide (BoundRun::fixed, where the space has the
// tunable).
variants::Params call_defaults(const variants::Space& space, const harness::BoundRun& run);

// The profile's entries of `objective` ("time", "energy", "edp") answer. Throws UsageError for pins the space
// does not take.
VariantChoice choose_variant(const harness::Operator& op, const DeviceInfo& device,
                             const variants::Space& space, const harness::BoundRun& run,
                             const profile::Profile* profile, const std::optional<profile::Params>& pinned,
                             const std::string& objective = "time");

}  // namespace varex::runtime
