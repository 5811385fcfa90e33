#pragma once
// What every Red Fox run of the SELECT family shares (ra_select, ra_unique, ra_reduce_by_key): the family's
// tiles and their gather (tile_select.hpp), the variant decoded once (TileSelectVariant), and two runs of an
// operator's kernels (TileSelectKernels, written once over RelationBuffers): RelationRun, varex's own
// workload (the relation on the device in both layouts, the counted rows output with its host reference, the
// collection), and RelationBound, an application's relation (harness/operators/bound_run.hpp). An operator
// adds its own kernels (run_own), its vendor call (run_vendor) and, for varex's runs, its bytes model.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/operators/variant_run.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/relation_workload.hpp"
#include "operators/common/relations/tile_select.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DeviceResult;
using harness::KernelSequence;
using harness::RowsOutput;
using harness::VariantRun;
using harness::VendorScratch;
}  // namespace varex::operators

namespace varex::operators {

// The buffers of one execution, whoever owns them.
struct RelationBuffers {
  const DeviceBuffer& in;     // the relation, in the variant's layout
  DeviceBuffer& out;          // the output's tuples, in the variant's layout
  DeviceBuffer& count;        // the output's tuples counted by the kernels (one uint32)
  std::uint64_t rows;         // input tuples
  std::uint32_t width;        // words per input tuple
  std::uint64_t in_capacity;  // tuples per attribute array of the input under SoA (at least rows)
  std::uint64_t out_capacity;

  // The kernels' common arguments: rows, and the input's and the output's capacity in tuples.
  std::uint32_t n() const { return static_cast<std::uint32_t>(rows); }
  std::uint32_t in_cap() const { return static_cast<std::uint32_t>(in_capacity); }
  std::uint32_t out_cap() const { return static_cast<std::uint32_t>(out_capacity); }
};

// An operator's kernels and vendor call, for both runs: it keeps the scratch of its own (allocated in its
// constructor for the run's rows) and the vendor library's; the run owns the relation, the output and the
// tiles.
class TileSelectKernels {
 public:
  TileSelectKernels(Engine& engine, TileSelect& tiles) : engine_(engine), tiles_(tiles) {}
  virtual ~TileSelectKernels() = default;

  void run(const TileSelectVariant& variant, const RelationBuffers& b, KernelSequence& seq) {
    if (variant.vendor) {
      run_vendor(variant, b, seq);
    } else {
      run_own(variant, b, seq);
    }
  }

 protected:
  // The operator's kernels for `variant` (never a vendor one).
  virtual void run_own(const TileSelectVariant& variant, const RelationBuffers& b, KernelSequence& seq) = 0;
  // The vendor library's call for `variant`'s layout.
  virtual void run_vendor(const TileSelectVariant& variant, const RelationBuffers& b,
                          KernelSequence& seq) = 0;

  // The partitions, `sizes[t]` items each, dense into the output and their number into its counter.
  void gather(KernelSequence& seq, const TileSelectVariant& variant, const TileSelect::Tiles& tiles,
              const DeviceBuffer& sizes, const RelationBuffers& b) {
    tiles_.gather(seq, tiles, variant.launch, sizes, b.out, b.count, b.out_capacity);
  }

  Engine& engine_;
  TileSelect& tiles_;
  VendorScratch vendor_scratch_{engine_};
};

// What an operator of the family gives both its runs.
struct TileSelectParts {
  TileSelectFamily family;      // the kernel source and the operator's algorithm switch
  std::uint32_t out_width = 0;  // words per output tuple (and per tile item)
  bool skips = false;           // a tile may start later than its first item (TileSelect::skip())
  std::function<std::unique_ptr<TileSelectKernels>(Engine&, TileSelect&)> kernels;
};

class RelationRun : public VariantRun<TileSelectVariant> {
 public:
  // `reference`: the expected output, dense AoS, of at most the relation's rows.
  RelationRun(Engine& engine, TileSelectParts parts, const datasets::Relation& relation,
              const std::vector<std::uint32_t>& reference);

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
  std::uint64_t rows_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<RowsOutput> output_;
  std::unique_ptr<RelationInputs> inputs_;
  TileSelect tiles_;

 private:
  TileSelectVariant decode(const variants::Params& params) const final;
  void run(const TileSelectVariant& variant, KernelSequence& seq) final;

  TileSelectFamily family_;
  std::unique_ptr<TileSelectKernels> kernels_;
};

// On an application's relation (bound_relation): the kernels read the caller's buffer within its rows, in
// its layout; a variant of the other layout is refused (there is no transposing kernel). The result, made
// anew by each execute after the last was taken, is one buffer: the tuples in the relation's layout (AoS:
// dense tuples of out_width words; SoA: one array per output attribute, each of the input's rows words, back
// to back); rows is their number as the kernels counted it, read back. The empty relation's buffer is never
// passed to a kernel (there is no tile), so it may hold nothing.
class RelationBound final : public VariantRun<TileSelectVariant, BoundRun> {
 public:
  // `workload_class`: what the call knows (RelationBound does not read it).
  RelationBound(Engine& engine, TileSelectParts parts, const BoundRelation& relation,
                datasets::WorkloadClass workload_class);

  datasets::WorkloadClass workload_class() const override { return class_; }
  std::string refuses(const variants::Params& params) const override;
  std::map<std::string, std::string> fixed() const override {
    return {{"layout", layout_name(relation_.layout)}};
  }
  DeviceResult take_result() override;

 private:
  TileSelectVariant decode(const variants::Params& params) const override;
  void run(const TileSelectVariant& variant, KernelSequence& seq) override;

  BoundRelation relation_;
  datasets::WorkloadClass class_;
  TileSelectFamily family_;
  std::uint32_t out_width_;
  TileSelect tiles_;
  std::unique_ptr<TileSelectKernels> kernels_;
  std::unique_ptr<DeviceBuffer> out_, count_;
  std::unique_ptr<HostBuffer> host_count_;
};

}  // namespace varex::operators
