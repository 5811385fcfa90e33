#pragma once
// Red Fox INNER JOIN (document 002, sec. 3.2.4, alg. 6 and 7): the equi-join of two relations sorted by
// key (1 to 3 values per tuple, the same number on both sides). Every pair of a left and a right tuple with
// equal keys, the full product of each key's tuples on both sides; output tuple (key, left values, right
// values), 1 + 2 x values words. Its order is the variant's: the output is compared as a multiset
// (RowOrder::any, the digest's third term the first right value). Its size is counted on the device (a
// counted output); varex refuses joins of more than 2^30 tuples.
//
// Variants (kernels/ra_join.cl): `algorithm` partition (the source's: even left partitions, their right
// ranges by binary search, a work-group per partition pair in local memory, count, scan, write at the
// offsets), merge_path (merge-path searches over the two key arrays for each left key's matches, then over
// the scanned counts and the output positions: balanced whatever the skew), and on CUDA devices impl=cub
// (vectorised lower and upper bounds with Thrust, CUB's scan, an expansion of the pairs).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "operators/common/relations/relations.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// The join's number of tuples: the sum over the keys of left tuples x right tuples (inputs sorted by key).
std::uint64_t join_size(const datasets::Relation& left, const datasets::Relation& right);
// Host reference: the output tuples, packed (AoS), in key order, each key's left tuples in input order and
// for each of them its right ones in input order.
std::vector<std::uint32_t> join_reference(const datasets::Relation& left, const datasets::Relation& right);

class RaJoinOperator final : public Operator {
 public:
  std::string name() const override { return "ra_join"; }
  std::string description() const override {
    return "Red Fox INNER JOIN of two relations sorted by key: (key, left values, right values) for every "
           "pair with equal keys, in any order (the source's partitions, a merge path, or Thrust)";
  }
  std::string kernel_family() const override { return "ra_join"; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  // Refuses a query, and a join of more than kMaxPairOutputTuples tuples (counted exactly unless rows x rows2
  // is below the limit already).
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  // Two relations of 4 words per tuple with a value and the output: a quarter of the single relations'.
  std::uint64_t default_rows(std::uint64_t cache_rows) const override { return cache_rows / 4; }
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // On an application's relations: inputs left and right of 1 + values uint32 words per tuple in the
  // layout the query keys give (`values` 1 to 3, default 1; `layout` aos, the default, or soa: one array of
  // rows words per attribute, back to back), each SORTED by key (unsigned; the caller sorts them, nothing
  // checks). Variants of the other layout, and the vendor call on soa, are refused. The join's size is
  // counted on the device and read back before the pairs are written; the result: one buffer of exactly
  // that many output tuples (key, left values, right values) in the same layout (soa: at a stride of the
  // result's rows), in the variant's order; `rows` the pairs.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;
};

}  // namespace varex::operators
