#include "operators/common/relations/relation_operator.hpp"

#include "base/errors.hpp"

namespace varex::operators {

WorkloadDecl RelationOperator::declaration() const {
  WorkloadDecl d;
  d.inputs = {relation_input()};
  d.flags = relation_flags(keys_);
  for (FlagDecl& f : own_flags()) d.flags.push_back(std::move(f));
  d.query = query_keys();
  for (QueryKeyDecl& k : buffer_keys()) d.query.push_back(std::move(k));
  d.output = output_;
  return d;
}

datasets::WorkloadSpec RelationOperator::workload(const WorkloadOptions& options) const {
  // A query is refused first, before the relation is read or generated.
  for (const QueryKeyDecl& k : buffer_keys()) {
    if (options.query.count(k.key)) {
      throw UsageError(name_ + ": query key '" + k.key +
                       "' describes an application's buffer (runtime calls); here the relation is --input or "
                       "generated (--values) and its layout a tunable");
    }
  }
  if (query_keys().empty() && !options.query.empty()) {
    throw UsageError(name_ + ": unknown query key '" + options.query.begin()->first +
                     "' (it takes no query)");
  }
  datasets::WorkloadSpec spec = relation_workload(name_, options, keys_);
  read_query(options, spec);
  return spec;
}

void RelationOperator::read_query(const WorkloadOptions&, datasets::WorkloadSpec&) const {}

}  // namespace varex::operators
