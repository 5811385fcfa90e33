#include "operators/ra_set/ra_set.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <memory>

#include "base/errors.hpp"
#include "harness/backends/vendor_library.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/vendor_variant.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/compaction.hpp"
#include "operators/common/relations/relation_pair.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::add_vendor_variant;
using harness::DeviceResult;
using harness::KernelSequence;
using harness::LaunchBundle;
using harness::RowOrder;
using harness::RowsOutput;
using harness::TupleLayout;
using harness::VariantRun;
using harness::vendor_library;
using harness::VendorScratch;
}  // namespace varex::operators

namespace varex::operators {

namespace {

// The tile counts are sized for tiles of at least this many candidates (the space's smallest: 64 x 1).
constexpr std::uint64_t kMinTile = 32;

bool merge_of(const variants::Params& params) {
  return variants::get_string(params, "algorithm") == "merge_path";
}

// relation_local's sizes from 64 to 256: every compile-time variant of the three operators builds in the
// NVRTC test (18 programs each), and the tiles (local x ept) still range from 64 to 4096 candidates.
variants::Tunable local_sizes(const DeviceInfo& device) {
  variants::Tunable local = relation_local(device, variants::TunableKind::Compile,
                                           "work-group size (compile-time: sizes the scan arrays)");
  std::erase_if(local.values, [](const variants::Value& v) {
    const auto size = std::get<std::int64_t>(v);
    return size < 64 || size > 256;
  });
  return local;
}

// The operation as the kernels' SET_OP and the vendor library's `operation` number it.
int operation_number(SetOperation operation) {
  switch (operation) {
    case SetOperation::Intersection:
      return 0;
    case SetOperation::Union:
      return 1;
    case SetOperation::Difference:
      return 2;
  }
  return 0;
}

// The most tuples an operation's result can have.
std::uint64_t max_result(SetOperation operation, std::uint64_t n, std::uint64_t m) {
  switch (operation) {
    case SetOperation::Intersection:
      return std::min(n, m);
    case SetOperation::Union:
      return n + m;
    case SetOperation::Difference:
      return n;
  }
  return n + m;
}

// The label of the vendor call's time: "thrust_" and the operation as the operator's name gives it.
std::string vendor_label(SetOperation operation) {
  switch (operation) {
    case SetOperation::Intersection:
      return "thrust_intersect";
    case SetOperation::Union:
      return "thrust_union";
    case SetOperation::Difference:
      return "thrust_difference";
  }
  return "thrust_set";
}

// A set operation's kernels (or its vendor call) with their scratch, whoever owns the relations (packed
// tuples sorted by tuple) and the output (packed tuples, `capacity` of them, and the device's count).
class SetKernels {
 public:
  SetKernels(Engine& engine, std::uint64_t n, std::uint64_t m)
      : engine_(engine),
        counts_(engine.allocate(Compaction::words(max_tiles(n, m)) * 4)),
        bounds_(engine.allocate(3 * (max_tiles(n, m) + 1) * 4)),
        state_(engine.allocate(2 * max_tiles(n, m) * 4)),
        ticket_(engine.allocate(4)) {}

  // The most tiles two relations of n and m tuples are cut into.
  static std::uint64_t max_tiles(std::uint64_t n, std::uint64_t m) { return (n + m) / kMinTile + 1; }

  void run(const RaSetVariant& variant, KernelSequence& seq, const PairOperands& in, DeviceBuffer& out,
           DeviceBuffer& count, std::uint64_t capacity) {
    if (variant.vendor) {
      run_cub(variant, seq, in, out, count);
      return;
    }
    const std::uint64_t local = variant.local;
    const std::uint64_t tile = local * variant.ept;
    // Rank's candidates are the left tuples (and the right ones for UNION), merge path's the merge's steps.
    const std::uint64_t candidates =
        variant.merge || variant.operation == SetOperation::Union ? in.n + in.m : in.n;
    const auto tiles = static_cast<std::uint32_t>((candidates + tile - 1) / tile);
    const LaunchShape over_tiles = variant.launch.rows(std::uint64_t{tiles} * local);
    const auto n = static_cast<std::uint32_t>(in.n);
    const auto m = static_cast<std::uint32_t>(in.m);
    const auto capacity32 = static_cast<std::uint32_t>(capacity);
    const KernelArg left = KernelArg::of(in.left), right = KernelArg::of(in.right),
                    bounds = KernelArg::of(*bounds_);
    if (variant.merge)  // every tile's bounds on the merge path at once
      seq.run("partition", "ra_set_partition", variant.launch.rows(std::uint64_t{tiles} + 1),
              {left, right, bounds, KernelArg::of(n), KernelArg::of(m), KernelArg::of(in.width),
               KernelArg::of(tiles)});
    if (variant.single_pass && tiles == 0) {  // no tile, so no kernel would write the count
      seq.fill("clear", count, 0, 4);
      return;
    }
    if (variant.single_pass) {
      seq.fill("clear", *state_, 0, 2 * std::uint64_t{tiles} * 4);
      seq.fill("clear", *ticket_, 0, 4);
      seq.run("single_pass", "ra_set_single", over_tiles,
              {left, right, bounds, KernelArg::of(out), KernelArg::of(count), KernelArg::of(*state_),
               KernelArg::of(*ticket_), KernelArg::of(n), KernelArg::of(m), KernelArg::of(in.width),
               KernelArg::of(capacity32), KernelArg::of(tiles)});
      return;
    }
    run_compaction(
        seq,
        {{"ra_set_count",
          {left, right, bounds, KernelArg::of(*counts_), KernelArg::of(n), KernelArg::of(m),
           KernelArg::of(in.width), KernelArg::of(tiles)}},
         {"ra_set_scatter",
          {left, right, bounds, KernelArg::of(out), KernelArg::of(*counts_), KernelArg::of(n),
           KernelArg::of(m), KernelArg::of(in.width), KernelArg::of(capacity32), KernelArg::of(tiles)}},
         over_tiles,
         local,
         tiles},
        *counts_, count);
  }

  std::uint64_t scratch_bytes() const {
    return counts_->bytes() + bounds_->bytes() + state_->bytes() + ticket_->bytes();
  }

 private:
  // Thrust's set algorithm over whole tuples (vendor/cub/varex_cub.cu), unbounded: the output must hold
  // the operation's largest result; the count written on the device.
  void run_cub(const RaSetVariant& variant, KernelSequence& seq, const PairOperands& in, DeviceBuffer& out,
               DeviceBuffer& count) {
    const varex_vendor_table& cub = *vendor_library();
    const unsigned* left = vendor_words(engine_, in.left);
    const unsigned* right = vendor_words(engine_, in.right);
    unsigned* tuples = vendor_words(engine_, out);
    unsigned* counter = vendor_words(engine_, count);
    const int operation = operation_number(variant.operation);
    seq.vendor(vendor_label(variant.operation), vendor_scratch_,
               [&](void* temp, std::size_t* bytes, void* stream) {
                 return cub.set_operation(temp, bytes, left, in.n, right, in.m, tuples, counter,
                                          static_cast<int>(in.width), operation, stream);
               });
  }

  Engine& engine_;
  std::unique_ptr<DeviceBuffer> counts_;
  std::unique_ptr<DeviceBuffer> bounds_;          // merge path: 3 words per tile boundary
  std::unique_ptr<DeviceBuffer> state_, ticket_;  // the single pass's look-back
  VendorScratch vendor_scratch_{engine_};
};

class SetRun final : public VariantRun<RaSetVariant> {
 public:
  SetRun(Engine& engine, const RaSetOperator& op, const datasets::WorkloadSpec& spec)
      : VariantRun(engine, "ra_set"), op_(op) {
    const auto [left, right] = materialise_relation_pair(spec);
    n_ = left.rows();
    m_ = right.rows();
    width_ = left.attributes();
    // The output holds exactly the reference's tuples; the kernels count theirs and stop at that capacity.
    std::vector<std::uint32_t> reference = set_reference(op.operation(), left, right);
    const std::uint64_t expected = reference.size() / width_;
    output_ = std::make_unique<RowsOutput>(engine, width_, expected, std::move(reference), /*counted=*/true,
                                           RowOrder::any());
    inputs_ = std::make_unique<RelationPairInputs>(engine, left, right);
    kernels_ = std::make_unique<SetKernels>(engine, n_, m_);
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  void poison() override { output_->poison(); }

  void run(const RaSetVariant& variant, KernelSequence& seq) override {
    const PairOperands in = inputs_->operands(TupleLayout::Aos);
    kernels_->run(variant, seq, in, output_->tuple_buffer(), output_->count_buffer(), output_->capacity());
  }

  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // At least: both relations read once, the result and its count written.
  std::uint64_t bytes_moved() const override { return (n_ + m_) * width_ * 4 + output_->bytes_written(); }
  std::uint64_t working_set_bytes() const override {
    return (n_ + m_) * width_ * 4 + 2 * output_->bytes_written() + kernels_->scratch_bytes();
  }

 private:
  RaSetVariant decode(const variants::Params& params) const override {
    return RaSetVariant(params, engine_.device(), op_.operation());
  }

  const RaSetOperator op_;  // a copy: the runner may outlive the operator it came from
  std::uint64_t n_ = 0, m_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<RowsOutput> output_;
  std::unique_ptr<RelationPairInputs> inputs_;
  std::unique_ptr<SetKernels> kernels_;
};

// On an application's relations (packed tuples sorted by tuple, BoundRelationPair; layout=soa is refused):
// the output is allocated for the operation's largest result (the vendor call writes unbounded) and handed
// over with its count.
class SetBound final : public VariantRun<RaSetVariant, BoundRun> {
 public:
  SetBound(Engine& engine, const RaSetOperator& op, const Binding& binding)
      : VariantRun(engine, "ra_set"),
        operation_(op.operation()),
        pair_(engine, op.name(), binding),
        kernels_(engine, pair_.n(), pair_.m()),
        out_(engine, pair_.width()) {
    if (pair_.layout() != TupleLayout::Aos)
      throw UsageError(op.name() +
                       " reads packed tuples only (layout=aos): its kernels have no other layout");
  }

  datasets::WorkloadClass workload_class() const override { return pair_.workload_class(); }

  DeviceResult take_result() override { return out_.take(OutputKind::RowsMultiset); }

 private:
  RaSetVariant decode(const variants::Params& params) const override {
    return RaSetVariant(params, engine_.device(), operation_);
  }

  void run(const RaSetVariant& variant, KernelSequence& seq) override {
    out_.reserve(max_result(operation_, pair_.n(), pair_.m()));
    kernels_.run(variant, seq, pair_.operands(), out_.tuples(), out_.count(), out_.capacity());
  }

  SetOperation operation_;
  BoundRelationPair pair_;
  SetKernels kernels_;
  BoundTuples out_;
};

using Tuple = std::array<std::uint32_t, 4>;  // key and up to three values; unused words 0

std::vector<Tuple> tuples_of(const datasets::Relation& relation) {
  std::vector<Tuple> tuples(relation.rows(), Tuple{});
  for (std::uint32_t c = 0; c < relation.attributes(); ++c) {
    for (std::uint64_t i = 0; i < relation.rows(); ++i) tuples[i][c] = relation.columns[c][i];
  }
  return tuples;
}

}  // namespace

RaSetVariant::RaSetVariant(const variants::Params& params, const DeviceInfo& device, SetOperation operation)
    : LaunchBundle(params, device),
      operation(operation),
      merge(merge_of(params)),
      // Params recorded before `compaction` and `write` existed ran three kernels, writing directly.
      single_pass(params.count("compaction") && variants::get_string(params, "compaction") == "single_pass"),
      local(static_cast<std::uint64_t>(variants::get_int(params, "local"))),
      ept(static_cast<std::uint64_t>(variants::get_int(params, "ept"))) {
  defines = {
      {"SET_OP", std::to_string(operation_number(operation))},
      {"ALGO_MERGE", merge ? "1" : "0"},
      {"WRITE_STAGED",
       merge && params.count("write") && variants::get_string(params, "write") == "staged" ? "1" : "0"},
      {"WG_SIZE", std::to_string(local)},
      {"EPT", std::to_string(ept)}};
}

std::vector<std::uint32_t> set_reference(SetOperation operation, const datasets::Relation& left,
                                         const datasets::Relation& right) {
  const std::vector<Tuple> a = tuples_of(left), b = tuples_of(right);
  std::vector<Tuple> result;
  switch (operation) {
    case SetOperation::Intersection:
      std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(result));
      break;
    case SetOperation::Union:
      std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(result));
      break;
    case SetOperation::Difference:
      std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(result));
      break;
  }
  std::vector<std::uint32_t> out;
  out.reserve(result.size() * left.attributes());
  for (const Tuple& t : result) out.insert(out.end(), t.begin(), t.begin() + left.attributes());
  return out;
}

std::string RaSetOperator::name() const {
  switch (operation_) {
    case SetOperation::Intersection:
      return "ra_intersect";
    case SetOperation::Union:
      return "ra_union";
    case SetOperation::Difference:
      return "ra_difference";
  }
  return "ra_set";
}

std::string RaSetOperator::description() const {
  const char* what = operation_ == SetOperation::Intersection ? "SET INTERSECTION: min(m, n) copies"
                     : operation_ == SetOperation::Union      ? "SET UNION: max(m, n) copies"
                                                              : "SET DIFFERENCE: max(m - n, 0) copies";
  return std::string("Red Fox ") + what +
         " of a tuple present m times on the left and n times on the right (key and values match), two "
         "relations sorted by tuple (rank by binary search and compaction, or merge path)";
}

WorkloadDecl RaSetOperator::declaration() const {
  return sorted_pair_declaration(datasets::SortOrder::ByTuple);
}

variants::Space RaSetOperator::space(const variants::SpaceContext& context) const {
  using variants::Value;
  std::vector<variants::Tunable> tunables{
      {"algorithm",
       variants::TunableKind::Compile,
       {Value{"rank"}, Value{"merge_path"}},
       Value{"rank"},
       "rank: the source's rule, each tuple's rank among its copies (binary search in its own relation) "
       "against its copies in the other (lower and upper bound there), then a stable compaction; "
       "merge_path: the merge of both relations cut into tiles by a partition kernel (a diagonal binary "
       "search per tile boundary, all at once, and the runs crossing it), each tile's slices loaded into "
       "local memory (coalesced), there cut into shares per work-item and merged sequentially, counting "
       "runs of equal tuples"},
      local_sizes(context.device),
      {"ept",
       variants::TunableKind::Compile,
       {1, 4, 15, 16},
       4,
       "candidates per work-item (consecutive tuples for rank, merge steps for merge_path); a tile holds "
       "local x ept; odd counts keep the work-items' merges in local memory off each other's banks"},
      {"write",
       variants::TunableKind::Compile,
       {Value{"direct"}, Value{"staged"}},
       Value{"direct"},
       "direct: each work-item writes its kept tuples; staged (merge_path): the tile's kept tuples compacted "
       "in local memory, then written out together (coalesced)"},
      {"compaction",
       variants::TunableKind::Launch,
       {Value{"three_kernels"}, Value{"single_pass"}},
       Value{"three_kernels"},
       "three_kernels: count the kept tuples per tile, scan the counts, write them (each tile merged twice); "
       "single_pass: tiles taken in order, each merged once and placed by a decoupled look-back over the "
       "tiles before it"},
      relation_grid(),
  };
  const std::uint64_t local_mem = context.device.local_mem;
  std::vector<variants::Constraint> constraints{
      {"write=staged compacts merge_path's stage",
       [](const variants::Params& p) { return merge_of(p) || variants::get_string(p, "write") == "direct"; }},
      {"merge_path stages a tile (local x ept tuples of up to 4 words) in local memory: at most 48 KiB "
       "(CUDA's static shared memory) and the device's local memory",
       [local_mem](const variants::Params& p) {
         if (!merge_of(p)) return true;
         const auto local = static_cast<std::uint64_t>(variants::get_int(p, "local"));
         // The stage and the scan, and the single pass's look-back window and words.
         const std::uint64_t bytes =
             ((local * variants::get_int(p, "ept") + 2) * 4 + 4) * 4 + local * 4 + 35 * 4;
         return bytes <= 48 * 1024 && (local_mem == 0 || bytes <= local_mem);
       }},
  };
  std::vector<variants::Inactive> inactive;
  add_vendor_variant(context.device,
                     std::string("thrust::set_") +
                         (operation_ == SetOperation::Intersection ? "intersection"
                          : operation_ == SetOperation::Union      ? "union"
                                                                   : "difference") +
                         " over whole tuples",
                     tunables, inactive);
  return variants::Space(name(), std::move(tunables), std::move(constraints), std::move(inactive));
}

Defines RaSetOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return RaSetVariant(params, device, operation_).defines;
}

datasets::WorkloadSpec RaSetOperator::workload(const WorkloadOptions& options) const {
  refuse_pair_query(name(), options);
  return sorted_pair_workload(name(), options, datasets::SortOrder::ByTuple, same_rows);
}

DeviceFootprint RaSetOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t width = 1 + relation_values(spec);
  const std::uint64_t n = spec.rows(), m = relation_rows2(spec);
  const std::uint64_t out = max_result(operation_, n, m) * width * 4;
  // Both relations in both layouts (RelationInputs), the output, the tile counts, bounds and look-back state.
  const std::uint64_t tiles = SetKernels::max_tiles(n, m);
  return {2 * (n + m) * width * 4 + out + (Compaction::words(tiles) + 3 * (tiles + 1) + 2 * tiles + 1) * 4,
          std::max({n * width * 4, m * width * 4, out})};
}

std::unique_ptr<PreparedRun> RaSetOperator::prepare(Engine& engine,
                                                    const datasets::WorkloadSpec& spec) const {
  return std::make_unique<SetRun>(engine, *this, spec);
}

std::unique_ptr<BoundRun> RaSetOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  return std::make_unique<SetBound>(engine, *this, binding);
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_set(harness::OperatorRegistry& registry) {
  using operators::SetOperation;
  for (SetOperation operation : {SetOperation::Intersection, SetOperation::Union, SetOperation::Difference})
    registry.add(std::make_unique<RaSetOperator>(operation));
}

}  // namespace varex::operators
