#include "operators/ra_select/ra_select.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "harness/backends/vendor_library.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/vendor_variant.hpp"
#include "harness/operators/workload_flags.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/relation_run.hpp"
#include "operators/common/relations/relation_workload.hpp"
#include "operators/common/relations/tile_select.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
using harness::round_up;
using harness::vendor_library;
namespace flags = harness::flags;
}  // namespace varex::operators

namespace varex::operators {

namespace {

constexpr TileSelectFamily kSelectFamily{"ra_select", "single_pass", "ALGO_SINGLE", "single_pass_ballot"};

// The source's four kernels or the single pass, and CUB's select, over a relation whoever owns it.
class SelectKernels final : public TileSelectKernels {
 public:
  SelectKernels(Engine& engine, TileSelect& tiles, std::uint64_t rows, const KeyRange& range)
      : TileSelectKernels(engine, tiles), range_(range) {
    state_ = engine.allocate(2 * (rows / TileSelect::kMinLocal + 2) * 4);  // aggregates and prefixes
    ticket_ = engine.allocate(4);
  }

 private:
  void run_own(const TileSelectVariant& variant, const RelationBuffers& b, KernelSequence& seq) override {
    const TileSelect::Tiles tiles = tiles_.tiles(variant);
    if (variant.own_algorithm) {  // single pass
      if (tiles.count == 0) {     // an empty relation: no tile, so no kernel would write the count
        seq.fill("clear", b.count, 0, 4);
        return;
      }
      seq.fill("clear", *state_, 0, 2 * std::uint64_t{tiles.count} * 4);  // the tiles' published counts
      seq.fill("clear", *ticket_, 0, 4);
      seq.run("single_pass", "ra_select_single", tiles.over_tiles,
              {KernelArg::of(b.in), KernelArg::of(b.out), KernelArg::of(b.count), KernelArg::of(*state_),
               KernelArg::of(*ticket_), KernelArg::of(b.n()), KernelArg::of(b.width),
               KernelArg::of(b.in_cap()), KernelArg::of(b.out_cap()), KernelArg::of(tiles.count),
               KernelArg::of(range_.lo), KernelArg::of(range_.hi), KernelArg::of(range_.neg)});
      return;
    }
    seq.run("partition", "ra_select_partition", tiles.over_tiles,
            {KernelArg::of(b.in), KernelArg::of(tiles_.mid()), KernelArg::of(tiles_.counts()),
             KernelArg::of(b.n()), KernelArg::of(b.width), KernelArg::of(b.in_cap()),
             KernelArg::of(tiles_.mid_capacity()), KernelArg::of(tiles.count), KernelArg::of(range_.lo),
             KernelArg::of(range_.hi), KernelArg::of(range_.neg)});
    gather(seq, variant, tiles, tiles_.counts(), b);
  }

  // cub::DeviceSelect::If over whole tuples (AoS: the vendor variant takes no layout), the count into the
  // output's counter.
  void run_vendor(const TileSelectVariant&, const RelationBuffers& b, KernelSequence& seq) override {
    const varex_vendor_table& cub = *vendor_library();
    const unsigned* in = vendor_words(engine_, b.in);
    unsigned* out = vendor_words(engine_, b.out);
    unsigned* count = vendor_words(engine_, b.count);
    seq.vendor("cub_select", vendor_scratch_, [&](void* temp, std::size_t* bytes, void* stream) {
      return cub.select_key_range(temp, bytes, in, out, count, b.rows, static_cast<int>(b.width), range_.lo,
                                  range_.hi, static_cast<int>(range_.neg), stream);
    });
  }

  KeyRange range_;
  std::unique_ptr<DeviceBuffer> state_, ticket_;
};

// The query and the share of uniform keys it keeps, however it was given (a scale of the workload class).
void put_query(const KeyRangeQuery& query, datasets::WorkloadSpec& spec) {
  spec.query = query.to_json();
  if (spec.generator != "file") spec.params["selectivity"] = std::round(query.uniform_share() * 1e6) / 1e6;
}

}  // namespace

std::vector<std::uint32_t> select_reference(const datasets::Relation& relation, const KeyRangeQuery& query) {
  std::vector<std::uint32_t> out;
  for (std::uint64_t r = 0; r < relation.rows(); ++r) {
    if (!query.matches(relation.columns[0][r])) continue;
    for (const auto& column : relation.columns) out.push_back(column[r]);
  }
  return out;
}

RaSelectOperator::RaSelectOperator()
    : TileSelectOperator(
          "Red Fox SELECT: the tuples of a key-value relation whose key lies in a range, "
          "dense and in input "
          "order (the source's four kernels, or one pass over ordered tiles)",
          datasets::KeyDistribution::Uniform,
          {kSelectFamily,
           "source: the source's four kernels (partition with local prefix sum and staging, two scans of the "
           "partition counts, gather); single_pass: one kernel, tiles taken in order by an atomic ticket, "
           "each "
           "finding its prefix by a decoupled look-back over its predecessors' published counts and writing "
           "its "
           "survivors directly; single_pass_ballot (devices with warp ballots): the same with coalesced "
           "loads, "
           "each warp's survivors counted and placed by ballots, no work-group scan and no staging",
           "a tile's staging area",
           16,
           8,
           /*own_algorithm_stages=*/true,
           "DeviceSelect::If over whole tuples",
           {}}) {}

std::vector<FlagDecl> RaSelectOperator::own_flags() const {
  return {flags::selectivity(
      "Share of uniform keys the generated query keeps (key < X * 2^32), 0 to 1 (default 0.5); used when no "
      "--query is given")};
}

std::vector<QueryKeyDecl> RaSelectOperator::query_keys() const {
  return {{"lo", "lower bound of the key range (uint32; absent: none)"},
          {"hi", "upper bound of the key range (uint32; absent: none)"},
          {"lo_inclusive", "whether lo itself passes (default true)"},
          {"hi_inclusive", "whether hi itself passes (default true)"},
          {"negate", "keep the tuples outside the range instead (default false)"}};
}

void RaSelectOperator::read_query(const WorkloadOptions& options, datasets::WorkloadSpec& spec) const {
  put_query(options.query.empty()
                ? KeyRangeQuery::for_selectivity(options.number("selectivity").value_or(0.5))
                : KeyRangeQuery::parse(options.query),
            spec);
}

void RaSelectOperator::read_bound_query(const std::map<std::string, std::string>& query,
                                        datasets::WorkloadSpec& spec) const {
  put_query(KeyRangeQuery::parse(query), spec);  // no key: every tuple
}

TileSelectParts RaSelectOperator::parts(const datasets::WorkloadSpec& spec) const {
  const KeyRange range = KeyRangeQuery::from_json(spec.query).inclusive();
  const std::uint64_t rows = spec.rows();
  return {kSelectFamily, 1 + relation_values(spec), false, [rows, range](Engine& engine, TileSelect& tiles) {
            return std::make_unique<SelectKernels>(engine, tiles, rows, range);
          }};
}

DeviceFootprint RaSelectOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t width = 1 + relation_values(spec);
  const std::uint64_t image = spec.rows() * width * 4;
  const std::uint64_t mid =
      round_up(std::max<std::uint64_t>(spec.rows(), 1), TileSelect::kMaxTile) * width * 4;
  const std::uint64_t state = 2 * (spec.rows() / TileSelect::kMinLocal + 2) * 4;
  return {2 * image + image + TileSelect::device_bytes(spec.rows(), width) + state, std::max(image, mid)};
}

std::unique_ptr<PreparedRun> RaSelectOperator::prepare(Engine& engine,
                                                       const datasets::WorkloadSpec& spec) const {
  const datasets::Relation relation = materialise_relation(spec);
  return std::make_unique<RelationRun>(engine, parts(spec), relation,
                                       select_reference(relation, KeyRangeQuery::from_json(spec.query)));
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_select(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaSelectOperator>());
}

}  // namespace varex::operators
