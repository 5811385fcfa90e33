#include "operators/ra_unique/ra_unique.hpp"

#include <algorithm>
#include <memory>
#include <numeric>

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

bool compact_of(const variants::Params& params) {
  return variants::get_string(params, "algorithm") == "compact";
}

class UniqueRun final : public PreparedRun {
 public:
  UniqueRun(Engine& engine, const datasets::WorkloadSpec& spec) : engine_(engine) {
    const datasets::Relation relation = materialise_relation(spec);
    rows_ = relation.rows();
    width_ = relation.attributes();
    output_ =
        std::make_unique<RowsOutput>(engine, width_, rows_, unique_reference(relation), /*counted=*/true);
    inputs_ = std::make_unique<RelationInputs>(engine, relation, rows_);
    mid_capacity_ = round_up(std::max<std::uint64_t>(rows_, 1), kMaxTile);
    mid_ = engine.allocate(mid_capacity_ * width_ * 4);
    const std::uint64_t max_tiles = (rows_ + kMinLocal - 1) / kMinLocal + 1;
    counts_ = engine.allocate(max_tiles * 4);
    offsets_ = engine.allocate(max_tiles * 4);
    skip_ = engine.allocate(max_tiles * 4);
    blocks_ = engine.allocate((max_tiles / kMinLocal + 2) * 4);
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  CompileInfo compile(const variants::Params& params) override {
    CompileInfo info;
    if (is_vendor(params)) return info;  // built with varex
    engine_.compile(kernel_source(engine_.device().backend, "ra_unique"),
                    RaUniqueOperator().defines(params, engine_.device()), &info);
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
    const Program& program = engine_.compile(kernel_source(engine_.device().backend, "ra_unique"),
                                             RaUniqueOperator().defines(params, engine_.device()));
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
    if (compact_of(params)) {
      seq.run("count", "ra_unique_count", over_tiles,
              {KernelArg::of(in), KernelArg::of(*counts_), KernelArg::of(n), KernelArg::of(width_),
               KernelArg::of(in_capacity), KernelArg::of(tiles)});
      seq.run("offsets", "ra_unique_offsets", LaunchShape{local, local},
              {KernelArg::of(*counts_), KernelArg::of(output_->count_buffer()), KernelArg::of(tiles)});
      seq.run("scatter", "ra_unique_scatter", over_tiles,
              {KernelArg::of(in), KernelArg::of(output_->tuple_buffer()), KernelArg::of(*counts_),
               KernelArg::of(n), KernelArg::of(width_), KernelArg::of(in_capacity),
               KernelArg::of(out_capacity), KernelArg::of(tiles)});
      return seq.times();
    }
    const auto mid_capacity = static_cast<std::uint32_t>(mid_capacity_);
    const auto nblocks = static_cast<std::uint32_t>((tiles + local - 1) / local);
    seq.run("partition", "ra_unique_partition", over_tiles,
            {KernelArg::of(in), KernelArg::of(*mid_), KernelArg::of(*counts_), KernelArg::of(n),
             KernelArg::of(width_), KernelArg::of(in_capacity), KernelArg::of(mid_capacity),
             KernelArg::of(tiles)});
    seq.run("edges", "ra_unique_edges", LaunchShape{round_up(tiles, local), local},
            {KernelArg::of(in), KernelArg::of(*counts_), KernelArg::of(*skip_), KernelArg::of(width_),
             KernelArg::of(in_capacity), KernelArg::of(tiles)});
    seq.run(
        "scan", "ra_unique_scan", plan.rows(std::uint64_t{nblocks} * local),
        {KernelArg::of(*counts_), KernelArg::of(*offsets_), KernelArg::of(*blocks_), KernelArg::of(tiles)});
    seq.run("combine", "ra_unique_combine", LaunchShape{local, local},
            {KernelArg::of(*blocks_), KernelArg::of(output_->count_buffer()), KernelArg::of(nblocks)});
    seq.run("gather", "ra_unique_gather", over_tiles,
            {KernelArg::of(*mid_), KernelArg::of(output_->tuple_buffer()), KernelArg::of(*counts_),
             KernelArg::of(*skip_), KernelArg::of(*offsets_), KernelArg::of(*blocks_), KernelArg::of(tiles),
             KernelArg::of(width_), KernelArg::of(mid_capacity), KernelArg::of(out_capacity)});
    return seq.times();
  }

  // CUB's DeviceSelect::UniqueByKey over whole tuples (the keys a view of their first word); AoS.
  ExecutionTimes execute_cub(TupleLayout) {
    const varex_vendor_table& cub = *vendor_library();
    const auto address = [&](const DeviceBuffer& b) {
      return static_cast<unsigned*>(engine_.native_address(b));
    };
    const unsigned* in = address(inputs_->buffer(TupleLayout::Aos));
    unsigned* out = address(output_->tuple_buffer());
    unsigned* count = address(output_->count_buffer());
    KernelSequence seq(engine_);
    seq.vendor("cub_unique", vendor_scratch_, [&](void* temp, std::size_t* bytes, void* stream) {
      return cub.unique_by_key(temp, bytes, in, out, count, rows_, static_cast<int>(width_), stream);
    });
    return seq.times();
  }

  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // At least: every key read, the kept tuples' other attributes read, the kept tuples and their count
  // written.
  std::uint64_t bytes_moved() const override {
    const std::uint64_t kept = (output_->bytes_written() - 4) / 4 / width_;
    return rows_ * 4 + kept * (width_ - 1) * 4 + output_->bytes_written();
  }
  std::uint64_t working_set_bytes() const override {
    return rows_ * width_ * 4 + 2 * output_->bytes_written() + mid_capacity_ * width_ * 4;
  }

 private:
  Engine& engine_;
  std::uint64_t rows_ = 0;
  std::uint32_t width_ = 0;
  std::uint64_t mid_capacity_ = 0;
  std::unique_ptr<RowsOutput> output_;
  VendorScratch vendor_scratch_{engine_};
  std::unique_ptr<RelationInputs> inputs_;
  std::unique_ptr<DeviceBuffer> mid_, counts_, offsets_, skip_, blocks_;
};

}  // namespace

std::vector<std::uint32_t> unique_reference(const datasets::Relation& relation) {
  // std::unique on the row numbers with a key comparator keeps the first row of each run of equal keys.
  if (relation.rows() == 0) return {};
  std::vector<std::uint64_t> rows(relation.rows());
  std::iota(rows.begin(), rows.end(), std::uint64_t{0});
  const std::vector<std::uint32_t>& keys = relation.columns[0];
  rows.erase(std::unique(rows.begin(), rows.end(),
                         [&keys](std::uint64_t a, std::uint64_t b) { return keys[a] == keys[b]; }),
             rows.end());
  std::vector<std::uint32_t> out;
  out.reserve(rows.size() * relation.attributes());
  for (std::uint64_t r : rows) {
    for (const auto& column : relation.columns) out.push_back(column[r]);
  }
  return out;
}

WorkloadDecl RaUniqueOperator::declaration() const {
  WorkloadDecl d;
  d.inputs = {relation_input()};
  d.flags = relation_flags(datasets::KeyDistribution::Runs);
  d.output = OutputKind::Rows;
  return d;
}

variants::Space RaUniqueOperator::space(const variants::SpaceContext& context) const {
  using variants::Value;
  std::vector<variants::Tunable> tunables{
      {"algorithm",
       variants::TunableKind::Compile,
       {Value{"source"}, Value{"compact"}},
       Value{"source"},
       "source: the source's alg. 8 (neighbour comparison, local prefix sum and staging into per-partition "
       "buffers), its separate kernel for duplicates on partition edges, then SELECT's two scans of the "
       "partition counts and gather; compact: one stable compaction (common/compact.h: count per tile, scan "
       "of the tile counts, scatter straight to the output), the flags recomputed from the keys"},
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
      {"the source's staging area (16 bytes per tuple) and scan must fit the device's local memory",
       [local_mem](const variants::Params& p) {
         const auto local = static_cast<std::uint64_t>(variants::get_int(p, "local"));
         return local_mem == 0 || compact_of(p) ||
                local * variants::get_int(p, "ept") * 16 + local * 8 + 64 <= local_mem;
       }},
  };
  std::vector<variants::Inactive> inactive;
  add_vendor_variant(context.device, "DeviceSelect::UniqueByKey over whole tuples", tunables, inactive);
  return variants::Space("ra_unique", std::move(tunables), std::move(constraints), std::move(inactive));
}

Defines RaUniqueOperator::defines(const variants::Params& params, const DeviceInfo&) const {
  return {{"ALGO_COMPACT", compact_of(params) ? "1" : "0"},
          {"WG_SIZE", std::to_string(variants::get_int(params, "local"))},
          {"EPT", std::to_string(variants::get_int(params, "ept"))},
          {"LAYOUT_SOA", layout_of(params) == TupleLayout::Soa ? "1" : "0"}};
}

datasets::WorkloadSpec RaUniqueOperator::workload(const WorkloadOptions& options) const {
  if (!options.query.empty()) {
    throw UsageError("ra_unique: unknown query key '" + options.query.begin()->first +
                     "' (it takes no query)");
  }
  return relation_workload(name(), options, datasets::KeyDistribution::Runs);
}

DeviceFootprint RaUniqueOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t width = 1 + relation_values(spec);
  const std::uint64_t image = spec.rows() * width * 4;
  const std::uint64_t mid = round_up(std::max<std::uint64_t>(spec.rows(), 1), kMaxTile) * width * 4;
  const std::uint64_t tiles = (spec.rows() + kMinLocal - 1) / kMinLocal + 2;
  return {2 * image + image + mid + 4 * tiles * 4, std::max(image, mid)};
}

std::unique_ptr<PreparedRun> RaUniqueOperator::prepare(Engine& engine,
                                                       const datasets::WorkloadSpec& spec) const {
  return std::make_unique<UniqueRun>(engine, spec);
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_unique(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaUniqueOperator>());
}

}  // namespace varex::operators
