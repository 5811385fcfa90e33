// aggregate: COUNT, SUM, AVG, MIN or MAX (query fn=), SUM directly or by bit counting.
#include "base/errors.hpp"
#include "operators/aggregates/aggregates.hpp"

namespace varex::operators {

std::vector<QueryKeyDecl> AggregateOperator::own_keys() const {
  return {
      {"fn", "count, sum, avg, min or max (default sum); avg's checksum is the sum, its value the average"}};
}

void AggregateOperator::parse_own(const std::map<std::string, std::string>& query,
                                  nlohmann::json& out) const {
  for (const auto& [key, value] : query) {
    if (key != "fn") throw UsageError("aggregate: unknown query key '" + key + "' (keys: fn, attr, where)");
  }
  out["fn"] = query.count("fn") ? query.at("fn") : "sum";
  aggregate_fn(out);  // checks it
}

std::vector<variants::Tunable> AggregateOperator::own_tunables(const DeviceInfo&) const {
  using variants::Value;
  return {
      {"method",
       variants::TunableKind::Launch,
       {Value{"direct"}, Value{"bits"}},
       Value{"direct"},
       "direct: count, 64-bit sum, min and max in one pass; bits: the paper's way, SUM = Σ 2^i count(bit i "
       "set) (routine 4.6) and MIN/MAX built bit by bit (routine 4.5); COUNT is the same either way"},
      {"sum_bits",
       variants::TunableKind::Launch,
       {1, 8, 32},
       1,
       "bits one counting pass of method=bits takes (1: one pass per bit, as the paper's occlusion "
       "queries)"}};
}

std::vector<variants::Constraint> AggregateOperator::own_constraints() const {
  return {{"sum_bits applies to method=bits only", [](const variants::Params& p) {
             return variants::get_string(p, "method") == "bits" || variants::get_int(p, "sum_bits") == 1;
           }}};
}

Defines AggregateOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return AttributeAggregateVariant(params, device, /*kth_largest=*/false).defines;
}

}  // namespace varex::operators
