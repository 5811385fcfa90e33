#include "operators/ra_reduce_by_key/ra_reduce_by_key.hpp"

#include <algorithm>
#include <memory>

#include "base/errors.hpp"
#include "harness/backends/vendor_library.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/vendor_variant.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {

namespace {

// The largest tile (local x ept) the space allows: the partition buffer is rounded up to it.
constexpr std::uint64_t kMaxTile = 2048;
constexpr std::uint64_t kMinLocal = 32;
constexpr std::uint32_t kPair = 2;  // output attributes: key, sum

bool segscan_of(const variants::Params& params) {
  return variants::get_string(params, "algorithm") == "segmented_scan";
}

class ReduceByKeyRun final : public PreparedRun {
 public:
  ReduceByKeyRun(Engine& engine, const datasets::WorkloadSpec& spec) : engine_(engine) {
    const datasets::Relation relation = materialise_relation(spec);
    rows_ = relation.rows();
    width_ = relation.attributes();
    output_ = std::make_unique<RowsOutput>(engine, kPair, rows_, reduce_by_key_reference(relation),
                                           /*counted=*/true);
    inputs_ = std::make_unique<RelationInputs>(engine, relation, rows_);
    mid_capacity_ = round_up(std::max<std::uint64_t>(rows_, 1), kMaxTile);
    mid_ = engine.allocate(mid_capacity_ * kPair * 4);
    const std::uint64_t max_tiles = (rows_ + kMinLocal - 1) / kMinLocal + 1;
    counts_ = engine.allocate(max_tiles * 4);
    tails_ = engine.allocate(max_tiles * 4);
    sizes_ = engine.allocate(max_tiles * 4);
    offsets_ = engine.allocate(max_tiles * 4);
    blocks_ = engine.allocate((max_tiles / kMinLocal + 2) * 4);
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  CompileInfo compile(const variants::Params& params) override {
    CompileInfo info;
    if (is_vendor(params)) return info;  // built with varex
    engine_.compile(kernel_source(engine_.device().backend, "ra_reduce_by_key"),
                    RaReduceByKeyOperator().defines(params, engine_.device()), &info);
    return info;
  }

  void poison() override {
    output_->poison();
    engine_.fill(*mid_, kPoisonWord, 0, mid_->bytes())->elapsed_ms();
  }

  ExecutionTimes execute(const variants::Params& params) override {
    const TupleLayout layout = layout_of(params);
    output_->set_layout(layout);
    if (is_vendor(params)) return execute_cub(layout);
    const Program& program = engine_.compile(kernel_source(engine_.device().backend, "ra_reduce_by_key"),
                                             RaReduceByKeyOperator().defines(params, engine_.device()));
    KernelSequence seq(engine_, program);
    const LaunchPlan plan(params, engine_.device());
    const std::uint64_t local = variants::get_int(params, "local");
    const std::uint64_t tile = local * variants::get_int(params, "ept");
    const auto tiles = static_cast<std::uint32_t>((rows_ + tile - 1) / tile);
    const auto n = static_cast<std::uint32_t>(rows_);
    const auto in_capacity = static_cast<std::uint32_t>(inputs_->capacity());
    const auto out_capacity = static_cast<std::uint32_t>(output_->capacity());
    const LaunchShape over_tiles =
        plan.rows(std::uint64_t{tiles} * local);  // a work-group per tile, or the grid
    const DeviceBuffer& in = inputs_->buffer(layout);
    if (segscan_of(params)) {
      // counts_: run ends per tile, then their offsets; tails_: tile aggregates, then carries; sizes_: flags.
      seq.run("reduce", "ra_rbk_reduce", over_tiles,
              {KernelArg::of(in), KernelArg::of(*sizes_), KernelArg::of(*tails_), KernelArg::of(*counts_),
               KernelArg::of(n), KernelArg::of(width_), KernelArg::of(in_capacity), KernelArg::of(tiles)});
      seq.run("carries", "ra_rbk_carries", LaunchShape{local, local},
              {KernelArg::of(*sizes_), KernelArg::of(*tails_), KernelArg::of(*counts_),
               KernelArg::of(output_->count_buffer()), KernelArg::of(tiles)});
      seq.run("scatter", "ra_rbk_scatter", over_tiles,
              {KernelArg::of(in), KernelArg::of(output_->tuple_buffer()), KernelArg::of(*tails_),
               KernelArg::of(*counts_), KernelArg::of(n), KernelArg::of(width_), KernelArg::of(in_capacity),
               KernelArg::of(out_capacity), KernelArg::of(tiles)});
      return seq.times();
    }
    const auto mid_capacity = static_cast<std::uint32_t>(mid_capacity_);
    const auto nblocks = static_cast<std::uint32_t>((tiles + local - 1) / local);
    seq.run("partition", "ra_rbk_partition", over_tiles,
            {KernelArg::of(in), KernelArg::of(*mid_), KernelArg::of(*counts_), KernelArg::of(*tails_),
             KernelArg::of(n), KernelArg::of(width_), KernelArg::of(in_capacity), KernelArg::of(mid_capacity),
             KernelArg::of(tiles)});
    seq.run("edges", "ra_rbk_edges", LaunchShape{round_up(tiles, local), local},
            {KernelArg::of(in), KernelArg::of(*mid_), KernelArg::of(*counts_), KernelArg::of(*tails_),
             KernelArg::of(*sizes_), KernelArg::of(width_), KernelArg::of(in_capacity),
             KernelArg::of(mid_capacity), KernelArg::of(tiles)});
    seq.run(
        "scan", "ra_rbk_scan", plan.rows(std::uint64_t{nblocks} * local),
        {KernelArg::of(*sizes_), KernelArg::of(*offsets_), KernelArg::of(*blocks_), KernelArg::of(tiles)});
    seq.run("combine", "ra_rbk_combine", LaunchShape{local, local},
            {KernelArg::of(*blocks_), KernelArg::of(output_->count_buffer()), KernelArg::of(nblocks)});
    seq.run("gather", "ra_rbk_gather", over_tiles,
            {KernelArg::of(*mid_), KernelArg::of(output_->tuple_buffer()), KernelArg::of(*sizes_),
             KernelArg::of(*offsets_), KernelArg::of(*blocks_), KernelArg::of(tiles),
             KernelArg::of(mid_capacity), KernelArg::of(out_capacity)});
    return seq.times();
  }

  // CUB's DeviceReduce::ReduceByKey over strided views of the keys and v0, into the (key, sum) pairs in
  // either layout.
  ExecutionTimes execute_cub(TupleLayout layout) {
    const varex_vendor_table& cub = *vendor_library();
    const bool soa = layout == TupleLayout::Soa;
    const auto* in = static_cast<const unsigned*>(engine_.native_address(inputs_->buffer(layout)));
    const std::uint64_t in_stride = soa ? 1 : width_;
    const unsigned* keys = in;
    const unsigned* values = in + (soa ? inputs_->capacity() : 1);
    auto* out = static_cast<unsigned*>(engine_.native_address(output_->tuple_buffer()));
    unsigned* sums = out + (soa ? output_->capacity() : 1);
    const std::uint64_t out_stride = soa ? 1 : kPair;
    auto* runs = static_cast<unsigned*>(engine_.native_address(output_->count_buffer()));
    KernelSequence seq(engine_);
    seq.vendor("cub_reduce_by_key", vendor_scratch_, [&](void* temp, std::size_t* bytes, void* stream) {
      return cub.reduce_by_key(temp, bytes, keys, in_stride, values, in_stride, out, sums, out_stride, runs,
                               rows_, stream);
    });
    return seq.times();
  }

  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // At least: every key and v0 read, the runs' keys and sums and their count written.
  std::uint64_t bytes_moved() const override { return rows_ * 8 + output_->bytes_written(); }
  std::uint64_t working_set_bytes() const override {
    return rows_ * width_ * 4 + 2 * output_->bytes_written() + mid_capacity_ * kPair * 4;
  }

 private:
  Engine& engine_;
  std::uint64_t rows_ = 0;
  std::uint32_t width_ = 0;
  std::uint64_t mid_capacity_ = 0;
  std::unique_ptr<RowsOutput> output_;
  VendorScratch vendor_scratch_{engine_};
  std::unique_ptr<RelationInputs> inputs_;
  std::unique_ptr<DeviceBuffer> mid_, counts_, tails_, sizes_, offsets_, blocks_;
};

}  // namespace

std::vector<std::uint32_t> reduce_by_key_reference(const datasets::Relation& relation) {
  std::vector<std::uint32_t> out;
  for (std::uint64_t r = 0; r < relation.rows(); ++r) {
    const std::uint32_t key = relation.columns[0][r];
    const std::uint32_t value = relation.columns[1][r];
    if (r > 0 && key == out[out.size() - 2]) {
      out.back() += value;  // unsigned: modulo 2^32
    } else {
      out.push_back(key);
      out.push_back(value);
    }
  }
  return out;
}

WorkloadDecl RaReduceByKeyOperator::declaration() const {
  WorkloadDecl d;
  d.inputs = {relation_input()};
  d.flags = relation_flags(datasets::KeyDistribution::Runs);
  d.output = OutputKind::Rows;
  return d;
}

variants::Space RaReduceByKeyOperator::space(const variants::SpaceContext& context) const {
  using variants::Value;
  std::vector<variants::Tunable> tunables{
      {"algorithm",
       variants::TunableKind::Compile,
       {Value{"source"}, Value{"segmented_scan"}},
       Value{"source"},
       "source: the source's alg. 11 (heads numbered by an inclusive scan place their values in local "
       "memory, the other tuples add theirs with local atomics; per-partition runs, partition edges merged "
       "by a separate kernel), then SELECT's two scans and gather; segmented_scan: a segmented scan of v0 "
       "by head flags (tile aggregates, one work-group scanning the tile carries) and a compaction of the "
       "run ends (common/compact.h) straight into the output"},
      relation_layout(),
      relation_local(context.device, variants::TunableKind::Compile,
                     "work-group size = partition size in work-items (compile-time: sizes the local arrays)"),
      {"ept",
       variants::TunableKind::Compile,
       {1, 2, 4, 8},
       1,
       "tuples per work-item (consecutive); a tile (partition) holds local x ept tuples; the source: 1"},
      relation_grid(),
  };
  const std::uint64_t local_mem = context.device.local_mem;
  std::vector<variants::Constraint> constraints{
      {"a tile (local x ept tuples) holds at most 2048 tuples",
       [](const variants::Params& p) {
         return variants::get_int(p, "local") * variants::get_int(p, "ept") <= 2048;
       }},
      {"the source's runs (8 bytes per tuple of a tile) and scan must fit the device's local memory",
       [local_mem](const variants::Params& p) {
         const auto local = static_cast<std::uint64_t>(variants::get_int(p, "local"));
         return local_mem == 0 || segscan_of(p) ||
                local * variants::get_int(p, "ept") * 8 + local * 4 + 64 <= local_mem;
       }},
  };
  std::vector<variants::Inactive> inactive;
  add_vendor_variant(context.device, "DeviceReduce::ReduceByKey over the keys and v0", tunables, inactive,
                     {"layout"});
  return variants::Space("ra_reduce_by_key", std::move(tunables), std::move(constraints),
                         std::move(inactive));
}

Defines RaReduceByKeyOperator::defines(const variants::Params& params, const DeviceInfo&) const {
  return {{"ALGO_SEGSCAN", segscan_of(params) ? "1" : "0"},
          {"WG_SIZE", std::to_string(variants::get_int(params, "local"))},
          {"EPT", std::to_string(variants::get_int(params, "ept"))},
          {"LAYOUT_SOA", layout_of(params) == TupleLayout::Soa ? "1" : "0"}};
}

datasets::WorkloadSpec RaReduceByKeyOperator::workload(const WorkloadOptions& options) const {
  if (!options.query.empty()) {
    throw UsageError("ra_reduce_by_key: unknown query key '" + options.query.begin()->first +
                     "' (it takes no query)");
  }
  return relation_workload(name(), options, datasets::KeyDistribution::Runs);
}

DeviceFootprint RaReduceByKeyOperator::footprint(const datasets::WorkloadSpec& spec,
                                                 const DeviceInfo&) const {
  const std::uint64_t image = spec.rows() * (1 + relation_values(spec)) * 4;
  const std::uint64_t out = spec.rows() * kPair * 4;
  const std::uint64_t mid = round_up(std::max<std::uint64_t>(spec.rows(), 1), kMaxTile) * kPair * 4;
  const std::uint64_t tiles = (spec.rows() + kMinLocal - 1) / kMinLocal + 2;
  return {2 * image + out + mid + 5 * tiles * 4, std::max({image, out, mid})};
}

std::unique_ptr<PreparedRun> RaReduceByKeyOperator::prepare(Engine& engine,
                                                            const datasets::WorkloadSpec& spec) const {
  return std::make_unique<ReduceByKeyRun>(engine, spec);
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_reduce_by_key(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaReduceByKeyOperator>());
}

}  // namespace varex::operators
