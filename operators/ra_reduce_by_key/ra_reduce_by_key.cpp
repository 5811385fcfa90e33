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
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
using harness::round_up;
using harness::TupleLayout;
using harness::vendor_library;
}  // namespace varex::operators

namespace varex::operators {

namespace {

constexpr std::uint32_t kPair = 2;  // output attributes: key, sum

constexpr TileSelectFamily kReduceByKeyFamily{"ra_reduce_by_key", "segmented_scan", "ALGO_SEGSCAN"};

// The source's alg. 11 or the segmented scan, and CUB's ReduceByKey, over a relation whoever owns it.
class ReduceByKeyKernels final : public TileSelectKernels {
 public:
  ReduceByKeyKernels(Engine& engine, TileSelect& tiles)
      : TileSelectKernels(engine, tiles), tails_(tiles.tile_words()), sizes_(tiles.tile_words()) {}

 private:
  void run_own(const TileSelectVariant& variant, const RelationBuffers& b, KernelSequence& seq) override {
    const TileSelect::Tiles tiles = tiles_.tiles(variant);
    DeviceBuffer& counts = tiles_.counts();
    if (variant.own_algorithm) {  // segmented scan
      // counts: run ends per tile, then their offsets; tails_: tile aggregates, then carries; sizes_: flags.
      seq.run("reduce", "ra_rbk_reduce", tiles.over_tiles,
              {KernelArg::of(b.in), KernelArg::of(*sizes_), KernelArg::of(*tails_), KernelArg::of(counts),
               KernelArg::of(b.n()), KernelArg::of(b.width), KernelArg::of(b.in_cap()),
               KernelArg::of(tiles.count)});
      seq.run("carries", "ra_rbk_carries", LaunchShape{tiles.local, tiles.local},
              {KernelArg::of(*sizes_), KernelArg::of(*tails_), KernelArg::of(counts), KernelArg::of(b.count),
               KernelArg::of(tiles.count)});
      seq.run("scatter", "ra_rbk_scatter", tiles.over_tiles,
              {KernelArg::of(b.in), KernelArg::of(b.out), KernelArg::of(*tails_), KernelArg::of(counts),
               KernelArg::of(b.n()), KernelArg::of(b.width), KernelArg::of(b.in_cap()),
               KernelArg::of(b.out_cap()), KernelArg::of(tiles.count)});
      return;
    }
    const std::uint32_t mid_capacity = tiles_.mid_capacity();
    seq.run("partition", "ra_rbk_partition", tiles.over_tiles,
            {KernelArg::of(b.in), KernelArg::of(tiles_.mid()), KernelArg::of(counts), KernelArg::of(*tails_),
             KernelArg::of(b.n()), KernelArg::of(b.width), KernelArg::of(b.in_cap()),
             KernelArg::of(mid_capacity), KernelArg::of(tiles.count)});
    seq.run("edges", "ra_rbk_edges", LaunchShape{round_up(tiles.count, tiles.local), tiles.local},
            {KernelArg::of(b.in), KernelArg::of(tiles_.mid()), KernelArg::of(counts), KernelArg::of(*tails_),
             KernelArg::of(*sizes_), KernelArg::of(b.width), KernelArg::of(b.in_cap()),
             KernelArg::of(mid_capacity), KernelArg::of(tiles.count)});
    gather(seq, variant, tiles, *sizes_, b);
  }

  // CUB's DeviceReduce::ReduceByKey over strided views of the keys and v0, into the (key, sum) pairs in
  // either layout.
  void run_vendor(const TileSelectVariant& variant, const RelationBuffers& b, KernelSequence& seq) override {
    const varex_vendor_table& cub = *vendor_library();
    const bool soa = variant.layout == TupleLayout::Soa;
    const auto* in = static_cast<const unsigned*>(engine_.native_address(b.in));
    const std::uint64_t in_stride = soa ? 1 : b.width;
    const unsigned* keys = in;
    const unsigned* values = in + (soa ? b.in_capacity : 1);
    auto* out = static_cast<unsigned*>(engine_.native_address(b.out));
    unsigned* sums = out + (soa ? b.out_capacity : 1);
    const std::uint64_t out_stride = soa ? 1 : kPair;
    auto* runs = static_cast<unsigned*>(engine_.native_address(b.count));
    seq.vendor("cub_reduce_by_key", vendor_scratch_, [&](void* temp, std::size_t* bytes, void* stream) {
      return cub.reduce_by_key(temp, bytes, keys, in_stride, values, in_stride, out, sums, out_stride, runs,
                               b.rows, stream);
    });
  }

  std::unique_ptr<DeviceBuffer> tails_, sizes_;
};

class ReduceByKeyRun final : public RelationRun {
 public:
  ReduceByKeyRun(Engine& engine, TileSelectParts parts, const datasets::Relation& relation)
      : RelationRun(engine, std::move(parts), relation, reduce_by_key_reference(relation)) {}

  // At least: every key and v0 read, the runs' keys and sums and their count written.
  std::uint64_t bytes_moved() const override { return rows_ * 8 + output_->bytes_written(); }
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

RaReduceByKeyOperator::RaReduceByKeyOperator()
    : TileSelectOperator(
          "Red Fox REDUCE BY KEY: each run of equal consecutive keys as its key and the sum of v0 (modulo "
          "2^32), dense and in input order (the source's local atomics with partition edges merged, or a "
          "segmented scan and compaction of the run ends)",
          datasets::KeyDistribution::Runs,
          {kReduceByKeyFamily,
           "source: the source's alg. 11 (heads numbered by an inclusive scan place their values in local "
           "memory, the other tuples add theirs with local atomics; per-partition runs, partition edges "
           "merged "
           "by a separate kernel), then SELECT's two scans and gather; segmented_scan: a segmented scan of "
           "v0 "
           "by head flags (tile aggregates, one work-group scanning the tile carries) and a compaction of "
           "the "
           "run ends (common/compact.h) straight into the output",
           "the source's runs",
           8,
           4,
           /*own_algorithm_stages=*/false,
           "DeviceReduce::ReduceByKey over the keys and v0",
           {"layout"}}) {}

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
  return std::make_unique<ReduceByKeyRun>(engine, parts(spec), materialise_relation(spec));
}

TileSelectParts RaReduceByKeyOperator::parts(const datasets::WorkloadSpec&) const {
  return {kReduceByKeyFamily, kPair, false, [](Engine& engine, TileSelect& tiles) {
            return std::make_unique<ReduceByKeyKernels>(engine, tiles);
          }};
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_reduce_by_key(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaReduceByKeyOperator>());
}

}  // namespace varex::operators
