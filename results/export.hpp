#pragma once
// What leaves the store for other tools: tuning profiles (JSON, or a generated C++ header, read by
// include/varex/profile.hpp; schema in docs/PROFILE.md) and Kernel Tuner's T4 results format.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/store.hpp"
#include "varex/profile.hpp"

namespace varex::results {

struct ExportFilter {
  std::optional<std::string> op;
  std::optional<std::vector<std::int64_t>> devices;  // recorded device rows; every device when unset
  bool include_runs = false;                         // `run` measurements compete for "best" too
  // The objectives whose bests a profile holds (base/objective.hpp); empty: time, and energy and edp where
  // measurements carry energy.
  std::vector<Objective> objectives;

  bool admits(const std::string& op_name, std::int64_t device_row) const {
    if (op && *op != op_name) return false;
    return !devices || std::find(devices->begin(), devices->end(), device_row) != devices->end();
  }
  BestQuery best_query(Objective objective = Objective::Time) const {
    return {op, devices, include_runs, objective};
  }
  std::vector<Objective> objectives_or_all() const {
    return objectives.empty() ? std::vector<Objective>{Objective::Time, Objective::Energy, Objective::Edp}
                              : objectives;
  }
};

using DefaultParams = std::map<std::string, std::map<std::string, std::string>>;  // operator -> params

// What a run of a variant needs besides its parameters, which the operators know and the store does not:
// its kernel family and the defines its program is built with on a device. Null: an operator this build
// does not know (its entries go without them).
struct VariantBuild {
  std::string family;
  std::map<std::string, std::string> defines;
};
using BuildOf = std::function<std::optional<VariantBuild>(const std::string& op, const DeviceInfo& device,
                                                          const variants::Params& params)>;

// The best verified variant per device, operator, workload and objective, grouped by device; with `build_of`,
// each entry also carries its kernel family, source hash and defines (profile version 3). Each entry names
// its objective, its value under it, and its energy and power where measured (version 4).
nlohmann::json profile_json(Store& store, const ExportFilter& filter, const DefaultParams& defaults,
                            const BuildOf& build_of = {});

// A device and a workload class as a profile's lookup takes them (include/varex/profile.hpp): the one
// mapping of varex-bench and the runtime library.
profile::DeviceKey profile_device(const DeviceInfo& device);
profile::Workload profile_workload(const datasets::WorkloadClass& workload_class);

// A C++ header that builds the same profile from literals: `<ns>::profile()`.
std::string profile_header(const nlohmann::json& profile, const std::string& ns);

// Kernel Tuner T4 results, one document per (device, operator, workload), with a file name for each;
// a metadata document (T4 metadata schema) goes with each.
struct T4Document {
  std::string name;
  nlohmann::json results;
  nlohmann::json metadata;
};
std::vector<T4Document> kt_t4(Store& store, const ExportFilter& filter);

}  // namespace varex::results
