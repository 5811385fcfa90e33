#pragma once
// Red Fox SELECT (document 002, sec. 3.2.2): the whole tuple of a relation where a range predicate on the
// key holds, output dense and in input order.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "operators/common/ranges/range_query.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/common/relations/tile_select_operator.hpp"

namespace varex::operators {

// The selection operator's range predicate (operators/common/ranges/range_query.hpp) on unsigned 32-bit keys.
using KeyRangeQuery = RangeQuery<std::uint32_t>;
using KeyRange = InclusiveRange<std::uint32_t>;

// Host reference: the tuples whose key matches, packed, in input order.
std::vector<std::uint32_t> select_reference(const datasets::Relation& relation, const KeyRangeQuery& query);

class RaSelectOperator final : public TileSelectOperator {
 public:
  RaSelectOperator();
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;

 protected:
  std::vector<FlagDecl> own_flags() const override;
  std::vector<QueryKeyDecl> query_keys() const override;
  void read_query(const WorkloadOptions& options, datasets::WorkloadSpec& spec) const override;
  // lo, hi, lo_inclusive, hi_inclusive, negate as text; none: every tuple.
  void read_bound_query(const std::map<std::string, std::string>& query,
                        datasets::WorkloadSpec& spec) const override;
  TileSelectParts parts(const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
