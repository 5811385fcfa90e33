#pragma once
// What every Red Fox run of the SELECT family shares (ra_select, ra_unique, ra_reduce_by_key): the relation
// on the device in both layouts, the counted rows output with its host reference, the family's tiles and
// their gather (tile_select.hpp), the variant decoded once (TileSelectVariant) and the collection. An
// operator adds its own kernels (run_own), its vendor call (run_vendor) and its bytes model.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/operators/variant_run.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/relation_workload.hpp"
#include "operators/common/relations/tile_select.hpp"

namespace varex::operators {

class RelationRun : public VariantRun<TileSelectVariant> {
 public:
  // `family`: the kernel source and the operator's algorithm switch; `out_width`: words per output tuple
  // (and per tile item); `reference`: the expected output, dense AoS, of at most the relation's rows;
  // `skips`: a tile may start later than its first item (TileSelect::skip()).
  RelationRun(Engine& engine, const TileSelectFamily& family, const datasets::Relation& relation,
              std::uint32_t out_width, const std::vector<std::uint32_t>& reference, bool skips = false);

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }
  void poison() override;
  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // At least: every key read, the kept tuples' other attributes read, the kept tuples and their count
  // written (an operator whose output is whole tuples of the input; REDUCE BY KEY's is not).
  std::uint64_t bytes_moved() const override {
    const std::uint64_t kept = (output_->bytes_written() - 4) / 4 / width_;
    return rows_ * 4 + kept * (width_ - 1) * 4 + output_->bytes_written();
  }
  // The relation, the output twice (written and read back) and the intermediate partitions.
  std::uint64_t working_set_bytes() const override {
    return rows_ * width_ * 4 + 2 * output_->bytes_written() + tiles_.mid_bytes();
  }

 protected:
  // The operator's kernels for `variant` (never a vendor one).
  virtual void run_own(const TileSelectVariant& variant, KernelSequence& seq) = 0;
  // The vendor library's call for `variant`'s layout.
  virtual void run_vendor(const TileSelectVariant& variant, KernelSequence& seq) = 0;

  // The partitions, `sizes[t]` items each, dense into the output and their number into its counter.
  void gather(KernelSequence& seq, const TileSelectVariant& variant, const TileSelect::Tiles& tiles,
              const DeviceBuffer& sizes);
  // The kernels' common arguments: rows, and the input's and the output's capacity in tuples.
  std::uint32_t n() const { return static_cast<std::uint32_t>(rows_); }
  std::uint32_t in_capacity() const { return static_cast<std::uint32_t>(inputs_->capacity()); }
  std::uint32_t out_capacity() const { return static_cast<std::uint32_t>(output_->capacity()); }

  std::uint64_t rows_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<RowsOutput> output_;
  std::unique_ptr<RelationInputs> inputs_;
  TileSelect tiles_;
  VendorScratch vendor_scratch_{engine_};

 private:
  TileSelectVariant decode(const variants::Params& params) const final;
  void run(const TileSelectVariant& variant, KernelSequence& seq) final;

  TileSelectFamily family_;
};

}  // namespace varex::operators
