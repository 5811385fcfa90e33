#include "operators/ra_join/ra_join.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "base/errors.hpp"
#include "harness/backends/vendor_library.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/operators/vendor_variant.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/hash/hash_common.hpp"
#include "operators/common/relations/relation_pair.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::add_vendor_variant;
using harness::DeviceResult;
using harness::KernelSequence;
using harness::LaunchBundle;
using harness::LaunchPlan;
using harness::round_up;
using harness::RowOrder;
using harness::RowsOutput;
using harness::TupleLayout;
using harness::VariantRun;
using harness::vendor_library;
using harness::VendorScratch;
}  // namespace varex::operators

namespace varex::operators {

namespace {

// The smallest partition the space offers: the partition bounds are sized for it.
constexpr std::uint64_t kMinPartition = 256;

bool merge_path_of(const variants::Params& params) {
  return variants::get_string(params, "algorithm") == "merge_path";
}

// Calls f(i0, i1, j0, j1) for every key on both sides: left tuples [i0, i1) and right tuples [j0, j1) have
// it. Two pointers over the sorted keys, each run's end found by std::upper_bound.
template <typename F>
void for_each_common_key(const datasets::Relation& left, const datasets::Relation& right, F f) {
  const std::vector<std::uint32_t>& lk = left.columns[0];
  const std::vector<std::uint32_t>& rk = right.columns[0];
  auto i = lk.begin(), j = rk.begin();
  while (i != lk.end() && j != rk.end()) {
    if (*i < *j) {
      i = std::lower_bound(i, lk.end(), *j);
    } else if (*j < *i) {
      j = std::lower_bound(j, rk.end(), *i);
    } else {
      const auto i1 = std::upper_bound(i, lk.end(), *i), j1 = std::upper_bound(j, rk.end(), *j);
      f(static_cast<std::uint64_t>(i - lk.begin()), static_cast<std::uint64_t>(i1 - lk.begin()),
        static_cast<std::uint64_t>(j - rk.begin()), static_cast<std::uint64_t>(j1 - rk.begin()));
      i = i1;
      j = j1;
    }
  }
}

// The join's size per workload, for footprint() (which would otherwise read or generate both relations
// again for every check).
std::uint64_t join_size_of(const datasets::WorkloadSpec& spec) {
  static std::mutex mutex;
  static std::map<std::string, std::uint64_t> sizes;
  const std::string id = spec.id();
  {
    const std::lock_guard lock(mutex);
    if (const auto it = sizes.find(id); it != sizes.end()) return it->second;
  }
  const auto [left, right] = materialise_relation_pair(spec);
  const std::uint64_t size = join_size(left, right);
  const std::lock_guard lock(mutex);
  sizes[id] = size;
  return size;
}

// A variant of the join, decoded once: the algorithm, the tuple layout, the partition size (partition), the
// merge steps per work-item (merge path), the work-group size and the defines the kernels are built with.
struct RaJoinVariant : LaunchBundle {
  RaJoinVariant(const variants::Params& params, const DeviceInfo& device);
  bool merge_path;  // algorithm=merge_path (else partition)
  TupleLayout layout;
  std::uint64_t partition;  // partition: left tuples per partition
  std::uint64_t ept;        // merge_path: merge steps per work-item
  std::uint64_t local;
};

RaJoinVariant::RaJoinVariant(const variants::Params& params, const DeviceInfo& device)
    : LaunchBundle(params, device),
      merge_path(merge_path_of(params)),
      layout(layout_of(params)),
      partition(static_cast<std::uint64_t>(variants::get_int(params, "partition"))),
      ept(static_cast<std::uint64_t>(variants::get_int(params, "ept"))),
      local(static_cast<std::uint64_t>(variants::get_int(params, "local"))) {
  defines = {{"ALGO_MERGE_PATH", merge_path ? "1" : "0"},
             {"PART", std::to_string(partition)},
             {"EPT", std::to_string(ept)},
             {"LAYOUT_SOA", layout == TupleLayout::Soa ? "1" : "0"},
             {"SCAN_LOCAL", std::to_string(DeviceScan::kLocal)},  // the shared scan's shape
             {"SCAN_ITEMS", std::to_string(DeviceScan::kItems)}};
}

// Where a join's pairs go: their tuples (in the variant's layout, SoA at a stride of capacity()), their
// device counter, and the tuples that fit (the kernels write no further, and count them all).
class JoinOutput {
 public:
  virtual DeviceBuffer& tuples() = 0;
  virtual DeviceBuffer& count() = 0;
  virtual std::uint64_t capacity() const = 0;
  // Whether the output is sized by the join's total, read back once the counts are scanned and handed to
  // reserve() before any pair is written: an application's call, whose join nobody has counted. varex's own
  // runs hold the reference's size already and read nothing back for it.
  virtual bool sized_by_total() const { return false; }
  virtual void reserve(std::uint64_t /*total*/) {}

 protected:
  ~JoinOutput() = default;
};

// A join's kernels (or its vendor call) with their scratch, whoever owns the relations and the output.
class JoinKernels {
 public:
  JoinKernels(Engine& engine, std::uint64_t n)
      : engine_(engine),
        // Partition sizes (partition) or left tuples' match counts (merge path), scanned in place: the
        // offsets, their total behind them.
        counts_(engine.allocate((n + 1) * 4)),
        lower_(engine.allocate(std::max<std::uint64_t>(n, 1) * 4)),
        bounds_(engine.allocate(2 * ((n + kMinPartition - 1) / kMinPartition + 1) * 4)),
        scan_(std::make_unique<DeviceScan>(engine, n)),
        total_(engine.allocate_host(4)) {}

  void run(const RaJoinVariant& variant, KernelSequence& seq, const PairOperands& in, JoinOutput& out) {
    if (in.n == 0) {
      // No left tuple, no pair, in every variant: no kernel would have a work-item to write the count.
      seq.fill("empty", out.count(), 0, 4);
      return;
    }
    if (variant.vendor) {
      run_cub(seq, in, out);
      return;
    }
    const LaunchPlan& plan = variant.launch;
    const auto n = static_cast<std::uint32_t>(in.n), m = static_cast<std::uint32_t>(in.m);
    const auto lcap = static_cast<std::uint32_t>(in.left_capacity);
    const auto rcap = static_cast<std::uint32_t>(in.right_capacity);
    const DeviceBuffer& left = in.left;
    const DeviceBuffer& right = in.right;
    const std::uint32_t width = in.width;
    if (variant.merge_path) {
      const std::uint64_t ept = variant.ept;
      for (const std::uint32_t upper : {0u, 1u}) {
        seq.run(upper ? "upper" : "lower", "ra_join_bounds", plan.rows(in.n + in.m, ept),
                {KernelArg::of(left), KernelArg::of(right), KernelArg::of(*lower_), KernelArg::of(*counts_),
                 KernelArg::of(n), KernelArg::of(m), KernelArg::of(width), KernelArg::of(lcap),
                 KernelArg::of(rcap), KernelArg::of(upper)});
      }
      scan_->run(seq, "scan", *counts_, *counts_, in.n);
      // A fixed grid strides over the steps; cover needs their number, so the total comes back first.
      std::uint64_t total = 0;
      if (!plan.fixed() || out.sized_by_total()) total = read_total(seq, in.n, out);
      const auto ocap = static_cast<std::uint32_t>(out.capacity());
      seq.run("expand", "ra_join_expand", plan.rows(in.n + total, ept),
              {KernelArg::of(left), KernelArg::of(right), KernelArg::of(*lower_), KernelArg::of(*counts_),
               KernelArg::of(out.tuples()), KernelArg::of(out.count()), KernelArg::of(n),
               KernelArg::of(width), KernelArg::of(lcap), KernelArg::of(rcap), KernelArg::of(ocap)});
      return;
    }
    const std::uint64_t local = variant.local;
    const std::uint64_t part = variant.partition;
    const auto parts = static_cast<std::uint32_t>((in.n + part - 1) / part);
    seq.run("partition", "ra_join_partition", LaunchShape{round_up(parts, local), local},
            {KernelArg::of(left), KernelArg::of(right), KernelArg::of(*bounds_), KernelArg::of(n),
             KernelArg::of(m), KernelArg::of(width), KernelArg::of(lcap), KernelArg::of(rcap),
             KernelArg::of(parts)});
    const LaunchShape per_partition = plan.rows(std::uint64_t{parts} * local);  // a work-group each
    seq.run("count", "ra_join_count", per_partition,
            {KernelArg::of(left), KernelArg::of(right), KernelArg::of(*bounds_), KernelArg::of(*counts_),
             KernelArg::of(n), KernelArg::of(width), KernelArg::of(lcap), KernelArg::of(rcap),
             KernelArg::of(parts)});
    scan_->run(seq, "scan", *counts_, *counts_, parts);
    if (out.sized_by_total()) read_total(seq, parts, out);
    const auto ocap = static_cast<std::uint32_t>(out.capacity());
    seq.run("join", "ra_join_write", per_partition,
            {KernelArg::of(left), KernelArg::of(right), KernelArg::of(*bounds_), KernelArg::of(*counts_),
             KernelArg::of(out.tuples()), KernelArg::of(out.count()), KernelArg::of(n), KernelArg::of(width),
             KernelArg::of(lcap), KernelArg::of(rcap), KernelArg::of(ocap), KernelArg::of(parts)});
  }

 private:
  // The scanned counts' total (behind the first `items` offsets), read back; reserved for where the output
  // is sized by it.
  std::uint64_t read_total(KernelSequence& seq, std::uint64_t items, JoinOutput& out) {
    seq.read(*total_, *counts_, 4, items * 4);
    const std::uint64_t total = *total_->as<std::uint32_t>();
    if (out.sized_by_total()) out.reserve(total);
    return total;
  }

  // Thrust's vectorised bounds, CUB's scan and an expansion of the pairs (vendor/cub/varex_cub.cu); AoS. It
  // writes the total and at most capacity() pairs: an output sized by the total that does not hold them
  // takes its size from the count and the call runs again.
  void run_cub(KernelSequence& seq, const PairOperands& in, JoinOutput& out) {
    const varex_vendor_table& cub = *vendor_library();
    const unsigned* left = vendor_words(engine_, in.left);
    const unsigned* right = vendor_words(engine_, in.right);
    const auto call = [&] {
      unsigned* tuples = vendor_words(engine_, out.tuples());
      unsigned* count = vendor_words(engine_, out.count());
      const std::uint64_t capacity = out.capacity();
      seq.vendor("thrust_join", vendor_scratch_, [&](void* temp, std::size_t* bytes, void* stream) {
        return cub.join_sorted(temp, bytes, left, in.n, right, in.m, static_cast<int>(in.width), tuples,
                               capacity, count, stream);
      });
    };
    call();
    if (!out.sized_by_total()) return;
    seq.read(*total_, out.count(), 4, 0);
    const std::uint64_t total = *total_->as<std::uint32_t>();
    if (total == out.capacity()) return;
    out.reserve(total);
    call();
  }

  Engine& engine_;
  std::unique_ptr<DeviceBuffer> counts_, lower_, bounds_;
  std::unique_ptr<DeviceScan> scan_;
  std::unique_ptr<HostBuffer> total_;
  VendorScratch vendor_scratch_{engine_};
};

// varex's own run's output (RowsOutput, the reference's size).
class RowsJoinOutput final : public JoinOutput {
 public:
  explicit RowsJoinOutput(RowsOutput& rows) : rows_(rows) {}
  DeviceBuffer& tuples() override { return rows_.tuple_buffer(); }
  DeviceBuffer& count() override { return rows_.count_buffer(); }
  std::uint64_t capacity() const override { return rows_.capacity(); }

 private:
  RowsOutput& rows_;
};

class JoinRun final : public VariantRun<RaJoinVariant> {
 public:
  JoinRun(Engine& engine, const datasets::WorkloadSpec& spec) : VariantRun(engine, "ra_join") {
    const auto [left, right] = materialise_relation_pair(spec);
    n_ = left.rows();
    m_ = right.rows();
    width_ = left.attributes();
    std::vector<std::uint32_t> reference = join_reference(left, right);
    const std::uint32_t out_width = 2 * width_ - 1;
    const std::uint64_t tuples = reference.size() / out_width;
    output_ = std::make_unique<RowsOutput>(engine, out_width, tuples, std::move(reference), /*counted=*/true,
                                           RowOrder::any(width_));
    inputs_ = std::make_unique<RelationPairInputs>(engine, left, right);
    kernels_ = std::make_unique<JoinKernels>(engine, n_);
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  void poison() override { output_->poison(); }

  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // Both relations read once, the output and its count written.
  std::uint64_t bytes_moved() const override { return (n_ + m_) * width_ * 4 + output_->bytes_written(); }
  std::uint64_t working_set_bytes() const override {
    return 2 * (n_ + m_) * width_ * 4 + output_->bytes_written() + 3 * (n_ + 1) * 4;
  }

 private:
  RaJoinVariant decode(const variants::Params& params) const override {
    return RaJoinVariant(params, engine_.device());
  }

  void run(const RaJoinVariant& variant, KernelSequence& seq) override {
    const TupleLayout layout = variant.layout;
    output_->set_layout(layout);
    const PairOperands in = inputs_->operands(layout);
    RowsJoinOutput out(*output_);
    kernels_->run(variant, seq, in, out);
  }

  std::uint64_t n_ = 0, m_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<RowsOutput> output_;
  std::unique_ptr<RelationPairInputs> inputs_;
  std::unique_ptr<JoinKernels> kernels_;
};

// On an application's relations (sorted by key, in the layout the binding gives, BoundRelationPair): the
// join is counted on the device and its total read back before the pairs are written, into an output of
// exactly that many tuples in the same layout, handed over with it. Joins of more than kMaxPairOutputTuples
// pairs are refused then; variants of the other layout (and the vendor call, on SoA relations) refused.
class JoinBound final : public VariantRun<RaJoinVariant, BoundRun>, private JoinOutput {
 public:
  JoinBound(Engine& engine, const Binding& binding)
      : VariantRun(engine, "ra_join"),
        pair_(engine, "ra_join", binding),
        kernels_(engine, pair_.n()),
        out_(engine, 2 * pair_.width() - 1, pair_.layout()) {}

  datasets::WorkloadClass workload_class() const override { return pair_.workload_class(); }

  std::map<std::string, std::string> fixed() const override {
    return {{"layout", layout_name(pair_.layout())}};
  }
  std::string refuses(const variants::Params& params) const override {
    const RaJoinVariant variant = decode(params);
    return pair_.refuses(variant.layout, variant.vendor);
  }

  DeviceResult take_result() override { return out_.take(OutputKind::RowsMultiset); }

 private:
  RaJoinVariant decode(const variants::Params& params) const override {
    return RaJoinVariant(params, engine_.device());
  }

  void run(const RaJoinVariant& variant, KernelSequence& seq) override {
    if (const std::string refused = pair_.refuses(variant.layout, variant.vendor); !refused.empty())
      throw UsageError("ra_join: " + refused);
    if (!out_.held()) out_.reserve(0);  // sized by the total before any pair is written
    kernels_.run(variant, seq, pair_.operands(), *this);
  }

  DeviceBuffer& tuples() override { return out_.tuples(); }
  DeviceBuffer& count() override { return out_.count(); }
  std::uint64_t capacity() const override { return out_.capacity(); }
  bool sized_by_total() const override { return true; }
  void reserve(std::uint64_t total) override {
    refuse_oversized_output("join", pair_.n(), pair_.m(), total);
    out_.reserve(total);
  }

  BoundRelationPair pair_;
  JoinKernels kernels_;
  BoundTuples out_;
};

}  // namespace

std::uint64_t join_size(const datasets::Relation& left, const datasets::Relation& right) {
  std::uint64_t size = 0;
  for_each_common_key(left, right,
                      [&](std::uint64_t i0, std::uint64_t i1, std::uint64_t j0, std::uint64_t j1) {
                        size += (i1 - i0) * (j1 - j0);
                      });
  return size;
}

std::vector<std::uint32_t> join_reference(const datasets::Relation& left, const datasets::Relation& right) {
  const std::uint32_t values = left.values();
  std::vector<std::uint32_t> out;
  out.reserve(join_size(left, right) * (1 + 2 * values));
  for_each_common_key(left, right,
                      [&](std::uint64_t i0, std::uint64_t i1, std::uint64_t j0, std::uint64_t j1) {
                        for (std::uint64_t i = i0; i < i1; ++i) {
                          for (std::uint64_t j = j0; j < j1; ++j) {
                            out.push_back(left.columns[0][i]);
                            for (std::uint32_t c = 1; c <= values; ++c) out.push_back(left.columns[c][i]);
                            for (std::uint32_t c = 1; c <= values; ++c) out.push_back(right.columns[c][j]);
                          }
                        }
                      });
  return out;
}

WorkloadDecl RaJoinOperator::declaration() const {
  return sorted_pair_declaration(datasets::SortOrder::ByKey);
}

variants::Space RaJoinOperator::space(const variants::SpaceContext& context) const {
  using variants::Value;
  std::vector<variants::Tunable> tunables{
      {"algorithm",
       variants::TunableKind::Compile,
       {Value{"partition"}, Value{"merge_path"}},
       Value{"partition"},
       "partition: the source's (even left partitions, each one's right range by binary search, a "
       "work-group per partition pair in local memory counts, a scan, the pairs written at the offsets); "
       "merge_path: merge-path searches over the two key arrays give each left key's matches, and over the "
       "scanned counts and the output positions the pairs (balanced whatever the skew)"},
      relation_layout(),
      {"partition",
       variants::TunableKind::Compile,
       {256, 512, 1024, 2048},
       1024,
       "algorithm=partition: left tuples per partition (a work-group's, staged in local memory)"},
      {"ept",
       variants::TunableKind::Compile,
       {2, 4, 8, 16},
       8,
       "algorithm=merge_path: merge steps per work-item (after one diagonal search)"},
      relation_local(context.device, variants::TunableKind::Launch,
                     "work-group size (partition: the work-items that share a partition)"),
      relation_grid(),
  };
  const std::uint64_t local_mem = context.device.local_mem;
  std::vector<variants::Constraint> constraints{
      {"partition sizes are tunables of algorithm=partition, ept of merge_path: the other keeps its default",
       [](const variants::Params& p) {
         return merge_path_of(p) ? variants::get_int(p, "partition") == 1024
                                 : variants::get_int(p, "ept") == 8;
       }},
      {"algorithm=partition: a partition (16 bytes per tuple), 256 staged output tuples (28 bytes each) and "
       "the scan's 1024 words fit the device's local memory",
       [local_mem](const variants::Params& p) {
         return local_mem == 0 || merge_path_of(p) ||
                static_cast<std::uint64_t>(variants::get_int(p, "partition")) * 16 + 256 * 28 + 1024 * 4 <=
                    local_mem;
       }},
  };
  std::vector<variants::Inactive> inactive;
  add_vendor_variant(context.device,
                     "a Thrust join: thrust::lower_bound and upper_bound of the left keys in the right ones, "
                     "cub::DeviceScan::ExclusiveSum, the pairs expanded by thrust::for_each_n",
                     tunables, inactive);
  return variants::Space("ra_join", std::move(tunables), std::move(constraints), std::move(inactive));
}

Defines RaJoinOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return RaJoinVariant(params, device).defines;
}

datasets::WorkloadSpec RaJoinOperator::workload(const WorkloadOptions& options) const {
  refuse_pair_query(name(), options);
  datasets::WorkloadSpec spec = sorted_pair_workload(name(), options, datasets::SortOrder::ByKey, same_rows);
  // rows x rows2 bounds the join; past the limit it is counted exactly.
  if (spec.rows() * relation_rows2(spec) > kMaxPairOutputTuples)
    refuse_oversized_output("join", spec, join_size_of(spec));
  return spec;
}

DeviceFootprint RaJoinOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t width = 1 + relation_values(spec);
  const std::uint64_t n = spec.rows(), m = relation_rows2(spec);
  const std::uint64_t out = join_size_of(spec) * (2 * width - 1) * 4;
  const std::uint64_t inputs = 2 * (n + m) * width * 4;  // both layouts
  return {inputs + out + 4 * (n + 1) * 4, std::max(out, std::max(n, m) * width * 4)};
}

std::unique_ptr<PreparedRun> RaJoinOperator::prepare(Engine& engine,
                                                     const datasets::WorkloadSpec& spec) const {
  return std::make_unique<JoinRun>(engine, spec);
}

std::unique_ptr<BoundRun> RaJoinOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  return std::make_unique<JoinBound>(engine, binding);
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_join(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaJoinOperator>());
}

}  // namespace varex::operators
