#pragma once
// Red Fox REDUCE (document 002, sec. 3.2.8): the sum of one attribute of a relation, into 64 bits.
#include <cstdint>
#include <map>
#include <string>

#include "operators/common/relations/relation_operator.hpp"
#include "operators/common/relations/relations.hpp"

namespace varex::operators {

// The attribute to sum (0: key, 1..3: v0..v2) from `attr=` (default v0). UsageError for an unknown name or
// one the relation (of `values` values) lacks.
std::uint32_t parse_reduce_attribute(const std::map<std::string, std::string>& query, std::uint32_t values);
// Host reference: the attribute's sum modulo 2^64.
std::uint64_t reduce_reference(const datasets::Relation& relation, std::uint32_t attribute);

class RaReduceOperator final : public RelationOperator {
 public:
  RaReduceOperator()
      : RelationOperator(
            "ra_reduce",
            "Red Fox REDUCE: the sum of one attribute of a key-value relation into 64 bits (work-group tree "
            "or "
            "sub-group reduction, finished on the host or the device)",
            OutputKind::Scalar) {}
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // The relation in one buffer, as the query keys `values` and `layout` say (relation_workload.hpp:
  // BoundRelation), and `attr`; the result is one buffer whose first 64-bit word is the sum, rows 1.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;

 protected:
  std::vector<QueryKeyDecl> query_keys() const override;
  std::vector<QueryKeyDecl> buffer_keys() const override { return relation_buffer_keys(); }
  void read_query(const WorkloadOptions& options, datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
