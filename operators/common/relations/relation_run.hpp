#pragma once
// What every Red Fox run of one relation into dense rows shares (ra_select, ra_unique, ra_reduce_by_key): the
// relation on the device in both layouts, the counted rows output with its host reference, the compile of the
// family's kernels (none for impl=cub) and the collection. A run adds its kernels (execute), its scratch
// (poison_scratch) and its bytes model.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/operators/vendor_variant.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {

class RelationRun : public PreparedRun {
 public:
  // `family`: the kernel source; `out_width`: words per output tuple; `reference`: the expected output,
  // dense AoS, of at most the relation's rows.
  RelationRun(Engine& engine, std::string family, const datasets::Relation& relation, std::uint32_t out_width,
              const std::vector<std::uint32_t>& reference);

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }
  CompileInfo compile(const variants::Params& params) override;
  void poison() override;
  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }

 protected:
  // The variant's defines (the operator's).
  virtual Defines defines(const variants::Params& params) const = 0;
  // Fills the run's own scratch buffers with the poison pattern.
  virtual void poison_scratch() {}
  // The variant's program (compiled once per variant by the engine's cache). Not for impl=cub.
  const Program& program(const variants::Params& params);

  Engine& engine_;
  std::string family_;
  std::uint64_t rows_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<RowsOutput> output_;
  std::unique_ptr<RelationInputs> inputs_;
  VendorScratch vendor_scratch_{engine_};
};

}  // namespace varex::operators
