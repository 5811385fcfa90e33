#include "operators/ra_reduce_by_key/ra_reduce_by_key.hpp"

#include <algorithm>
#include <memory>

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

constexpr std::uint32_t kPair = 2;  // output attributes: key, sum

bool segscan_of(const variants::Params& params) {
  return variants::get_string(params, "algorithm") == "segmented_scan";
}

class ReduceByKeyRun final : public RelationRun {
 public:
  ReduceByKeyRun(Engine& engine, const datasets::Relation& relation)
      : RelationRun(engine, "ra_reduce_by_key", relation, kPair, reduce_by_key_reference(relation)),
        tiles_(engine, rows_, kPair),
        tails_(tiles_.tile_words()),
        sizes_(tiles_.tile_words()) {}

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
    if (segscan_of(params)) {
      // counts: run ends per tile, then their offsets; tails_: tile aggregates, then carries; sizes_: flags.
      seq.run(
          "reduce", "ra_rbk_reduce", tiles.over_tiles,
          {KernelArg::of(in), KernelArg::of(*sizes_), KernelArg::of(*tails_), KernelArg::of(counts),
           KernelArg::of(n), KernelArg::of(width_), KernelArg::of(in_capacity), KernelArg::of(tiles.count)});
      seq.run("carries", "ra_rbk_carries", LaunchShape{tiles.local, tiles.local},
              {KernelArg::of(*sizes_), KernelArg::of(*tails_), KernelArg::of(counts),
               KernelArg::of(output_->count_buffer()), KernelArg::of(tiles.count)});
      seq.run("scatter", "ra_rbk_scatter", tiles.over_tiles,
              {KernelArg::of(in), KernelArg::of(output_->tuple_buffer()), KernelArg::of(*tails_),
               KernelArg::of(counts), KernelArg::of(n), KernelArg::of(width_), KernelArg::of(in_capacity),
               KernelArg::of(out_capacity), KernelArg::of(tiles.count)});
      return seq.times();
    }
    const std::uint32_t mid_capacity = tiles_.mid_capacity();
    seq.run("partition", "ra_rbk_partition", tiles.over_tiles,
            {KernelArg::of(in), KernelArg::of(tiles_.mid()), KernelArg::of(counts), KernelArg::of(*tails_),
             KernelArg::of(n), KernelArg::of(width_), KernelArg::of(in_capacity), KernelArg::of(mid_capacity),
             KernelArg::of(tiles.count)});
    seq.run("edges", "ra_rbk_edges", LaunchShape{round_up(tiles.count, tiles.local), tiles.local},
            {KernelArg::of(in), KernelArg::of(tiles_.mid()), KernelArg::of(counts), KernelArg::of(*tails_),
             KernelArg::of(*sizes_), KernelArg::of(width_), KernelArg::of(in_capacity),
             KernelArg::of(mid_capacity), KernelArg::of(tiles.count)});
    tiles_.gather(seq, tiles, plan, *sizes_, output_->tuple_buffer(), output_->count_buffer(),
                  output_->capacity());
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

  // At least: every key and v0 read, the runs' keys and sums and their count written.
  std::uint64_t bytes_moved() const override { return rows_ * 8 + output_->bytes_written(); }
  std::uint64_t working_set_bytes() const override {
    return rows_ * width_ * 4 + 2 * output_->bytes_written() + tiles_.mid_bytes();
  }

 protected:
  Defines defines(const variants::Params& params) const override {
    return RaReduceByKeyOperator().defines(params, engine_.device());
  }
  void poison_scratch() override { tiles_.poison(); }

 private:
  TileSelect tiles_;
  std::unique_ptr<DeviceBuffer> tails_, sizes_;
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

DeviceFootprint RaReduceByKeyOperator::footprint(const datasets::WorkloadSpec& spec,
                                                 const DeviceInfo&) const {
  const std::uint64_t image = spec.rows() * (1 + relation_values(spec)) * 4;
  const std::uint64_t out = spec.rows() * kPair * 4;
  const std::uint64_t mid =
      round_up(std::max<std::uint64_t>(spec.rows(), 1), TileSelect::kMaxTile) * kPair * 4;
  const std::uint64_t tails_and_sizes =
      2 * ((spec.rows() + TileSelect::kMinLocal - 1) / TileSelect::kMinLocal + 1) * 4;
  return {2 * image + out + TileSelect::device_bytes(spec.rows(), kPair) + tails_and_sizes,
          std::max({image, out, mid})};
}

std::unique_ptr<PreparedRun> RaReduceByKeyOperator::prepare(Engine& engine,
                                                            const datasets::WorkloadSpec& spec) const {
  return std::make_unique<ReduceByKeyRun>(engine, materialise_relation(spec));
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_reduce_by_key(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaReduceByKeyOperator>());
}

}  // namespace varex::operators
