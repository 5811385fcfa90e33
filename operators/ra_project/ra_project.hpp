#pragma once
// Red Fox PROJECT (document 002, sec. 3.2.1): the chosen attributes of every tuple of a relation.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "operators/common/relations/relation_operator.hpp"
#include "operators/common/relations/relations.hpp"

namespace varex::operators {

// The attributes to keep, as indices (0: key, 1..3: v0..v2) in output order, from `keep=key,v1,...`
// (default: key). UsageError for an unknown or repeated name, or one the relation (of `values` values)
// lacks.
std::vector<std::uint32_t> parse_projection(const std::map<std::string, std::string>& query,
                                            std::uint32_t values);

// Host reference: the kept attributes of every tuple, dense, as packed tuples.
std::vector<std::uint32_t> project_reference(const datasets::Relation& relation,
                                             const std::vector<std::uint32_t>& keep);

class RaProjectOperator final : public RelationOperator {
 public:
  RaProjectOperator()
      : RelationOperator(
            "ra_project",
            "Red Fox PROJECT: the chosen attributes (key, v0..v2) of every tuple of a key-value relation",
            OutputKind::Rows) {}
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // The relation in one buffer, as the query keys `values` and `layout` say (relation_workload.hpp:
  // BoundRelation), and `keep`; the result is one buffer of the kept attributes in the same layout, rows the
  // input's.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;

 protected:
  std::vector<QueryKeyDecl> query_keys() const override;
  std::vector<QueryKeyDecl> buffer_keys() const override { return relation_buffer_keys(); }
  void read_query(const WorkloadOptions& options, datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
