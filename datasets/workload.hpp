#pragma once
// A workload is the data an operator runs on: a generator with its parameters and seed (reproducible)
// or a user file, plus the operator's query. Its id is a stable hash of that description.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace varex::datasets {

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

}  // namespace varex::datasets
