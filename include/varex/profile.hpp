#pragma once
// varex tuning profiles in other builds: header-only, C++17, the standard library only.
//
// A profile holds, per device model and operator, the best verified parameters varex measured, per
// workload class: a shape (what kind of workload: the dataset, the query's form such as a pattern) and a
// scale (rows, and numbers such as selectivity, distinct keys, skew). `Profile::lookup` answers
// "parameters for operator X on this device for this workload" and says which level of the fallback chain
// answered:
//
//   1. ExactDevice        same backend, vendor and device name
//   2. SameArchitecture   same backend and architecture key (e.g. CUDA compute capability "sm_90")
//   3. SameVendorAndType  same backend, vendor and device type ("gpu", "cpu")
//   4. Default            the operator's default parameters (the source's own kernel), which varex
//                         exports with every profile; empty if the profile does not know the operator
//
// Within a level only entries of the same shape compete (a shape key that both sides give must agree; keys
// only one side gives do not matter), and the one of the nearest scale wins: the exact class (every key the
// workload gives, with the entry's value; what only the entry gives does not count), else the
// smallest workload_distance (below: the one distance between classes, which varex's warm start uses too);
// ties go to the entry of the lower value. A level with no entry of the shape passes to the next.
//
// Each entry is the best by one objective (version 4): "time" (the median kernel time), "energy" (per
// repetition) or "edp" (energy x time). A lookup names the objective it wants (time unless it says) and only
// entries of that objective answer it; older profiles hold time entries only.
//
// Profiles come from `varex export --format json` (load them with varex/profile_json.hpp) or
// `varex export --format header`, a generated header that builds a Profile from literals.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace varex::profile {

struct DeviceKey {
  std::string backend;  // "opencl" or "cuda"
  std::string vendor;
  std::string name;
  std::string arch;
  std::string type;  // "gpu", "cpu" or "accelerator"
  std::string driver;
};

// Tunable values as text: "128", "auto", "overflow".
using Params = std::map<std::string, std::string>;

// A workload class, as the consumer describes its workload and as profile entries record theirs.
struct Workload {
  std::map<std::string, std::string> shape;  // e.g. {"dataset", "titles"}, {"pattern", "^a"}
  std::map<std::string, double> scale;       // e.g. {"rows", 1 << 24}, {"selectivity", 0.01}
  // How each scale key compares, as its operator declares it: "count" or "fraction" (profile version 5 on;
  // a consumer's workload need not say).
  std::map<std::string, std::string> kinds = {};
};

// The distance between two workload classes of one shape: summed over the scale keys both give,
// |log2 a - log2 b| for counts (rows, distinct keys: a doubling is one step) and 4 |a - b| for fractions
// (a selectivity, a skew). A key's kind is what either side declares; where neither does (profiles before
// version 5), a count where both values are at least 1. Keys only one side gives do not count.
inline double workload_distance(const Workload& a, const Workload& b) {
  auto kind_of = [&](const std::string& key, double x, double y) {
    for (const Workload* w : {&a, &b}) {
      if (const auto it = w->kinds.find(key); it != w->kinds.end()) return it->second;
    }
    return std::string(x >= 1 && y >= 1 ? "count" : "fraction");
  };
  double d = 0;
  for (const auto& [key, value] : a.scale) {
    const auto it = b.scale.find(key);
    if (it == b.scale.end()) continue;
    if (kind_of(key, value, it->second) == "count") {
      d += std::fabs(std::log2(std::max(value, 1.0)) - std::log2(std::max(it->second, 1.0)));
    } else {
      d += 4.0 * std::fabs(value - it->second);
    }
  }
  return d;
}

struct Entry {
  DeviceKey device;
  std::string op;
  Workload workload;
  Params params;
  double kernel_ms = 0;
  double gbps = 0;
  double probe_fraction = 0;
  std::string variant;      // varex's variant id
  std::string measured_at;  // ISO 8601
  std::string method;       // how it was found, e.g. "sweep exhaustive" or "tune auc_bandit 10%"
  // What a run of the entry needs (profile version 3; empty in older ones): the operator's kernel family,
  // the hash of the kernel source it was measured with, and the defines its program was built with.
  std::string family;
  std::string source_hash;
  std::map<std::string, std::string> defines;
  // The next fastest variants measured for the same class, fastest first (version 3): where the runtime
  // library's online adaptation starts besides the entry.
  std::vector<Params> runners_up;
  // What the entry is best by (version 4; "time" in older ones), its value under it (milliseconds, joules
  // per repetition, or joules x seconds), and its energy per repetition and power where measured (else 0).
  std::string objective = "time";
  double value = 0;
  double energy_j = 0;
  double power_w = 0;
};

enum class Level { ExactDevice, SameArchitecture, SameVendorAndType, Default };

inline const char* to_string(Level level) {
  switch (level) {
    case Level::ExactDevice:
      return "exact_device";
    case Level::SameArchitecture:
      return "same_architecture";
    case Level::SameVendorAndType:
      return "same_vendor_and_type";
    case Level::Default:
      return "default";
  }
  return "default";
}

struct Choice {
  Params params;
  Level level = Level::Default;
  const Entry* entry = nullptr;  // null at the Default level
  // The entry's class is the workload's: the same value of every shape and scale key the workload gives
  // (keys only the entry gives, such as its generator, do not count).
  bool exact_class = false;

  // A tunable as an integer, or `fallback` when absent or a word such as "auto".
  long long integer(const std::string& name, long long fallback) const {
    const auto it = params.find(name);
    if (it == params.end() || it->second.empty()) return fallback;
    std::size_t used = 0;
    try {
      const long long v = std::stoll(it->second, &used);
      return used == it->second.size() ? v : fallback;
    } catch (const std::exception&) {
      return fallback;
    }
  }
  const std::string& text(const std::string& name) const {
    static const std::string empty;
    const auto it = params.find(name);
    return it == params.end() ? empty : it->second;
  }
  // The `grid` tunable as a number of work-groups on a device of `compute_units` units: k per unit, or N
  // for "Nwg"; 0 for cover (one work-item per element), when absent or not understood.
  unsigned long long work_groups(unsigned compute_units) const {
    const std::string& grid = text("grid");
    const bool total = grid.size() > 2 && grid.compare(grid.size() - 2, 2, "wg") == 0;
    const std::string digits = total ? grid.substr(0, grid.size() - 2) : grid;
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
    const unsigned long long n = std::stoull(digits);
    return total ? n : n * compute_units;
  }
};

// Profiles written before varex had one launch vocabulary name the grid tunable `groups_per_cu` (selection
// and the string operators: cover or k work-groups per compute unit), `processors` (hash join) or `groups`
// (group-by: cover or N work-groups in all). They are read as `grid`, which spells the last as "Nwg"; of
// those operators only, since another's tunable may have such a name (a user operator's `groups`).
inline void upgrade_launch_names(Params& params, const std::string& op) {
  const bool strings = op.rfind("str_", 0) == 0;
  for (const char* old : {"groups_per_cu", "processors", "groups"}) {
    const std::string name = old;
    const bool had = name == "groups_per_cu" ? op == "selection" || strings
                     : name == "processors"  ? op == "hashjoin"
                                             : op == "groupby";
    if (!had) continue;
    const auto it = params.find(old);
    if (it == params.end() || params.count("grid")) continue;
    std::string value = it->second;
    const bool count = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    if (count && it->first != "groups_per_cu") value += "wg";
    params.erase(it);
    params["grid"] = value;
  }
}

class Profile {
 public:
  Profile() = default;
  Profile(std::vector<Entry> entries, std::map<std::string, Params> defaults)
      : entries_(std::move(entries)), defaults_(std::move(defaults)) {
    for (Entry& e : entries_) {
      // Entries of older profiles and generated headers are time entries valued by their time.
      if (e.objective == "time" && e.value == 0) e.value = e.kernel_ms;
      upgrade_launch_names(e.params, e.op);
      for (Params& p : e.runners_up) upgrade_launch_names(p, e.op);
    }
    for (auto& [op, params] : defaults_) upgrade_launch_names(params, op);
  }

  const std::vector<Entry>& entries() const { return entries_; }
  const std::map<std::string, Params>& defaults() const { return defaults_; }

  Choice lookup(const std::string& op, const DeviceKey& device, const Workload& workload,
                const std::string& objective = "time") const {
    for (Level level : {Level::ExactDevice, Level::SameArchitecture, Level::SameVendorAndType}) {
      const Entry* best = nullptr;
      double best_distance = std::numeric_limits<double>::infinity();
      for (const Entry& e : entries_) {
        if (e.op != op || e.objective != objective || !matches(level, e.device, device) ||
            !same_shape(e.workload, workload))
          continue;
        const double d = workload_distance(e.workload, workload);
        if (!best || d < best_distance || (d == best_distance && e.value < best->value)) {
          best = &e;
          best_distance = d;
        }
      }
      if (best) {
        return {best->params, level, best, covers(best->workload, workload)};
      }
    }
    const auto it = defaults_.find(op);
    return {it == defaults_.end() ? Params{} : it->second, Level::Default, nullptr, false};
  }

  // The common case: a size, and a selectivity where the operator has one (negative: none).
  Choice lookup(const std::string& op, const DeviceKey& device, std::uint64_t rows, double selectivity = -1,
                const std::string& objective = "time") const {
    Workload w;
    w.scale["rows"] = static_cast<double>(rows);
    if (selectivity >= 0) w.scale["selectivity"] = selectivity;
    return lookup(op, device, w, objective);
  }

 private:
  static bool matches(Level level, const DeviceKey& e, const DeviceKey& d) {
    if (e.backend != d.backend) return false;
    switch (level) {
      case Level::ExactDevice:
        return e.vendor == d.vendor && e.name == d.name;
      case Level::SameArchitecture:
        return !e.arch.empty() && e.arch == d.arch;
      case Level::SameVendorAndType:
        return e.vendor == d.vendor && e.type == d.type;
      case Level::Default:
        return false;
    }
    return false;
  }

  static bool same_shape(const Workload& a, const Workload& b) {
    for (const auto& [key, value] : a.shape) {
      const auto it = b.shape.find(key);
      if (it != b.shape.end() && it->second != value) return false;
    }
    return true;
  }

  // Whether `entry`'s class is the workload's as far as the workload knows it: every shape and scale key
  // the workload gives, the entry gives with the same value. Keys only the entry gives (how its data was
  // made, such as the generator, or statistics of data the consumer has not seen) do not matter.
  static bool covers(const Workload& entry, const Workload& workload) {
    const auto gives = [](const auto& keys, const auto& key, const auto& value) {
      const auto it = keys.find(key);
      return it != keys.end() && it->second == value;
    };
    for (const auto& [key, value] : workload.shape)
      if (!gives(entry.shape, key, value)) return false;
    for (const auto& [key, value] : workload.scale)
      if (!gives(entry.scale, key, value)) return false;
    return true;
  }

  std::vector<Entry> entries_;
  std::map<std::string, Params> defaults_;
};

}  // namespace varex::profile
