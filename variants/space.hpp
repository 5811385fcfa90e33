#pragma once
// A parameter space: named tunables with their values, and the constraints that valid points satisfy.
// Points are addressed by a mixed-radix index, so a space of millions of points is never materialised:
// callers enumerate it, draw from it, or walk to neighbours lazily.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/params.hpp"

namespace varex::variants {

// Compile-time tunables become preprocessor defines (one program per combination); launch-time tunables
// only change how a compiled program is launched.
enum class TunableKind { Compile, Launch };

struct Tunable {
  std::string name;
  TunableKind kind = TunableKind::Compile;
  std::vector<Value> values;
  Value default_value;
  std::string help;

  std::optional<std::size_t> index_of(const Value& value) const;
  // Parses user text by matching the printed form of an allowed value; throws UsageError otherwise.
  Value parse(std::string_view text, std::string_view op) const;
};

struct Constraint {
  std::string description;  // says why a point is invalid, shown to users
  std::function<bool(const Params&)> holds;
};

// Tunables without effect in part of the space (a conditional parameter): where `when` holds, `tunables`
// are inactive, and the points that differ only in them are one variant. A fused step's work-group size is
// one: its group's kernels take their first step's.
struct Inactive {
  std::string description;
  std::function<bool(const Params&)> when;
  std::vector<std::string> tunables;
  // The tunables `when` reads, where the rule says (empty: any). Where all of them come before the inactive
  // tunables, enumeration skips the points at which those are inactive and off their defaults at once, rather
  // than one by one: a user's kernels beside a built-in's millions of points (a contract's `origin`).
  std::vector<std::string> reads = {};
};

// Every point has one canonical form, its inactive tunables at their defaults; enumeration, counting,
// neighbours, settings and the tuner's sampling deal in canonical points only. Drawn uniformly from the
// whole product, a part of the space with inactive tunables keeps its share of the draws (fused and
// step-by-step plans half each), which it would not if the inactive tunables were pinned by a constraint.
class Space {
 public:
  Space(std::string op, std::vector<Tunable> tunables, std::vector<Constraint> constraints,
        std::vector<Inactive> inactive = {});

  const std::string& op() const { return op_; }
  const std::vector<Tunable>& tunables() const { return tunables_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  const std::vector<Inactive>& inactive() const { return inactive_; }
  const Tunable& tunable(std::string_view name) const;  // UsageError if unknown

  // Number of points before constraints (the product of the value counts).
  std::uint64_t cardinality() const;
  // Number of valid canonical points (variants): counted exactly for spaces up to kWalkLimit points, else
  // estimated from a deterministic sample of indices.
  std::uint64_t count_valid() const;
  static constexpr std::uint64_t kWalkLimit = 1ULL << 22;
  Params at(std::uint64_t index) const;
  std::uint64_t index_of(const Params& params) const;
  // index_of(canonical(params)) without building the canonical point (the tuner asks it of every draw).
  std::uint64_t canonical_index(const Params& params) const;
  // The same for the point at(index), given both, without looking its values up.
  std::uint64_t canonical_index_at(std::uint64_t index, const Params& at_index) const;
  // The next index after `index` that may hold a canonical point: index + 1, or past the points where a rule
  // that says what it reads (Inactive::reads) keeps a tunable inactive off its default, as at(index) does.
  std::uint64_t next_index(std::uint64_t index, const Params& at_index) const;

  // Nullopt when `params` is a valid point; otherwise the reason it is not.
  std::optional<std::string> violation(const Params& params) const;
  bool valid(const Params& params) const { return !first_fault(params); }
  // valid() of a point made by at(), whose values are the space's by construction: its constraints only.
  bool valid_at(const Params& at_index) const;
  // `params` with every tunable that is inactive there at its default.
  Params canonical(const Params& params) const;
  bool is_canonical(const Params& params) const;

  Params defaults() const;
  // `base` with the given "name=value" settings applied, in canonical form; unknown names or values are a
  // UsageError, and so is a result that breaks a constraint.
  Params with_settings(const Params& base, const std::map<std::string, std::string>& settings) const;

  // Valid canonical points in index order. `pins` restricts tunables to comma-separated value lists.
  std::vector<Params> enumerate(const std::map<std::string, std::string>& pins = {}) const;
  // The sub-space whose pinned tunables take only their listed values (in the space's order; the default
  // stays where it is listed, else the first listed value), so that counting and enumerating it cost what
  // the sub-space holds, however large the whole space. UsageError for unknown tunables or values.
  Space restricted(const std::map<std::string, std::string>& pins) const;
  // This space with one more constraint.
  Space with_constraint(Constraint constraint) const;
  // The canonical forms of the valid points that differ from `params` in exactly one tunable, but for
  // `params`' own.
  std::vector<Params> neighbours(const Params& params) const;

  // The compile-time part of a point: variants that share it share one compiled program.
  Params compile_part(const Params& params) const;
  // One valid canonical point per compile part that `enumerate()` holds (the first in index order), found
  // without listing the whole space: the join's 9 million points hold a few thousand programs.
  std::vector<Params> compile_parts() const;

 private:
  // What makes a point invalid, found without composing its text (violation() composes it; valid() does not).
  struct Fault {
    enum class Kind { NoValue, ForeignValue, ForeignTunable, Constraint } kind;
    std::size_t which;  // the tunable's or the constraint's position
  };
  std::optional<Fault> first_fault(const Params& params) const;
  // Per tunable, whether it is inactive at `params` (its canonical value is then its default).
  std::vector<bool> inactive_at(const Params& params) const;
  // The first position of a tunable that a rule with declared reads leaves inactive off its default at
  // `params`; the tunable count where there is none.
  std::size_t skipped_tunable(const Params& params) const;
  std::vector<std::pair<std::size_t, std::vector<std::size_t>>> skipping_;  // rule, its tunables' positions
  std::string op_;
  std::vector<Tunable> tunables_;
  std::vector<Constraint> constraints_;
  std::vector<Inactive> inactive_;
  // A copy to change: it does not share count_valid's answer.
  Space fresh_copy() const;
  // count_valid's answer once known, shared by the space's copies (which cannot change it): walking the
  // group-by's 2 million points took 2 to 3 s, and a tune asked four times before its first measurement.
  std::shared_ptr<std::atomic<std::int64_t>> valid_count_ = std::make_shared<std::atomic<std::int64_t>>(-1);
};

}  // namespace varex::variants

#include "base/device.hpp"

namespace varex::variants {

// What a space may depend on: the device's limits and the size of the workload.
struct SpaceContext {
  DeviceInfo device;
  std::uint64_t rows = 0;
  // The workload, for operators whose space depends on more than its rows (a plan's steps); may be null.
  const nlohmann::json* query = nullptr;
};

}  // namespace varex::variants
