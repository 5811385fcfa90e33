#pragma once
// A workload is the data an operator runs on: a generator with its parameters and seed (reproducible)
// or a user file, plus the operator's query. Its id is a stable hash of that description.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace varex::datasets {

// What in a workload changes which variant is fastest: its shape (categorical: where the data comes from
// and the query's form, e.g. a dataset or a pattern) and its scale (numbers: rows, and ratios or counts
// such as selectivity, distinct keys, skew). Two workloads that differ only in their seed, or in the path
// of a file with the same shape and scale, are one class. "best" and profiles are per class; a lookup
// falls back from the exact class to the nearest scale of the same shape.
// How a scale key's values compare, as the operator that declares the key says (harness::FlagDecl::scale):
// counts by their ratio, fractions (a selectivity, a skew) by their difference. The one distance between
// classes is include/varex/profile.hpp's workload_distance.
enum class ScaleKind { Count, Fraction };
std::string to_string(ScaleKind kind);
struct ScaleKey {
  std::string name;  // the workload parameter ("match_ratio")
  ScaleKind kind = ScaleKind::Count;
};

struct WorkloadClass {
  nlohmann::json shape = nlohmann::json::object();  // string values
  nlohmann::json scale = nlohmann::json::object();  // numbers; always holds "rows"
  nlohmann::json kinds =
      nlohmann::json::object();  // each scale key's kind ("count", "fraction"); not in id()

  // A scale key's value, with its kind.
  void set_scale(const std::string& key, const nlohmann::json& value, ScaleKind kind) {
    scale[key] = value;
    kinds[key] = to_string(kind);
  }
  std::string id() const;
  nlohmann::json to_json() const {
    nlohmann::json j = {{"shape", shape}, {"scale", scale}};
    if (!kinds.empty()) j["kinds"] = kinds;
    return j;
  }
  static WorkloadClass from_json(const nlohmann::json& j);
  std::string describe() const;  // "rows=1048576 selectivity=0.5 dataset=titles pattern=..."
};

struct WorkloadSpec {
  std::string op;
  std::string generator;                             // e.g. "uniform_int32", or "file" for user data
  nlohmann::json params = nlohmann::json::object();  // generator parameters; always holds "rows"
  nlohmann::json query = nlohmann::json::object();   // the operator's predicate or query

  std::uint64_t rows() const { return params.value("rows", std::uint64_t{0}); }
  std::string id() const;
  std::string describe() const;
  nlohmann::json to_json() const;
  static WorkloadSpec from_json(const nlohmann::json& j);
};

// The class of a workload by the conventions every generator follows: the scale takes rows (a count) and the
// numeric parameters among the operator's `scale_keys` (its declaration's, Operator::workload_class); the
// shape takes the generator ("file" for user files), the other parameters except seed, path, fingerprint,
// format and generator version, and the query. Operators whose query is derived from a scale parameter refine
// this.
WorkloadClass default_class(const WorkloadSpec& spec, const std::vector<ScaleKey>& scale_keys = {});

// The workload with each of the generated counts `keys` divided by `divisor` (at least one row), and its
// distinct keys no more than the first relation's rows: a smaller instance of the same class for a tune's
// search at low fidelity (Operator::sample). nullopt for data read from files (a path among the parameters)
// and where no key is there to divide.
std::optional<WorkloadSpec> divide_counts(const WorkloadSpec& spec, const std::vector<std::string>& keys,
                                          std::uint64_t divisor);

}  // namespace varex::datasets
