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
#include "operators/common/relations/relation_run.hpp"
#include "operators/common/relations/relation_workload.hpp"
#include "operators/common/relations/tile_select.hpp"

namespace varex::operators {

namespace {

bool compact_of(const variants::Params& params) {
  return variants::get_string(params, "algorithm") == "compact";
}

class UniqueRun final : public RelationRun {
 public:
  UniqueRun(Engine& engine, const datasets::Relation& relation)
      : RelationRun(engine, "ra_unique", relation, relation.attributes(), unique_reference(relation)),
        tiles_(engine, rows_, width_, /*skips=*/true) {}

  ExecutionTimes execute(const variants::Params& params) override {
    const TupleLayout layout = layout_of(params);
    output_->set_layout(layout);
    if (is_vendor(params)) return execute_cub(layout);
    KernelSequence seq(engine_, program(params));
    const LaunchPlan plan(params, engine_.device());
    const TileSelect::Tiles tiles = tiles_.tiles(params, plan);
    const auto n = static_cast<std::uint32_t>(rows_);
    const auto in_capacity = static_cast<std::uint32_t>(inputs_->capacity());
    const auto out_capacity = static_cast<std::uint32_t>(output_->capacity());
    const DeviceBuffer& in = inputs_->buffer(layout);
    DeviceBuffer& counts = tiles_.counts();
    if (compact_of(params)) {
      seq.run("count", "ra_unique_count", tiles.over_tiles,
              {KernelArg::of(in), KernelArg::of(counts), KernelArg::of(n), KernelArg::of(width_),
               KernelArg::of(in_capacity), KernelArg::of(tiles.count)});
      seq.run("offsets", "ra_unique_offsets", LaunchShape{tiles.local, tiles.local},
              {KernelArg::of(counts), KernelArg::of(output_->count_buffer()), KernelArg::of(tiles.count)});
      seq.run("scatter", "ra_unique_scatter", tiles.over_tiles,
              {KernelArg::of(in), KernelArg::of(output_->tuple_buffer()), KernelArg::of(counts),
               KernelArg::of(n), KernelArg::of(width_), KernelArg::of(in_capacity),
               KernelArg::of(out_capacity), KernelArg::of(tiles.count)});
      return seq.times();
    }
    seq.run("partition", "ra_unique_partition", tiles.over_tiles,
            {KernelArg::of(in), KernelArg::of(tiles_.mid()), KernelArg::of(counts), KernelArg::of(n),
             KernelArg::of(width_), KernelArg::of(in_capacity), KernelArg::of(tiles_.mid_capacity()),
             KernelArg::of(tiles.count)});
    seq.run("edges", "ra_unique_edges", LaunchShape{round_up(tiles.count, tiles.local), tiles.local},
            {KernelArg::of(in), KernelArg::of(counts), KernelArg::of(tiles_.skip()), KernelArg::of(width_),
             KernelArg::of(in_capacity), KernelArg::of(tiles.count)});
    tiles_.gather(seq, tiles, plan, counts, output_->tuple_buffer(), output_->count_buffer(),
                  output_->capacity());
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

  // At least: every key read, the kept tuples' other attributes read, the kept tuples and their count
  // written.
  std::uint64_t bytes_moved() const override {
    const std::uint64_t kept = (output_->bytes_written() - 4) / 4 / width_;
    return rows_ * 4 + kept * (width_ - 1) * 4 + output_->bytes_written();
  }
  std::uint64_t working_set_bytes() const override {
    return rows_ * width_ * 4 + 2 * output_->bytes_written() + tiles_.mid_bytes();
  }

 protected:
  Defines defines(const variants::Params& params) const override {
    return RaUniqueOperator().defines(params, engine_.device());
  }
  void poison_scratch() override { tiles_.poison(); }

 private:
  TileSelect tiles_;
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

DeviceFootprint RaUniqueOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t width = 1 + relation_values(spec);
  const std::uint64_t image = spec.rows() * width * 4;
  const std::uint64_t mid =
      round_up(std::max<std::uint64_t>(spec.rows(), 1), TileSelect::kMaxTile) * width * 4;
  return {2 * image + image + TileSelect::device_bytes(spec.rows(), width), std::max(image, mid)};
}

std::unique_ptr<PreparedRun> RaUniqueOperator::prepare(Engine& engine,
                                                       const datasets::WorkloadSpec& spec) const {
  return std::make_unique<UniqueRun>(engine, materialise_relation(spec));
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_unique(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaUniqueOperator>());
}

}  // namespace varex::operators
