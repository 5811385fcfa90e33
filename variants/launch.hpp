#pragma once
// The launch vocabulary every operator shares, declared here once:
//   local    the work-group size (auto: the driver's choice, where an operator offers it);
//   grid     how many work-groups the kernels that walk the rows get: `cover` (enough to cover the input
//            once), k (k work-groups per compute unit, striding over the input) or `Nwg` (N work-groups in
//            all: the source systems' fixed counts, such as Ocelot's 32 "processors");
//   padding  how a grid becomes whole work-groups: none, host (buffers padded on the host), guard (the
//            kernel's bound check retires surplus work-items).
// Names used before one vocabulary existed (`groups_per_cu`, the hash join's `processors`, the group-by's
// `groups`) are read as `grid` wherever varex reads parameters: `--set`, databases (schema 7) and profiles.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/device.hpp"
#include "variants/space.hpp"

namespace varex::variants {

// The grid of one variant.
struct Grid {
  enum class Kind { Cover, PerUnit, Total };
  Kind kind = Kind::Cover;
  std::uint64_t n = 0;  // work-groups per compute unit, or in all

  static Grid of(const Params& params);  // cover when the operator has no grid
  // Work-groups on a device with `compute_units` units; 0 for cover.
  std::uint64_t work_groups(std::uint32_t compute_units) const;
};

// `Nwg`: N work-groups in all.
Value total_work_groups(std::int64_t n);

struct LocalOptions {
  bool with_auto = true;                   // offer `auto` (the driver's choice)
  TunableKind kind = TunableKind::Launch;  // compile-time where a kernel sizes local arrays with it
  Value default_value = Value{"auto"};
  std::uint64_t largest = 0;  // a cap below the device's largest work-group; 0: none
  std::string help = "work-group size";
};
Tunable local_tunable(const DeviceInfo& device, const LocalOptions& options = {});

// `walks` names what the fixed work-groups stride over and what cover gives, e.g. "the rows".
Tunable grid_tunable(std::vector<Value> values, Value default_value, const std::string& walks);

enum class Padding { None, Host, Guard };
// Offers `paddings` (in this order) with one help text per kind; `host_note` adds what host padding
// pads for this operator.
Tunable padding_tunable(const std::vector<Padding>& paddings, const std::string& host_note = "");

// The constraint every operator with `local=auto` and a fixed grid shares.
Constraint fixed_grid_needs_local();
bool covers(const Params& params);  // grid=cover (or no grid)

// `--set` settings with the old names rewritten to `grid` (groups_per_cu=k → k, processors=N and
// groups=N → Nwg); others unchanged, and so is an old name that is a tunable of `space` (a user operator's
// own "groups"). UsageError when the old and the new name are both given.
std::map<std::string, std::string> upgrade_settings(const std::map<std::string, std::string>& settings,
                                                    const Space& space);

}  // namespace varex::variants
