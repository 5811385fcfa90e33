#include "operators/common/relations/relation_run.hpp"

#include <algorithm>

#include "base/errors.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DeviceResult;
using harness::KernelSequence;
using harness::RowsOutput;
using harness::tuple_parts;
using harness::TupleLayout;
using harness::VariantRun;
}  // namespace varex::operators

namespace varex::operators {

RelationRun::RelationRun(Engine& engine, TileSelectParts parts, const datasets::Relation& relation,
                         const std::vector<std::uint32_t>& reference)
    : VariantRun(engine, parts.family.kernels),
      rows_(relation.rows()),
      width_(relation.attributes()),
      output_(std::make_unique<RowsOutput>(engine, parts.out_width, rows_, reference, /*counted=*/true)),
      inputs_(std::make_unique<RelationInputs>(engine, relation, rows_)),
      tiles_(engine, rows_, parts.out_width, parts.skips),
      family_(parts.family),
      kernels_(parts.kernels(engine, tiles_)) {}

void RelationRun::poison() {
  output_->poison();
  tiles_.poison();
}

TileSelectVariant RelationRun::decode(const variants::Params& params) const {
  return TileSelectVariant(params, engine_.device(), family_);
}

void RelationRun::run(const TileSelectVariant& variant, KernelSequence& seq) {
  output_->set_layout(variant.layout);
  kernels_->run(variant,
                {inputs_->buffer(variant.layout), output_->tuple_buffer(), output_->count_buffer(), rows_,
                 width_, inputs_->capacity(), output_->capacity()},
                seq);
}

RelationBound::RelationBound(Engine& engine, TileSelectParts parts, const BoundRelation& relation,
                             datasets::WorkloadClass workload_class)
    : VariantRun(engine, parts.family.kernels),
      relation_(relation),
      class_(std::move(workload_class)),
      family_(parts.family),
      out_width_(parts.out_width),
      tiles_(engine, relation.rows, parts.out_width, parts.skips),
      kernels_(parts.kernels(engine, tiles_)),
      count_(engine.allocate(4)),
      host_count_(engine.allocate_host(4)) {}

TileSelectVariant RelationBound::decode(const variants::Params& params) const {
  return TileSelectVariant(params, engine_.device(), family_);
}

std::string RelationBound::refuses(const variants::Params& params) const {
  // The vendor variants that take no layout have aos, their canonical setting, and read AoS.
  const TileSelectVariant variant = decode(params);
  if (variant.layout == relation_.layout) return {};
  const auto name = [](TupleLayout layout) { return layout == TupleLayout::Soa ? "soa" : "aos"; };
  return std::string("the variant reads the relation as ") + name(variant.layout) +
         ", the call's relation is " + name(relation_.layout) + " (query key layout)";
}

void RelationBound::run(const TileSelectVariant& variant, KernelSequence& seq) {
  // The output holds every input tuple (no operator keeps more), out_width words each.
  if (!out_) out_ = engine_.allocate(std::max<std::uint64_t>(relation_.rows * out_width_, 1) * 4);
  kernels_->run(
      variant,
      {*relation_.buffer, *out_, *count_, relation_.rows, relation_.width, relation_.rows, relation_.rows},
      seq);
}

DeviceResult RelationBound::take_result() {
  if (!out_) throw std::logic_error(family_.kernels + std::string(": no result to take (execute first)"));
  engine_.download(*host_count_, *count_, 4)->elapsed_ms();
  const std::uint32_t rows = *host_count_->as<std::uint32_t>();
  if (rows > relation_.rows) {
    throw LaunchError(std::string(family_.kernels) + " counted " + std::to_string(rows) +
                      " result tuples of " + std::to_string(relation_.rows));
  }
  DeviceResult result{OutputKind::Rows, {}, rows};
  result.buffers.push_back(std::move(out_));
  result.parts =
      tuple_parts(rows, out_width_, relation_.layout == TupleLayout::Soa ? relation_.rows * 4 : 0, true);
  return result;
}

}  // namespace varex::operators
