// cnf_filter: the query is `where=`, a conjunction of clauses (operators/common/attributes/cnf.hpp).
#include "base/errors.hpp"
#include "operators/filters/filters.hpp"

namespace varex::operators {

namespace {

// Without a query: a0 >= -429496730 keeps 60% of uniform int32 values (the selectivity of the paper's sec.
// 5.5 and 5.7).
constexpr const char* kDefaultWhere = "a0 >= -429496730";

}  // namespace

nlohmann::json CnfFilterOperator::parse_query(const std::map<std::string, std::string>& query,
                                              std::uint32_t attributes) const {
  for (const auto& [key, value] : query) {
    if (key != "where") throw UsageError("cnf_filter: unknown query key '" + key + "' (keys: where)");
  }
  std::map<std::string, std::string> q = query;
  q.emplace("where", kDefaultWhere);
  return {{"where", parse_where(q, attributes).to_string()}};
}

std::vector<QueryKeyDecl> CnfFilterOperator::query_keys() const {
  return {{"where",
           "the filter: clauses joined by and, each a predicate or a parenthesised disjunction of predicates "
           "a<i> op <int32> or a<i> op a<j> (op: = != < <= > >=; not folds into op), e.g. "
           "'(a0 < 10 or a1 >= a2) and a3 != 7' (default: a0 >= -429496730, 60% of uniform values)"}};
}

std::vector<std::string> CnfFilterOperator::clauses(const nlohmann::json& query,
                                                    const AttributeFilterVariant&) const {
  std::vector<std::string> out;
  for (const Clause& clause : where_of(query).all) out.push_back(kernel_expression(clause));
  return out;
}

AttributeFilter::RowReference CnfFilterOperator::reference(const nlohmann::json& query,
                                                           const datasets::AttributeTable& table) const {
  return [cnf = where_of(query), &table](std::uint64_t r, bool&) { return keeps(cnf, table, r); };
}

BlockFilter CnfFilterOperator::baseline(const nlohmann::json& query,
                                        const datasets::AttributeTable& table) const {
  return cnf_block_filter(where_of(query), table);
}

std::uint32_t CnfFilterOperator::attributes_read(const nlohmann::json& query) const {
  return where_of(query).attributes_read();
}

std::vector<variants::Tunable> CnfFilterOperator::own_tunables() const {
  using variants::Value;
  return {
      {"strategy",
       variants::TunableKind::Launch,
       {Value{"fused"}, Value{"passes"}},
       Value{"fused"},
       "fused: one kernel evaluates the whole conjunction; passes: routine 4.3, one kernel per clause over "
       "a selection mask, a later pass evaluating only the rows the mask still holds"},
      {"order",
       variants::TunableKind::Launch,
       {Value{"written"}, Value{"selective_first"}},
       Value{"written"},
       "the clauses' order in passes: as written, or the clause keeping the fewest rows (of the first "
       "65536) first"},
      {"output",
       variants::TunableKind::Launch,
       {Value{"bitmap"}, Value{"count"}},
       Value{"bitmap"},
       "bitmap: one bit per row; count: only the rows kept and the sum of their indices (the paper's "
       "occlusion-query count)"}};
}

std::vector<variants::Constraint> CnfFilterOperator::own_constraints() const {
  return {{"order applies to strategy=passes only", [](const variants::Params& p) {
             return variants::get_string(p, "strategy") == "passes" ||
                    variants::get_string(p, "order") == "written";
           }}};
}

}  // namespace varex::operators
