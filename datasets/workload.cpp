#include "datasets/workload.hpp"

#include "harness/hash.hpp"

namespace varex::datasets {

nlohmann::json WorkloadSpec::to_json() const {
  return {{"op", op}, {"generator", generator}, {"params", params}, {"query", query}};
}

WorkloadSpec WorkloadSpec::from_json(const nlohmann::json& j) {
  WorkloadSpec s;
  s.op = j.at("op").get<std::string>();
  s.generator = j.at("generator").get<std::string>();
  s.params = j.value("params", nlohmann::json::object());
  s.query = j.value("query", nlohmann::json::object());
  return s;
}

// nlohmann::json objects are ordered by key, so dump() is canonical.
std::string WorkloadSpec::id() const {
  return hex64(fnv1a(to_json().dump()));
}

std::string WorkloadSpec::describe() const {
  std::string out = op + " on " + generator + " " + params.dump();
  if (!query.empty()) out += " query " + query.dump();
  return out;
}

}  // namespace varex::datasets
