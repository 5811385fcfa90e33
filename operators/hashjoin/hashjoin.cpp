#include "operators/hashjoin/hashjoin.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/bound_run.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/workload_flags.hpp"
#include "harness/outputs/key_index.hpp"
#include "operators/common/hash/hash_columns.hpp"
#include "operators/common/hash/hash_common.hpp"
#include "operators/common/hash/hash_spaces.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DeviceResult;
using harness::KernelSequence;
using harness::KeyIndex;
using harness::LaunchPlan;
using harness::max_local;
using harness::PairsOutput;
using harness::PairsReference;
using harness::VariantRun;
namespace flags = harness::flags;
}  // namespace varex::operators

namespace varex::operators {

namespace {

// Probe rows are indexed with 32-bit integers in the kernels, and so are the pairs.
constexpr std::uint64_t kMaxPairs = 1ULL << 31;

datasets::JoinColumns materialise_join(const datasets::WorkloadSpec& spec) {
  const auto& p = spec.params;
  if (spec.generator == "join_keys") {
    return datasets::join_columns(spec.rows(), p.at("rows2").get<std::uint64_t>(),
                                  p.at("distinct").get<std::uint64_t>(), p.at("match_ratio").get<double>(),
                                  p.at("zipf").get<double>(), p.at("seed").get<std::uint64_t>());
  }
  if (spec.generator == "files") {
    datasets::JoinColumns c{datasets::load_int32_column(bytes_from_json(p.at("path"))),
                            datasets::load_int32_column(bytes_from_json(p.at("path2")))};
    if (c.build.size() != spec.rows() || c.probe.size() != p.at("rows2").get<std::uint64_t>())
      throw UsageError("input file changed while varex was running");
    return c;
  }
  throw UsageError("hashjoin cannot use workload generator '" + spec.generator + "'");
}

// Where the join writes its pairs: build rows and probe rows, two arrays of uint32 with room for capacity()
// pairs. varex's own run writes into its Pairs output, sized by the reference; a run on an application's
// columns into arrays of its own, which grow to the pairs the device counts.
class PairsTarget {
 public:
  virtual ~PairsTarget() = default;
  virtual DeviceBuffer& left() = 0;
  virtual DeviceBuffer& right() = 0;
  virtual std::uint64_t capacity() const = 0;
  // The pairs the device counted; whether the arrays hold them now (after growing, where they can).
  virtual bool count(std::uint64_t pairs) = 0;
};

// The join's kernels over a build and a probe column of `rows` and `rows2` keys, whoever owns them, with
// the table and the per-row scratch they need (the table allocated for the largest any variant asks for).
class JoinKernels {
 public:
  JoinKernels(Engine& engine, const DeviceBuffer& build, const DeviceBuffer& probe, std::uint64_t rows,
              std::uint64_t rows2)
      : engine_(engine), build_(build), probe_(probe), rows_(rows), rows2_(rows2) {
    const std::uint64_t slots = table_for(rows_, 25).slots();  // the largest table any variant asks for
    keys_ = engine.allocate((slots + 2) * 8);                  // {key, start of its build rows} per slot
    counts_ = engine.allocate((slots + 2) * 4);
    offsets_ = engine.allocate((slots + 3) * 4);
    status_ = engine.allocate(8);
    counter_ = engine.allocate(4);
    lookup_ = engine.allocate(std::max<std::uint64_t>(rows_, 1) * 4);
    matches_ = engine.allocate(std::max<std::uint64_t>(rows2_, 1) * 4);
    positions_ = engine.allocate((rows2_ + 1) * 4);
    host_words_ = engine.allocate_host(8);
    scan_ = std::make_unique<DeviceScan>(engine, std::max(slots + 2, rows2_ + 1));
  }

  // Bytes of the table and the per-row scratch (the partitioned plan's copies aside).
  std::uint64_t scratch_bytes() const {
    std::uint64_t bytes = 0;
    for (const auto* b : {&keys_, &counts_, &offsets_, &lookup_, &matches_, &positions_})
      bytes += (*b)->bytes();
    return bytes;
  }

  void run(const HashJoinVariant& variant, KernelSequence& seq, PairsTarget& out) {
    if (variant.plan == JoinPlan::Partitioned) {
      run_partitioned(seq, variant, out);
    } else if (variant.plan != JoinPlan::Unique || !run_unique(seq, variant, out)) {
      run_source(seq, variant, out);
    }
  }

 private:
  // Ocelot's sequence: build, count per slot, prefix sum, lookup table; count per probe row, prefix sum,
  // the pairs in probe-row order.
  void run_source(KernelSequence& seq, const HashJoinVariant& variant, PairsTarget& out) {
    const TableGeometry table = table_for(rows_, variant.load);
    const LaunchPlan& plan = variant.launch;
    const std::uint64_t batch = variant.batch;
    const bool preprocess = variant.preprocess;
    if (preprocess && !slots_) slots_ = engine_.allocate(std::max<std::uint64_t>(rows2_, 1) * 4);
    const auto n = static_cast<std::uint32_t>(rows_);
    const auto n2 = static_cast<std::uint32_t>(rows2_);
    const KernelArg mask = KernelArg::of(table.mask);
    const KernelArg shift = KernelArg::of(table.shift);
    const std::uint64_t slots = table.slots();

    // Build side: the table, the build rows per slot, their prefix sum and the rows grouped by slot.
    seq.run("init_table", "init_table", plan.cover(slots), {arg(*keys_), mask});
    seq.run("init_table", "fill_int", plan.cover(slots + 1),
            {arg(*counts_), KernelArg::of(0), KernelArg::of(static_cast<std::uint32_t>(slots + 1))});
    seq.run("build", "build_pessimistic", plan.cover(rows_),
            {arg(*keys_), arg(build_), arg(*status_), arg(*status_), KernelArg::of(0u), KernelArg::of(n),
             mask, shift});
    seq.run("count_cardinality", "count_cardinality", plan.cover(rows_),
            {arg(*keys_), arg(build_), arg(*counts_), KernelArg::of(n), mask, shift});
    scan_->run(seq, "prefix_sum_build", *counts_, *offsets_, slots + 1);
    seq.run("place_offsets", "place_offsets", plan.cover(slots + 2),
            {arg(*keys_), arg(*offsets_), KernelArg::of(static_cast<std::uint32_t>(slots + 2))});
    seq.run("build_lookup", "build_lookup", plan.cover(rows_),
            {arg(*keys_), arg(build_), arg(*counts_), arg(*lookup_), KernelArg::of(n), mask, shift});

    // Probe side: matches per probe row, their prefix sum, the pairs.
    if (preprocess) {
      seq.run("preprocess_ht", "preprocess_ht", plan.rows(rows2_),
              {arg(*keys_), arg(probe_), arg(*slots_), KernelArg::of(n2), mask, shift});
    }
    const DeviceBuffer& probe_in = preprocess ? *slots_ : probe_;
    seq.run("hj_count", "hj_count", plan.rows(rows2_, batch),
            {arg(*keys_), arg(probe_in), arg(*matches_), KernelArg::of(n2), mask, shift});
    scan_->run(seq, "prefix_sum_probe", *matches_, *positions_, rows2_);
    // The host learns the result's size before the pairs are written (the source allocates it there).
    seq.read(*host_words_, *positions_, 4, rows2_ * 4);
    const std::uint32_t pairs = host_words_->as<std::uint32_t>()[0];
    if (out.count(pairs)) {
      seq.run("hj_exec", "hj_exec", plan.rows(rows2_, batch),
              {arg(*keys_), arg(probe_in), arg(*lookup_), arg(*positions_), arg(out.left()), arg(out.right()),
               KernelArg::of(n2), mask, shift});
    }
  }

  // The single pass for unique build keys: a table of packed {key, row} slots, built while looking for a
  // duplicate; without one, each probe row is resolved once and its pair appended through one atomic per
  // work-group tile. A duplicate (found during the build) returns false: the caller runs the source's
  // sequence, whose time then counts on top.
  bool run_unique(KernelSequence& seq, const HashJoinVariant& variant, PairsTarget& out) {
    const TableGeometry table = table_for(rows_, variant.load);
    const LaunchPlan& plan = variant.launch;
    const std::uint64_t batch = variant.batch;
    const KernelArg mask = KernelArg::of(table.mask);
    const KernelArg shift = KernelArg::of(table.shift);
    seq.run("init_table", "init_table", plan.cover(table.slots()), {arg(*keys_), mask});
    seq.fill("init_table", *status_, 0, 8);  // duplicate flag, overflow count
    seq.fill("init_table", *counter_, 0, 4);
    seq.run("build", "build_unique", plan.cover(rows_),
            {arg(*keys_), arg(build_), arg(*status_), KernelArg::of(static_cast<std::uint32_t>(rows_)), mask,
             shift});
    seq.read(*host_words_, *status_, 8, 0);
    const auto* status = host_words_->as<std::uint32_t>();
    if (status[0] || status[1]) return false;
    const auto probe = [&] {
      seq.run("probe", "probe_unique", plan.rows(rows2_, batch),
              {arg(*keys_), arg(probe_), arg(out.left()), arg(out.right()), arg(*counter_),
               KernelArg::of(static_cast<std::uint32_t>(rows2_)), mask, shift, capacity(out)});
    };
    probe();
    read_pair_count(seq, out, "probe", probe);
    return true;
  }

  // The radix-partitioned join: both sides partitioned by the top `radix_bits` bits of their keys'
  // multiplicative hash, then each partition joined in local memory (join_partitions).
  void run_partitioned(KernelSequence& seq, const HashJoinVariant& variant, PairsTarget& out) {
    const std::uint32_t bits = variant.radix_bits;
    const std::uint32_t parts = 1u << bits;
    const std::uint64_t local = variant.partition.local;
    if (!partitioned_) {
      for (auto* b : {&part_build_keys_, &part_build_rows_})
        *b = engine_.allocate(std::max<std::uint64_t>(rows_, 1) * 4);
      for (auto* b : {&part_probe_keys_, &part_probe_rows_})
        *b = engine_.allocate(std::max<std::uint64_t>(rows2_, 1) * 4);
      const std::uint32_t most = variant.max_parts;
      partition_build_ = std::make_unique<RadixPartition>(engine_, rows_, most);
      partition_probe_ = std::make_unique<RadixPartition>(engine_, rows2_, most);
      partitioned_ = true;
    }
    constexpr std::uint32_t kFibonacci = 0x9E3779B1u;
    partition_build_->run(seq, "partition_build", build_, build_, true, *part_build_keys_, *part_build_rows_,
                          rows_, kFibonacci, 32 - bits, parts, variant.partition);
    partition_probe_->run(seq, "partition_probe", probe_, probe_, true, *part_probe_keys_, *part_probe_rows_,
                          rows2_, kFibonacci, 32 - bits, parts, variant.partition);
    const auto join = [&] {
      seq.run("join_partitions", "join_partitions", {std::uint64_t{parts} * local, local},
              {arg(*part_build_keys_), arg(*part_build_rows_), arg(partition_build_->offsets()),
               KernelArg::of(partition_build_->stride()), arg(*part_probe_keys_), arg(*part_probe_rows_),
               arg(partition_probe_->offsets()), KernelArg::of(partition_probe_->stride()), arg(out.left()),
               arg(out.right()), arg(*counter_), capacity(out), KernelArg::of(parts)});
    };
    seq.fill("join_partitions", *counter_, 0, 4);
    join();
    read_pair_count(seq, out, "join_partitions", join);
  }

  // The pairs an appending kernel counted. Where they did not fit and the target grew to hold them, the
  // counter starts again and the kernel appends them anew (its time counts on top).
  void read_pair_count(KernelSequence& seq, PairsTarget& out, const std::string& label,
                       const std::function<void()>& append) {
    const std::uint64_t room = out.capacity();
    seq.read(*host_words_, *counter_, 4, 0);
    const std::uint32_t pairs = host_words_->as<std::uint32_t>()[0];
    if (!out.count(pairs) || pairs <= room) return;
    seq.fill(label, *counter_, 0, 4);
    append();
    seq.read(*host_words_, *counter_, 4, 0);
  }

  static KernelArg capacity(const PairsTarget& out) {
    return KernelArg::of(static_cast<std::uint32_t>(std::min<std::uint64_t>(out.capacity(), kMaxPairs)));
  }

  static KernelArg arg(const DeviceBuffer& b) { return KernelArg::of(b); }

  Engine& engine_;
  const DeviceBuffer& build_;
  const DeviceBuffer& probe_;
  std::uint64_t rows_, rows2_;
  std::unique_ptr<HostBuffer> host_words_;
  std::unique_ptr<DeviceBuffer> keys_, counts_, offsets_, status_, counter_, lookup_, matches_, positions_,
      slots_;
  std::unique_ptr<DeviceScan> scan_;
  // The partitioned join's sides, allocated when a variant first asks for them.
  bool partitioned_ = false;
  std::unique_ptr<DeviceBuffer> part_build_keys_, part_build_rows_, part_probe_keys_, part_probe_rows_;
  std::unique_ptr<RadixPartition> partition_build_, partition_probe_;
};

// varex's own run: the Pairs output, with room for the reference's pairs.
class OutputPairs final : public PairsTarget {
 public:
  explicit OutputPairs(PairsOutput& out) : out_(out) {}
  DeviceBuffer& left() override { return out_.left_buffer(); }
  DeviceBuffer& right() override { return out_.right_buffer(); }
  std::uint64_t capacity() const override { return out_.capacity(); }
  bool count(std::uint64_t pairs) override {
    out_.set_count(pairs);
    return pairs <= out_.capacity();
  }

 private:
  PairsOutput& out_;
};

// The join's contract (HashJoinOperator::contract) over a run's keys and pair arrays; the caller says how its
// count completes the result (ContractBuffers::finish). The keys are only read.
ContractBuffers join_contract(const DeviceBuffer& build, std::uint64_t build_rows, const DeviceBuffer& probe,
                              std::uint64_t probe_rows, DeviceBuffer& left, DeviceBuffer& right,
                              std::uint64_t capacity, ContractCounter& count) {
  ContractBuffers c;
  c.buffers = {{"build", const_cast<DeviceBuffer*>(&build)},
               {"probe", const_cast<DeviceBuffer*>(&probe)},
               {"left", &left},
               {"right", &right},
               {"count", &count.word()}};
  c.scalars = {{"build_rows", static_cast<std::int64_t>(build_rows)},
               {"probe_rows", static_cast<std::int64_t>(probe_rows)},
               {"capacity", static_cast<std::int64_t>(capacity)}};
  c.zeroed = {&count.word()};
  return c;
}

class HashJoinRun final : public VariantRun<HashJoinVariant> {
 public:
  HashJoinRun(Engine& engine, const datasets::WorkloadSpec& spec) : VariantRun(engine, "hash") {
    datasets::JoinColumns columns = materialise_join(spec);
    rows_ = columns.build.size();
    rows2_ = columns.probe.size();
    PairsReference reference = join_reference(columns.build, columns.probe);
    if (reference.pairs >= kMaxPairs) {
      throw UsageError("input too large: the join produces " + std::to_string(reference.pairs) +
                       " pairs, more than the 2^31 varex handles");
    }
    const DeviceInfo& device = engine.device();
    if (device.max_alloc && std::max<std::uint64_t>(reference.pairs, 1) * 4 > device.max_alloc) {
      throw UsageError("input too large: the join's " + std::to_string(reference.pairs) +
                       " pairs do not fit in one " + "buffer of " + device.id);
    }
    host_build_ = upload_source(columns.build);
    host_probe_ = upload_source(columns.probe);
    columns = {};
    build_ = engine.allocate(std::max<std::uint64_t>(rows_, 1) * 4);
    probe_ = engine.allocate(std::max<std::uint64_t>(rows2_, 1) * 4);
    kernels_ = std::make_unique<JoinKernels>(engine, *build_, *probe_, rows_, rows2_);
    pairs_ = std::make_unique<PairsOutput>(engine, std::move(reference));
    target_ = std::make_unique<OutputPairs>(*pairs_);
    restore_inputs();
  }

  double h2d_ms() const override { return h2d_ms_; }

  void restore_inputs() override {
    h2d_ms_ = 0;
    if (rows_) h2d_ms_ += engine_.upload(*build_, 0, *host_build_, rows_ * 4)->elapsed_ms();
    if (rows2_) h2d_ms_ += engine_.upload(*probe_, 0, *host_probe_, rows2_ * 4)->elapsed_ms();
  }

  void poison() override { pairs_->poison(); }

  Collected collect(Check how) override { return harness::collect(*pairs_, how); }

  Digest reference() const override { return pairs_->reference(); }
  std::uint64_t bytes_moved() const override { return rows_ * 4 + rows2_ * 4 + pairs_->bytes_written(); }
  std::uint64_t working_set_bytes() const override {
    return pairs_->device_bytes() + build_->bytes() + probe_->bytes() + kernels_->scratch_bytes();
  }

  std::optional<ContractBuffers> contract_buffers() override {
    if (!counter_) counter_ = std::make_unique<ContractCounter>(engine_);
    ContractBuffers c = join_contract(*build_, rows_, *probe_, rows2_, pairs_->left_buffer(),
                                      pairs_->right_buffer(), pairs_->capacity(), *counter_);
    c.finish = [this] {
      pairs_->set_count(counter_->read());
      return true;  // more pairs than the reference's do not verify
    };
    return c;
  }

 private:
  HashJoinVariant decode(const variants::Params& params) const override {
    return HashJoinVariant(params, engine_.device());
  }

  void run(const HashJoinVariant& variant, KernelSequence& seq) override {
    kernels_->run(variant, seq, *target_);
  }

  std::unique_ptr<HostBuffer> upload_source(const std::vector<std::int32_t>& column) {
    auto host = engine_.allocate_host(std::max<std::size_t>(column.size(), 1) * 4);
    if (!column.empty()) std::memcpy(host->data(), column.data(), column.size() * 4);
    return host;
  }

  std::uint64_t rows_ = 0, rows2_ = 0;
  std::unique_ptr<HostBuffer> host_build_, host_probe_;
  std::unique_ptr<DeviceBuffer> build_, probe_;
  std::unique_ptr<JoinKernels> kernels_;  // after build_ and probe_, which it reads
  std::unique_ptr<PairsOutput> pairs_;
  std::unique_ptr<OutputPairs> target_;
  std::unique_ptr<ContractCounter> counter_;  // the pairs another kernel counts (contract_buffers)
  double h2d_ms_ = 0;
};

// The pairs of a join on an application's columns, in arrays of the bound run's own: first with room for
// one pair per probe row (unique build keys), grown to the pairs the device counts. The source plan counts
// before it writes; an appending plan whose pairs did not fit appends them again into the grown arrays.
class GrowingPairs final : public PairsTarget {
 public:
  GrowingPairs(Engine& engine, std::uint64_t initial) : engine_(engine), initial_(initial) {}
  DeviceBuffer& left() override { return *left_; }
  DeviceBuffer& right() override { return *right_; }
  std::uint64_t capacity() const override { return capacity_; }
  bool count(std::uint64_t pairs) override {
    pairs_ = pairs;
    if (pairs > capacity_) allocate(pairs);
    return true;
  }

  // Arrays for the next execution, where the last ones were handed over.
  void ensure() {
    if (!left_) allocate(initial_);
  }

  // build rows, probe rows; `rows` the pairs.
  DeviceResult take() {
    ensure();
    DeviceResult result{OutputKind::Pairs, {}, pairs_};
    result.buffers.push_back(std::move(left_));
    result.buffers.push_back(std::move(right_));
    result.parts = {{0, 0, pairs_ * 4, 4}, {1, 0, pairs_ * 4, 4}};
    capacity_ = pairs_ = 0;
    return result;
  }

 private:
  void allocate(std::uint64_t pairs) {
    if (pairs >= kMaxPairs) {
      throw UsageError("the join produces " + std::to_string(pairs) +
                       " pairs, more than the 2^31 varex handles");
    }
    const DeviceInfo& device = engine_.device();
    capacity_ = std::max<std::uint64_t>(pairs, 1);
    if (device.max_alloc && capacity_ * 4 > device.max_alloc) {
      throw UsageError("the join's " + std::to_string(pairs) + " pairs do not fit in one buffer of " +
                       device.id);
    }
    left_ = engine_.allocate(capacity_ * 4);
    right_ = engine_.allocate(capacity_ * 4);
  }

  Engine& engine_;
  std::uint64_t initial_;
  std::uint64_t capacity_ = 0, pairs_ = 0;
  std::unique_ptr<DeviceBuffer> left_, right_;
};

// On an application's columns: the build and probe keys as int32 arrays, read in place (the join's
// kernels read no row past the counts, so no padding is needed); the table and scratch are the run's own.
class HashJoinBound final : public VariantRun<HashJoinVariant, BoundRun> {
 public:
  HashJoinBound(Engine& engine, const Binding& binding)
      : VariantRun(engine, "hash"),
        build_(*binding.inputs[0]),
        probe_(*binding.inputs[1]),
        rows_(binding.rows[0]),
        rows2_(binding.rows[1]),
        pairs_(engine, rows2_) {
    const char* const sides[] = {"build", "probe"};
    for (std::size_t i = 0; i < 2; ++i) {
      const std::uint64_t rows = binding.rows[i];
      if (rows >= kMaxPairs)
        throw UsageError(std::string("hashjoin handles fewer than 2^31 rows per side (") + sides[i] + ")");
      if (binding.inputs[i]->bytes() < rows * 4)
        throw UsageError(std::string("the ") + sides[i] + " side's buffer holds " +
                         std::to_string(binding.inputs[i]->bytes()) + " bytes, " + std::to_string(rows) +
                         " int32 keys need " + std::to_string(rows * 4));
    }
    kernels_ = std::make_unique<JoinKernels>(engine, *binding.inputs[0], *binding.inputs[1], rows_, rows2_);
  }

  // The operator's class (datasets::default_class) from what the call knows: the rows of both sides.
  datasets::WorkloadClass workload_class() const override {
    datasets::WorkloadClass c;
    c.set_scale("rows", rows_, datasets::ScaleKind::Count);
    c.set_scale("rows2", rows2_, datasets::ScaleKind::Count);
    return c;
  }

  DeviceResult take_result() override { return pairs_.take(); }

  // The other kernels count every pair and write those below `capacity`: where more were counted, the
  // arrays grow to hold them and the kernels run again.
  std::optional<ContractBuffers> contract_buffers() override {
    pairs_.ensure();
    if (!counter_) counter_ = std::make_unique<ContractCounter>(engine_);
    ContractBuffers c = join_contract(build_, rows_, probe_, rows2_, pairs_.left(), pairs_.right(),
                                      pairs_.capacity(), *counter_);
    c.finish = [this] {
      const std::uint32_t pairs = counter_->read();
      const bool fitted = pairs <= pairs_.capacity();
      pairs_.count(pairs);
      return fitted;
    };
    return c;
  }

 private:
  HashJoinVariant decode(const variants::Params& params) const override {
    return HashJoinVariant(params, engine_.device());
  }

  void run(const HashJoinVariant& variant, KernelSequence& seq) override {
    pairs_.ensure();
    if (rows_ == 0 || rows2_ == 0) {
      pairs_.count(0);  // an empty side: no pairs, and no kernel reads the caller's buffers
      return;
    }
    kernels_->run(variant, seq, pairs_);
  }

  const DeviceBuffer& build_;
  const DeviceBuffer& probe_;
  std::uint64_t rows_, rows2_;
  GrowingPairs pairs_;
  std::unique_ptr<JoinKernels> kernels_;
  std::unique_ptr<ContractCounter> counter_;  // the pairs another kernel counts (contract_buffers)
};

JoinPlan hashjoin_plan_named(const std::string& plan) {
  return plan == "partitioned" ? JoinPlan::Partitioned
         : plan == "unique"    ? JoinPlan::Unique
                               : JoinPlan::Source;
}

}  // namespace

HashJoinVariant::HashJoinVariant(const variants::Params& params, const DeviceInfo& device)
    : HashVariant(params, device, static_cast<std::uint32_t>(variants::get_int(params, "radix_bits"))),
      plan(hashjoin_plan_named(variants::get_string(params, "plan"))),
      batch(static_cast<std::uint64_t>(variants::get_int(params, "batch"))),
      preprocess(variants::get_string(params, "preprocess") == "on"),
      lookup_local(variants::get_string(params, "lookup") == "local"),
      append_group(variants::get_string(params, "append") == "group"),
      radix_bits(static_cast<std::uint32_t>(variants::get_int(params, "radix_bits"))) {
  defines.push_back({"HASH_JOIN", "1"});
  defines.push_back({"BATCH", std::to_string(batch)});
  defines.push_back({"LOOKUP_LOCAL", lookup_local ? "1" : "0"});
  defines.push_back({"PREPROCESS", preprocess ? "1" : "0"});
  defines.push_back({"JOIN_SLOTS", std::to_string(join_slots(device))});
  defines.push_back({"APPEND_GROUP", append_group ? "1" : "0"});
}

std::uint64_t join_slots(const DeviceInfo& device) {
  const std::uint64_t local_mem = device.local_mem ? device.local_mem : 32768;
  const std::uint64_t scratch = 4 * max_local(device) + 64;  // wg_reserve's scan
  const std::uint64_t room = local_mem > scratch ? (local_mem - scratch) / 8 : 0;
  return std::clamp<std::uint64_t>(std::bit_floor(std::max<std::uint64_t>(room, 1)), 64, 4096);
}

PairsReference join_reference(const std::vector<std::int32_t>& build,
                              const std::vector<std::int32_t>& probe) {
  PairsReference r;
  std::vector<std::pair<std::int32_t, std::uint32_t>> by_key(build.size());
  for (std::uint32_t i = 0; i < build.size(); ++i) by_key[i] = {build[i], i};
  std::sort(by_key.begin(), by_key.end());
  r.rows.resize(build.size());
  std::vector<std::int32_t> keys;       // distinct build keys, ascending: set s holds the rows of keys[s]
  std::vector<std::uint64_t> row_sums;  // sum of the build rows of each key, modulo 2^64
  for (std::size_t i = 0; i < by_key.size(); ++i) {
    if (i == 0 || by_key[i].first != by_key[i - 1].first) {
      keys.push_back(by_key[i].first);
      r.set_begin.push_back(i);
      row_sums.push_back(0);
    }
    r.rows[i] = by_key[i].second;
    row_sums.back() += by_key[i].second;
  }
  r.set_begin.push_back(by_key.size());
  by_key = {};
  const KeyIndex index(keys);
  static_assert(KeyIndex::kAbsent == PairsReference::kNone);
  r.right_set.resize(probe.size());
  std::atomic<std::uint64_t> pairs{0}, checksum{0};
  datasets::parallel_rows(probe.size(), [&](std::uint64_t b, std::uint64_t e) {
    std::uint64_t local_pairs = 0, local_checksum = 0;
    for (std::uint64_t j = b; j < e; ++j) {
      const std::uint32_t k = index.find(probe[j]);
      r.right_set[j] = k;
      if (k == KeyIndex::kAbsent) continue;
      const std::uint64_t count = r.set_begin[k + 1] - r.set_begin[k];
      local_pairs += count;
      // sum over the key's build rows b of (b * 1000003 + j)
      local_checksum += row_sums[k] * 1000003ULL + count * j;
    }
    pairs += local_pairs;
    checksum += local_checksum;
  });
  r.pairs = pairs;
  r.digest = {r.pairs, checksum};
  return r;
}

variants::Space HashJoinOperator::space(const variants::SpaceContext& context) const {
  return hashjoin_space(context);
}

Defines HashJoinOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return HashJoinVariant(params, device).defines;
}

std::optional<ContractDecl> HashJoinOperator::contract() const {
  return ContractDecl{
      {"build", "probe", "left", "right", "count"},
      {"build_rows", "probe_rows", "capacity"},
      "build, probe: the two sides' int32 keys (build_rows and probe_rows of them); every pair "
      "of rows with equal keys is a result: the kernels add 1 to count (a uint32, 0 before "
      "each run) for each, and write the pair's build row into left and its probe row into "
      "right at the position count had, where it is below capacity (the reference's pairs); "
      "the pairs are compared in any order"};
}

WorkloadDecl HashJoinOperator::declaration() const {
  WorkloadDecl d;
  const std::string keys = "one int32 key per line, or little-endian int32 in a file named *.bin";
  d.inputs = {
      {"build", "int32 keys", "distinct keys, each repeated rows/distinct times, seeded", keys},
      {"probe", "int32 keys", "keys of the build side (match ratio) or absent ones; uniform or Zipf", keys}};
  d.flags = {flags::input("Read the build side's keys from FILE (with --input2)"),
             {"input2", "FILE", "Read the probe side's keys from FILE (with --input)"},
             flags::rows("Generated build rows (an integer or 2^N; default: four times the largest device "
                         "cache)"),
             {"rows2", "N", "Generated probe rows (default: 4 x the build rows)", datasets::ScaleKind::Count,
              /*sizes_input=*/true},
             flags::distinct("Distinct build keys, 1 to the build rows (default: all unique)"),
             {"match-ratio", "X", "Share of probe rows that find a partner, 0 to 1 (default 1)",
              datasets::ScaleKind::Fraction},
             flags::zipf(),
             flags::seed()};
  d.output = OutputKind::Pairs;
  return d;
}

datasets::WorkloadSpec HashJoinOperator::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec;
  spec.op = name();
  const auto input = options.text("input"), input2 = options.text("input2");
  if (input || input2) {
    if (!input || !input2)
      throw UsageError(
          "hashjoin reads its build side from --input and its probe side from --input2: give both");
    for (const char* generated : {"distinct", "match-ratio", "zipf", "rows2"}) {
      if (options.text(generated))
        throw UsageError(std::string("--") + generated +
                         " describes generated keys; hashjoin reads files here");
    }
    const std::string path = std::filesystem::absolute(*input).string();
    const std::string path2 = std::filesystem::absolute(*input2).string();
    spec.generator = "files";
    spec.params = {{"path", bytes_json(path)},
                   {"path2", bytes_json(path2)},
                   {"rows", datasets::load_int32_column(path).size()},
                   {"rows2", datasets::load_int32_column(path2).size()},
                   {"fingerprint", datasets::file_fingerprint(path)},
                   {"fingerprint2", datasets::file_fingerprint(path2)}};
  } else {
    if (!options.count("rows")) throw std::logic_error("hashjoin: generated workloads need a row count");
    const std::uint64_t rows = *options.count("rows");
    const std::uint64_t distinct = options.count("distinct").value_or(rows);
    const double match = options.number("match-ratio").value_or(1.0);
    const double zipf = options.number("zipf").value_or(0.0);
    if (rows > 0 && (distinct < 1 || distinct > rows))
      throw UsageError("--distinct must lie between 1 and the build side's rows (" + std::to_string(rows) +
                       ")");
    if (!(match >= 0.0 && match <= 1.0)) throw UsageError("--match-ratio must lie between 0 and 1");
    if (!(zipf >= 0.0 && zipf <= 10.0)) throw UsageError("--zipf must lie between 0 and 10");
    spec.generator = "join_keys";
    spec.params = {{"rows", rows},         {"rows2", options.count("rows2").value_or(4 * rows)},
                   {"distinct", distinct}, {"match_ratio", match},
                   {"zipf", zipf},         {"seed", options.seed()}};
  }
  for (const char* side : {"rows", "rows2"}) {
    if (spec.params.at(side).get<std::uint64_t>() >= kMaxPairs) {
      throw UsageError(std::string("input too large: hashjoin handles fewer than 2^31 rows per side (") +
                       side + ")");
    }
  }
  return spec;
}

DeviceFootprint HashJoinOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t rows = spec.rows();
  const std::uint64_t rows2 = spec.params.at("rows2").get<std::uint64_t>();
  // The pairs are known only once the reference is computed; a generated workload gives an estimate.
  double per_probe = 1.0;
  if (spec.generator == "join_keys") {
    const auto distinct = std::max<std::uint64_t>(spec.params.at("distinct").get<std::uint64_t>(), 1);
    per_probe = spec.params.at("match_ratio").get<double>() * static_cast<double>(rows) /
                static_cast<double>(distinct);
  }
  const auto pairs = static_cast<std::uint64_t>(per_probe * static_cast<double>(rows2));
  const std::uint64_t slots = table_for(rows, 25).slots();
  // The sides and their partitioned copies, matches and positions, the table, the pairs.
  const std::uint64_t total = rows * 16 + rows2 * 24 + slots * 12 + pairs * 8;
  return {total, std::max({rows2 * 4, slots * 4, pairs * 4})};
}

std::unique_ptr<PreparedRun> HashJoinOperator::prepare(Engine& engine,
                                                       const datasets::WorkloadSpec& spec) const {
  return std::make_unique<HashJoinRun>(engine, spec);
}

std::unique_ptr<BoundRun> HashJoinOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  return std::make_unique<HashJoinBound>(engine, binding);
}

}  // namespace varex::operators

namespace varex::operators {

void register_hashjoin(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<HashJoinOperator>());
}

}  // namespace varex::operators
