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
#include "operators/common/relations/compaction.hpp"
#include "operators/common/relations/relation_run.hpp"
#include "operators/common/relations/relation_workload.hpp"
#include "operators/common/relations/tile_select.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
using harness::round_up;
using harness::vendor_library;
}  // namespace varex::operators

namespace varex::operators {

namespace {

constexpr TileSelectFamily kUniqueFamily{"ra_unique", "compact", "ALGO_COMPACT"};

// The source's partition, edge and gather kernels or one compaction, and CUB's UniqueByKey, over a relation
// whoever owns it.
class UniqueKernels final : public TileSelectKernels {
 public:
  using TileSelectKernels::TileSelectKernels;

 private:
  void run_own(const TileSelectVariant& variant, const RelationBuffers& b, KernelSequence& seq) override {
    const TileSelect::Tiles tiles = tiles_.tiles(variant);
    DeviceBuffer& counts = tiles_.counts();
    if (variant.own_algorithm) {  // compact
      run_compaction(seq,
                     {{"ra_unique_count",
                       {KernelArg::of(b.in), KernelArg::of(counts), KernelArg::of(b.n()),
                        KernelArg::of(b.width), KernelArg::of(b.in_cap()), KernelArg::of(tiles.count)}},
                      {"ra_unique_scatter",
                       {KernelArg::of(b.in), KernelArg::of(b.out), KernelArg::of(counts),
                        KernelArg::of(b.n()), KernelArg::of(b.width), KernelArg::of(b.in_cap()),
                        KernelArg::of(b.out_cap()), KernelArg::of(tiles.count)}},
                      tiles.over_tiles,
                      tiles.local,
                      tiles.count},
                     counts, b.count);
      return;
    }
    seq.run("partition", "ra_unique_partition", tiles.over_tiles,
            {KernelArg::of(b.in), KernelArg::of(tiles_.mid()), KernelArg::of(counts), KernelArg::of(b.n()),
             KernelArg::of(b.width), KernelArg::of(b.in_cap()), KernelArg::of(tiles_.mid_capacity()),
             KernelArg::of(tiles.count)});
    seq.run("edges", "ra_unique_edges", LaunchShape{round_up(tiles.count, tiles.local), tiles.local},
            {KernelArg::of(b.in), KernelArg::of(counts), KernelArg::of(tiles_.skip()), KernelArg::of(b.width),
             KernelArg::of(b.in_cap()), KernelArg::of(tiles.count)});
    gather(seq, variant, tiles, counts, b);
  }

  // CUB's DeviceSelect::UniqueByKey over whole tuples (the keys a view of their first word); AoS (the vendor
  // variant takes no layout).
  void run_vendor(const TileSelectVariant&, const RelationBuffers& b, KernelSequence& seq) override {
    const varex_vendor_table& cub = *vendor_library();
    const unsigned* in = vendor_words(engine_, b.in);
    unsigned* out = vendor_words(engine_, b.out);
    unsigned* count = vendor_words(engine_, b.count);
    seq.vendor("cub_unique", vendor_scratch_, [&](void* temp, std::size_t* bytes, void* stream) {
      return cub.unique_by_key(temp, bytes, in, out, count, b.rows, static_cast<int>(b.width), stream);
    });
  }
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

RaUniqueOperator::RaUniqueOperator()
    : TileSelectOperator(
          "Red Fox UNIQUE: the first tuple of each run of equal consecutive keys, dense and in input order "
          "(the source's partition, edge, scan and gather kernels, or one compaction)",
          datasets::KeyDistribution::Runs,
          {kUniqueFamily,
           "source: the source's alg. 8 (neighbour comparison, local prefix sum and staging into "
           "per-partition "
           "buffers), its separate kernel for duplicates on partition edges, then SELECT's two scans of the "
           "partition counts and gather; compact: one stable compaction (common/compact.h: count per tile, "
           "scan "
           "of the tile counts, scatter straight to the output), the flags recomputed from the keys",
           "the source's staging area",
           16,
           8,
           /*own_algorithm_stages=*/false,
           "DeviceSelect::UniqueByKey over whole tuples",
           {}}) {}

DeviceFootprint RaUniqueOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t width = 1 + relation_values(spec);
  const std::uint64_t image = spec.rows() * width * 4;
  const std::uint64_t mid =
      round_up(std::max<std::uint64_t>(spec.rows(), 1), TileSelect::kMaxTile) * width * 4;
  return {2 * image + image + TileSelect::device_bytes(spec.rows(), width), std::max(image, mid)};
}

std::unique_ptr<PreparedRun> RaUniqueOperator::prepare(Engine& engine,
                                                       const datasets::WorkloadSpec& spec) const {
  const datasets::Relation relation = materialise_relation(spec);
  return std::make_unique<RelationRun>(engine, parts(spec), relation, unique_reference(relation));
}

TileSelectParts RaUniqueOperator::parts(const datasets::WorkloadSpec& spec) const {
  const std::uint32_t width = 1 + relation_values(spec);
  return {kUniqueFamily, width, /*skips=*/true,
          [](Engine& engine, TileSelect& tiles) { return std::make_unique<UniqueKernels>(engine, tiles); }};
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_unique(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaUniqueOperator>());
}

}  // namespace varex::operators
