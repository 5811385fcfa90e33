#pragma once
// Red Fox SORT (document 002, sec. 3.2.6): a relation's tuples in ascending order of the key, then of the
// values (v0, v1, v2: the whole tuple lexicographically), or by the key alone (query by=key: equal keys keep
// their input order, as CUB's pair sorts), stable, dense.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "operators/common/relations/relation_operator.hpp"
#include "operators/common/relations/relations.hpp"

namespace varex::operators {

// The relation's tuples sorted stably by their first `keys` words (all of them: the whole tuple; 1: the key
// alone, equal keys in input order), on the host.
std::vector<std::uint32_t> sort_reference(const datasets::Relation& relation, std::uint32_t keys = 4);

// The words a sort compares: `by` of the query, "tuple" (the default: all `width`) or "key" (1); anything
// else is a usage error.
std::uint32_t sort_key_words(const std::map<std::string, std::string>& query, std::uint32_t width);

class RaSortOperator final : public RelationOperator {
 public:
  RaSortOperator()
      : RelationOperator(
            "ra_sort",
            "Red Fox SORT: the tuples of a key-value relation by key, then by value (or by key alone with "
            "--query by=key), stable and dense (the source's merge sort: tiles sorted in local memory, then "
            "merge-path passes; or an LSD radix sort)",
            OutputKind::Rows) {}
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // The relation in one buffer, as the query keys `values` and `layout` say (relation_workload.hpp:
  // BoundRelation); the result is one buffer of the sorted tuples in the same layout, rows the input's.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;

 protected:
  std::vector<QueryKeyDecl> query_keys() const override;
  std::vector<QueryKeyDecl> buffer_keys() const override { return relation_buffer_keys(); }
  void read_query(const WorkloadOptions& options, datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
