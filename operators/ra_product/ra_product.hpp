#pragma once
// Red Fox PRODUCT (document 002, sec. 3.2.3): every pair of a tuple of the left relation and one of the
// right, left-major; output tuple (left key, right key, left values, right values).
#include <cstdint>
#include <vector>

#include "operators/common/relations/relations.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// Host reference: the output tuples, packed, left-major.
std::vector<std::uint32_t> product_reference(const datasets::Relation& left, const datasets::Relation& right);

class RaProductOperator final : public Operator {
 public:
  std::string name() const override { return "ra_product"; }
  std::string description() const override {
    return "Red Fox PRODUCT: the cross product of two key-value relations, left-major, as (left key, right "
           "key, "
           "left values, right values)";
  }
  std::string kernel_family() const override { return "ra_product"; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  // 2^12 left tuples (x 2^13 right ones by default, the source's largest size class).
  std::uint64_t default_rows(std::uint64_t) const override { return 1ULL << 12; }
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // On an application's relations: inputs left and right of 1 + values uint32 words per tuple in the
  // layout the query keys give (`values` 1 to 3, default 1; `layout` aos, the default, or soa: one array of
  // rows words per attribute, back to back), in any order. Variants of the other layout are refused, and
  // products of more than 2^30 tuples. The result: one buffer of the n x m output tuples, left-major, in the
  // same layout (soa: at a stride of n x m); `rows` = n x m.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;
};

}  // namespace varex::operators
