#include "operators/common/relations/relation_run.hpp"

namespace varex::operators {

RelationRun::RelationRun(Engine& engine, const TileSelectFamily& family, const datasets::Relation& relation,
                         std::uint32_t out_width, const std::vector<std::uint32_t>& reference, bool skips)
    : VariantRun(engine, family.kernels),
      rows_(relation.rows()),
      width_(relation.attributes()),
      output_(std::make_unique<RowsOutput>(engine, out_width, rows_, reference, /*counted=*/true)),
      inputs_(std::make_unique<RelationInputs>(engine, relation, rows_)),
      tiles_(engine, rows_, out_width, skips),
      family_(family) {}

void RelationRun::poison() {
  output_->poison();
  tiles_.poison();
}

TileSelectVariant RelationRun::decode(const variants::Params& params) const {
  return TileSelectVariant(params, engine_.device(), family_);
}

void RelationRun::run(const TileSelectVariant& variant, KernelSequence& seq) {
  output_->set_layout(variant.layout);
  if (variant.vendor) {
    run_vendor(variant, seq);
  } else {
    run_own(variant, seq);
  }
}

void RelationRun::gather(KernelSequence& seq, const TileSelectVariant& variant,
                         const TileSelect::Tiles& tiles, const DeviceBuffer& sizes) {
  tiles_.gather(seq, tiles, variant.launch, sizes, output_->tuple_buffer(), output_->count_buffer(),
                output_->capacity());
}

}  // namespace varex::operators
