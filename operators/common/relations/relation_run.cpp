#include "operators/common/relations/relation_run.hpp"

#include "harness/kernel_source.hpp"

namespace varex::operators {

RelationRun::RelationRun(Engine& engine, std::string family, const datasets::Relation& relation,
                         std::uint32_t out_width, const std::vector<std::uint32_t>& reference)
    : engine_(engine), family_(std::move(family)), rows_(relation.rows()), width_(relation.attributes()) {
  output_ = std::make_unique<RowsOutput>(engine, out_width, rows_, reference, /*counted=*/true);
  inputs_ = std::make_unique<RelationInputs>(engine, relation, rows_);
}

CompileInfo RelationRun::compile(const variants::Params& params) {
  CompileInfo info;
  if (is_vendor(params)) return info;  // built with varex
  engine_.compile(kernel_source(engine_.device().backend, family_), defines(params), &info);
  return info;
}

void RelationRun::poison() {
  output_->poison();
  poison_scratch();
}

const Program& RelationRun::program(const variants::Params& params) {
  return engine_.compile(kernel_source(engine_.device().backend, family_), defines(params));
}

}  // namespace varex::operators
