#pragma once
// What the bound runs of ra_sort, ra_project and ra_reduce share (harness/operators/bound_run.hpp): an
// application's relation as the shared code reads it (relation_workload.hpp: BoundRelation, the query keys
// `values` and `layout`), the call's workload class, and a bound run that hands over one result buffer of
// its own.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "harness/operators/bound_run.hpp"
#include "harness/operators/variant_run.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DeviceResult;
using harness::ResultPart;
using harness::tuple_parts;
using harness::TupleLayout;
using harness::VariantRun;
}  // namespace varex::operators

namespace varex::operators {

// The workload class of a call on `relation` with the operator's query `query` (as its workload's spec
// holds it): the operator's class of the call as a workload of no generator (rows, values and the query),
// so that the keys are those of the classes it was tuned for; the call knows nothing of how its keys are
// distributed.
inline datasets::WorkloadClass relation_call_class(const Operator& op, const BoundRelation& relation,
                                                   nlohmann::json query) {
  datasets::WorkloadSpec spec;
  spec.op = op.name();
  spec.params = {{"rows", relation.rows}, {"values", relation.values()}};
  spec.query = std::move(query);
  datasets::WorkloadClass c = op.workload_class(spec);
  c.shape.erase("generator");
  return c;
}

// A bound run on an application's relation with one result buffer: the kernels read the caller's buffer
// within its rows, in its layout (the columns of soa back to back: capacity = rows); a variant of the other
// layout is refused (no kernel transposes). The result buffer is the bound run's, made anew by the first
// execute after the last was taken (output()); `kind` Rows: rows = the relation's, Scalar: 1.
template <class Variant>
class RelationCall : public VariantRun<Variant, BoundRun> {
 public:
  // `out_width`: words per result tuple (Rows; the tuples in the relation's order), or 0 for a Scalar (one
  // uint64).
  RelationCall(Engine& engine, const std::string& family, const BoundRelation& relation,
               datasets::WorkloadClass workload_class, OutputKind kind, std::uint32_t out_width)
      : VariantRun<Variant, BoundRun>(engine, family),
        relation_(relation),
        class_(std::move(workload_class)),
        kind_(kind),
        out_width_(out_width) {}

  datasets::WorkloadClass workload_class() const override { return class_; }

  std::string refuses(const variants::Params& params) const override {
    const TupleLayout layout = decode(params).layout;
    if (layout == relation_.layout) return {};
    const auto name = [](TupleLayout l) { return l == TupleLayout::Soa ? "soa" : "aos"; };
    return std::string("the variant reads the relation as ") + name(layout) + ", the call's relation is " +
           name(relation_.layout) + " (query key layout)";
  }

  std::map<std::string, std::string> fixed() const override {
    return {{"layout", layout_name(relation_.layout)}};
  }

  DeviceResult take_result() override {
    DeviceResult result{kind_, {}, kind_ == OutputKind::Scalar ? 1 : relation_.rows};
    result.buffers.push_back(std::move(out_));
    result.parts = kind_ == OutputKind::Scalar
                       ? std::vector<ResultPart>{{0, 0, 8, 0}}
                       : tuple_parts(relation_.rows, out_width_,
                                     relation_.layout == TupleLayout::Soa ? relation_.rows * 4 : 0, true);
    return result;
  }

 protected:
  Variant decode(const variants::Params& params) const override {
    return Variant(params, this->engine_.device());
  }

  // The result's buffer, of `bytes` (at least 4).
  DeviceBuffer& output(std::uint64_t bytes) {
    if (!out_) out_ = this->engine_.allocate(std::max<std::uint64_t>(bytes, 4));
    return *out_;
  }

  const DeviceBuffer& in() const { return *relation_.buffer; }

  const BoundRelation relation_;

 private:
  datasets::WorkloadClass class_;
  OutputKind kind_;
  std::uint32_t out_width_;
  std::unique_ptr<DeviceBuffer> out_;
};

}  // namespace varex::operators
