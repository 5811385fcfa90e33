#include "operators/groupby/groupby.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

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
using harness::group_digest;
using harness::GroupAggregates;
using harness::GroupReference;
using harness::GroupsOutput;
using harness::KernelSequence;
using harness::LaunchPlan;
using harness::max_local;
using harness::round_up;
using harness::VariantRun;
namespace flags = harness::flags;
}  // namespace varex::operators

namespace varex::operators {

namespace {

constexpr std::uint64_t kGroupByMaxRows = 1ULL << 31;
constexpr std::uint64_t kRegisters = 1ULL << kSketchBits;
// Rows per tile of the partitioned aggregation (AGG_TILE).
constexpr std::uint64_t kAggregateTile = 65536;

datasets::GroupColumns materialise_groups(const datasets::WorkloadSpec& spec) {
  const auto& p = spec.params;
  if (spec.generator == "group_keys") {
    return datasets::group_columns(spec.rows(), p.at("distinct").get<std::uint64_t>(),
                                   p.at("zipf").get<double>(), p.at("seed").get<std::uint64_t>());
  }
  if (spec.generator == "file") {
    const auto rows = datasets::load_key_value_rows(bytes_from_json(p.at("path")));
    if (rows.size() != spec.rows()) throw UsageError("input file changed while varex was running");
    datasets::GroupColumns c;
    c.keys.reserve(rows.size());
    c.values.reserve(rows.size());
    for (const auto& [k, v] : rows) {
      c.keys.push_back(k);
      c.values.push_back(v);
    }
    return c;
  }
  throw UsageError("groupby cannot use workload generator '" + spec.generator + "'");
}

// Groups a work-group aggregates in local memory (LOCAL_GROUPS): 20 bytes each, within a device's local
// memory with room to spare.
std::uint64_t groupby_local_groups(const DeviceInfo& device) {
  const std::uint64_t local_mem = device.local_mem ? device.local_mem : 32768;
  return std::min<std::uint64_t>(1024, std::bit_floor(std::max<std::uint64_t>(local_mem / 40, 1)));
}

GroupAggregation groupby_aggregation_named(const std::string& agg) {
  return agg == "local"         ? GroupAggregation::Local
         : agg == "registers"   ? GroupAggregation::Registers
         : agg == "warp"        ? GroupAggregation::Warp
         : agg == "partitioned" ? GroupAggregation::Partitioned
                                : GroupAggregation::Global;
}

// The group-by's result buffers in the Groups output kind's layout, whoever owns them: per group its key,
// COUNT, SUM (64-bit), MIN, MAX and extent, with room for `group_capacity` groups; per input row its group
// id.
struct GroupBuffers {
  DeviceBuffer& keys;
  DeviceBuffer& counts;
  DeviceBuffer& sums;
  DeviceBuffer& mins;
  DeviceBuffer& maxs;
  DeviceBuffer& extents;
  DeviceBuffer& group_ids;
  std::uint64_t group_capacity;
};

// groupby's contract (GroupByOperator::contract) over a run's columns and group buffers; the caller says how
// the count completes the result (ContractBuffers::finish). The columns are only read.
ContractBuffers group_contract(const DeviceBuffer& keys, const DeviceBuffer& values, std::uint64_t rows,
                               const GroupBuffers& out, ContractCounter& groups) {
  ContractBuffers c;
  c.buffers = {{"keys", const_cast<DeviceBuffer*>(&keys)},
               {"values", const_cast<DeviceBuffer*>(&values)},
               {"group_keys", &out.keys},
               {"counts", &out.counts},
               {"sums", &out.sums},
               {"mins", &out.mins},
               {"maxs", &out.maxs},
               {"extents", &out.extents},
               {"group_ids", &out.group_ids},
               {"groups", &groups.word()}};
  c.scalars = {{"rows", static_cast<std::int64_t>(rows)},
               {"capacity", static_cast<std::int64_t>(out.group_capacity)}};
  c.zeroed = {&groups.word()};
  return c;
}

// The rows' group ids with the slack host padding runs the extents kernel over: the rows rounded up to the
// device's largest work-group.
std::uint64_t group_row_capacity(std::uint64_t rows, const DeviceInfo& device) {
  return round_up(std::max<std::uint64_t>(rows, 1), max_local(device));
}

// Room for `groups` groups and a spare one, rounded up to the largest work-group (init_aggregates pads).
std::uint64_t group_capacity_for(std::uint64_t groups, const DeviceInfo& device) {
  return round_up(groups + 1, max_local(device));
}

// The slack rows of the group ids carry the id of the spare group, the last of `group_capacity`.
void mark_slack_rows(Engine& engine, DeviceBuffer& group_ids, std::uint64_t rows, std::uint64_t row_capacity,
                     std::uint64_t group_capacity) {
  if (row_capacity > rows) {
    engine
        .fill(group_ids, static_cast<std::uint32_t>(group_capacity - 1), rows * 4, (row_capacity - rows) * 4)
        ->elapsed_ms();
  }
}

// The group-by's kernels over a key and a value column of `rows`, whoever owns them, with the table and
// the scratch they need (the table allocated for the largest any variant asks for).
class GroupByKernels {
 public:
  GroupByKernels(Engine& engine, const DeviceBuffer& keys, const DeviceBuffer& values, std::uint64_t rows)
      : engine_(engine), keys_in_(keys), values_in_(values), rows_(rows) {
    const std::uint64_t slots = table_for(rows_, 25).slots();  // the largest table any variant asks for
    table_ = engine.allocate((slots + 2) * 4);
    ids_ = engine.allocate((slots + 3) * 4);
    slot_rows_ = engine.allocate((slots + 2) * 4);
    status_ = engine.allocate(8);
    registers_ = engine.allocate(kRegisters * 4);
    host_status_ = engine.allocate_host(8);
    host_registers_ = engine.allocate_host(kRegisters * 4);
    scan_ = std::make_unique<DeviceScan>(engine, slots + 2);
  }

  // Groups the rows into `out`; returns the groups the device found (at or above out.group_capacity, the
  // groups are not written).
  std::uint64_t run(const GroupByVariant& variant, KernelSequence& seq, const GroupBuffers& out) {
    const LaunchPlan& plan = variant.launch;
    const std::int64_t load = variant.load;
    const auto n = KernelArg::of(static_cast<std::uint32_t>(rows_));
    const auto arg = [](const DeviceBuffer& b) { return KernelArg::of(b); };

    TableGeometry table = table_for(rows_, load);
    if (variant.sketch) {
      // Size the table by the distinct keys: a HyperLogLog pass, a quarter more for its error.
      seq.run("sketch", "fill_int", plan.cover(kRegisters),
              {arg(*registers_), KernelArg::of(0), KernelArg::of(static_cast<std::uint32_t>(kRegisters))});
      seq.run("sketch", "sketch", plan.rows(rows_), {arg(keys_in_), arg(*registers_), n});
      seq.read(*host_registers_, *registers_, kRegisters * 4, 0);
      const auto* r = host_registers_->as<std::uint32_t>();
      const double estimate = hyperloglog_estimate(std::vector<std::uint32_t>(r, r + kRegisters));
      table =
          table_for(std::min<std::uint64_t>(rows_, static_cast<std::uint64_t>(estimate * 1.25) + 64), load);
    }

    const auto reset = [&](const TableGeometry& t) {
      seq.run("init_table", "init_table", plan.cover(t.slots()), {arg(*table_), KernelArg::of(t.mask)});
      seq.run("init_table", "fill_int", plan.cover(2), {arg(*status_), KernelArg::of(0), KernelArg::of(2u)});
    };
    const auto status = [&](int which) {
      seq.read(*host_status_, *status_, 8, 0);
      return host_status_->as<std::uint32_t>()[which];
    };
    const bool extents_at_build = variant.extents_at_build;
    const auto pessimistic = [&](const TableGeometry& t) {
      seq.run("build", "build_pessimistic", plan.rows(rows_),
              {arg(*table_), arg(keys_in_), arg(*status_), arg(*slot_rows_),
               KernelArg::of(static_cast<std::uint32_t>(extents_at_build)), n, KernelArg::of(t.mask),
               KernelArg::of(t.shift)});
    };
    reset(table);
    bool rebuild = true;
    if (variant.optimistic) {
      seq.run("build", "build_optimistic", plan.rows(rows_),
              {arg(*table_), arg(keys_in_), n, KernelArg::of(table.mask), KernelArg::of(table.shift)});
      seq.run("validate", "validate_table", plan.rows(rows_),
              {arg(*table_), arg(keys_in_), arg(*status_), n, KernelArg::of(table.mask),
               KernelArg::of(table.shift)});
      rebuild = status(0) > 0;
      if (rebuild) reset(table);
    }
    if (rebuild) {
      pessimistic(table);
      if (status(1) > 0) {  // a table sized from the sketch was too small: size it by the rows
        table = table_for(rows_, load);
        reset(table);
        pessimistic(table);
      }
    }
    const KernelArg mask = KernelArg::of(table.mask);
    const KernelArg shift = KernelArg::of(table.shift);

    // Group ids: occupied slots flagged and scanned in place; the total is the number of groups.
    const std::uint64_t flags = table.slots() + 1;
    seq.run("prepare_ids", "prepare_ids", plan.cover(table.slots()), {arg(*table_), arg(*ids_), mask});
    scan_->run(seq, "prefix_sum", *ids_, *ids_, flags);
    seq.read(*host_status_, *ids_, 4, flags * 4);
    const std::uint32_t device_groups = host_status_->as<std::uint32_t>()[0];
    if (device_groups >= out.group_capacity) return device_groups;  // wrong, and more than the buffers hold

    seq.run("assign_groups", "assign_groups", plan.cover(table.slots()),
            {arg(*table_), arg(*ids_), arg(out.keys), arg(*slot_rows_), arg(out.extents),
             KernelArg::of(static_cast<std::uint32_t>(extents_at_build)), mask});
    const auto groups = static_cast<std::uint32_t>(plan.indexed(device_groups));
    seq.run("init_aggregates", "init_aggregates", plan.cover(groups),
            {arg(out.counts), arg(out.sums), arg(out.mins), arg(out.maxs), KernelArg::of(groups)});
    seq.run("compute_grouping", "compute_grouping", plan.rows(rows_),
            {arg(*table_), arg(*ids_), arg(keys_in_), arg(values_in_), arg(out.group_ids), arg(out.counts),
             arg(out.sums), arg(out.mins), arg(out.maxs), n, mask, shift});
    if (variant.agg == GroupAggregation::Partitioned) {
      aggregate_partitioned(seq, variant, out, device_groups);
    } else if (!variant.fused) {
      seq.run("aggregate", "aggregate", plan.rows(rows_),
              {arg(out.group_ids), arg(values_in_), arg(out.counts), arg(out.sums), arg(out.mins),
               arg(out.maxs), n});
    }
    if (!extents_at_build) {
      const auto extent_rows = static_cast<std::uint32_t>(plan.indexed(rows_));
      seq.run("extents", "extents", plan.cover(extent_rows),
              {arg(out.group_ids), arg(out.extents), KernelArg::of(extent_rows)});
    }
    return device_groups;
  }

 private:
  // Many groups: the rows' (group id, value) pairs partitioned by group id, so that each tile of them
  // holds few groups, which a work-group aggregates in local memory (aggregate_tiles).
  void aggregate_partitioned(KernelSequence& seq, const GroupByVariant& variant, const GroupBuffers& out,
                             std::uint32_t groups) {
    const std::uint32_t most = variant.max_parts;
    if (!partition_) {
      part_ids_ = engine_.allocate(std::max<std::uint64_t>(rows_, 1) * 4);
      part_values_ = engine_.allocate(std::max<std::uint64_t>(rows_, 1) * 4);
      partition_ = std::make_unique<RadixPartition>(engine_, rows_, most);
    }
    // A partition per LOCAL_GROUPS groups; wider partitions where that would be too many.
    std::uint32_t shift = static_cast<std::uint32_t>(std::countr_zero(variant.local_groups));
    while ((std::uint64_t{groups} >> shift) >= most) ++shift;
    const auto parts = static_cast<std::uint32_t>((std::uint64_t{groups} >> shift) + 1);
    const std::uint64_t local = variant.partition.local;
    partition_->run(seq, "partition", out.group_ids, values_in_, false, *part_ids_, *part_values_, rows_, 1u,
                    shift, parts, variant.partition, false);  // aggregate_tiles finds its own partitions
    const std::uint64_t tiles = (rows_ + kAggregateTile - 1) / kAggregateTile;
    const auto arg = [](const DeviceBuffer& b) { return KernelArg::of(b); };
    seq.run(
        "aggregate", "aggregate_tiles", {std::min<std::uint64_t>(tiles, 4096) * local, local},
        {arg(*part_ids_), arg(*part_values_), arg(out.counts), arg(out.sums), arg(out.mins), arg(out.maxs),
         KernelArg::of(static_cast<std::uint32_t>(rows_)), KernelArg::of(shift), KernelArg::of(groups)});
  }

  Engine& engine_;
  const DeviceBuffer& keys_in_;
  const DeviceBuffer& values_in_;
  std::uint64_t rows_;
  std::unique_ptr<HostBuffer> host_status_, host_registers_;
  std::unique_ptr<DeviceBuffer> table_, ids_, status_, registers_, slot_rows_;
  // The partitioned aggregation's pairs, allocated when a variant first asks for them.
  std::unique_ptr<DeviceBuffer> part_ids_, part_values_;
  std::unique_ptr<RadixPartition> partition_;
  std::unique_ptr<DeviceScan> scan_;
};

class GroupByRun final : public VariantRun<GroupByVariant> {
 public:
  GroupByRun(Engine& engine, const datasets::WorkloadSpec& spec) : VariantRun(engine, "hash") {
    datasets::GroupColumns columns = materialise_groups(spec);
    rows_ = columns.keys.size();
    GroupReference reference = group_reference(columns.keys, columns.values);

    const DeviceInfo& device = engine.device();
    row_capacity_ = group_row_capacity(rows_, device);
    group_capacity_ = group_capacity_for(reference.groups.size(), device);
    host_keys_ = engine.allocate_host(std::max<std::uint64_t>(rows_, 1) * 4);
    host_values_ = engine.allocate_host(std::max<std::uint64_t>(rows_, 1) * 4);
    if (rows_) {
      std::memcpy(host_keys_->data(), columns.keys.data(), rows_ * 4);
      std::memcpy(host_values_->data(), columns.values.data(), rows_ * 4);
    }
    columns = {};
    keys_in_ = engine.allocate(std::max<std::uint64_t>(rows_, 1) * 4);
    values_in_ = engine.allocate(std::max<std::uint64_t>(rows_, 1) * 4);
    kernels_ = std::make_unique<GroupByKernels>(engine, *keys_in_, *values_in_, rows_);
    out_ = std::make_unique<GroupsOutput>(engine, std::move(reference), *host_keys_, rows_, row_capacity_,
                                          group_capacity_);
    out_->set_device_row_keys(*keys_in_);
    // Host padding runs the extents kernel over the slack rows too: they carry the id of a spare group.
    mark_slack_rows(engine, out_->group_ids(), rows_, row_capacity_, group_capacity_);
    restore_inputs();
  }

  double h2d_ms() const override { return h2d_ms_; }

  void restore_inputs() override {
    h2d_ms_ = 0;
    if (rows_) {
      h2d_ms_ += engine_.upload(*keys_in_, 0, *host_keys_, rows_ * 4)->elapsed_ms();
      h2d_ms_ += engine_.upload(*values_in_, 0, *host_values_, rows_ * 4)->elapsed_ms();
    }
  }

  void poison() override { out_->poison(); }

  Collected collect(Check how) override { return harness::collect(*out_, how); }

  Digest reference() const override { return out_->reference(); }
  std::uint64_t bytes_moved() const override { return rows_ * 8 + out_->bytes_written(); }

  std::optional<ContractBuffers> contract_buffers() override {
    if (!counter_) counter_ = std::make_unique<ContractCounter>(engine_);
    GroupsOutput& out = *out_;
    ContractBuffers c = group_contract(*keys_in_, *values_in_, rows_,
                                       {out.keys(), out.counts(), out.sums(), out.mins(), out.maxs(),
                                        out.extents(), out.group_ids(), group_capacity_},
                                       *counter_);
    c.finish = [this] {
      out_->set_count(counter_->read());
      return true;  // more groups than the reference's do not verify
    };
    return c;
  }
  std::uint64_t working_set_bytes() const override {
    return rows_ * 12 + table_for(rows_, 50).slots() * 8 + out_->groups() * 28;
  }

 private:
  GroupByVariant decode(const variants::Params& params) const override {
    return GroupByVariant(params, engine_.device());
  }

  void run(const GroupByVariant& variant, KernelSequence& seq) override {
    GroupsOutput& out = *out_;
    out.set_count(kernels_->run(variant, seq,
                                {out.keys(), out.counts(), out.sums(), out.mins(), out.maxs(), out.extents(),
                                 out.group_ids(), group_capacity_}));
  }

  std::uint64_t rows_ = 0;
  std::uint64_t row_capacity_ = 0, group_capacity_ = 0;
  std::unique_ptr<HostBuffer> host_keys_, host_values_;
  std::unique_ptr<DeviceBuffer> keys_in_, values_in_;
  std::unique_ptr<GroupByKernels> kernels_;   // after keys_in_ and values_in_, which it reads
  std::unique_ptr<GroupsOutput> out_;         // after host_keys_, which it reads
  std::unique_ptr<ContractCounter> counter_;  // the groups another kernel counts (contract_buffers)
  double h2d_ms_ = 0;
};

// On an application's columns: the keys and the values as int32 arrays of the same rows, read in place
// (no kernel reads a row past the count; host padding runs only over the run's own group ids and groups).
// The groups are allocated for the worst case, every row its own group, and handed over.
class GroupByBound final : public VariantRun<GroupByVariant, BoundRun> {
 public:
  GroupByBound(Engine& engine, const Binding& binding)
      : VariantRun(engine, "hash"),
        keys_in_(*binding.inputs[0]),
        values_in_(*binding.inputs[1]),
        rows_(binding.rows[0]) {
    if (binding.rows[1] != rows_) {
      throw UsageError("groupby's keys and values need the same rows, got " + std::to_string(rows_) +
                       " and " + std::to_string(binding.rows[1]));
    }
    if (rows_ >= kGroupByMaxRows) throw UsageError("groupby handles fewer than 2^31 rows");
    const char* const columns[] = {"keys", "values"};
    for (std::size_t i = 0; i < 2; ++i) {
      if (binding.inputs[i]->bytes() < rows_ * 4)
        throw UsageError(std::string("the ") + columns[i] + " buffer holds " +
                         std::to_string(binding.inputs[i]->bytes()) + " bytes, " + std::to_string(rows_) +
                         " int32 rows need " + std::to_string(rows_ * 4));
    }
    const DeviceInfo& device = engine.device();
    row_capacity_ = group_row_capacity(rows_, device);
    group_capacity_ = group_capacity_for(rows_, device);
    kernels_ = std::make_unique<GroupByKernels>(engine, *binding.inputs[0], *binding.inputs[1], rows_);
  }

  // The operator's class (datasets::default_class) from what the call knows: the rows.
  datasets::WorkloadClass workload_class() const override {
    datasets::WorkloadClass c;
    c.set_scale("rows", rows_, datasets::ScaleKind::Count);
    return c;
  }

  // keys, counts, sums, mins, maxs, extents (per group), group ids (per row); `rows` the groups.
  DeviceResult take_result() override {
    allocate_groups();
    DeviceResult result{OutputKind::Groups, {}, groups_};
    for (auto* b : {&keys_, &counts_, &sums_, &mins_, &maxs_, &extents_, &group_ids_})
      result.buffers.push_back(std::move(*b));
    // The groups' keys and aggregates; which row stands for a group and the group ids' numbering are a
    // variant's own.
    const std::uint64_t g = groups_;
    result.parts = {{0, 0, g * 4, 4}, {1, 0, g * 4, 4}, {2, 0, g * 8, 8}, {3, 0, g * 4, 4}, {4, 0, g * 4, 4}};
    groups_ = 0;
    return result;
  }

  // The group arrays hold a group per row, the most there can be.
  std::optional<ContractBuffers> contract_buffers() override {
    allocate_groups();
    if (!counter_) counter_ = std::make_unique<ContractCounter>(engine_);
    ContractBuffers c = group_contract(
        keys_in_, values_in_, rows_,
        {*keys_, *counts_, *sums_, *mins_, *maxs_, *extents_, *group_ids_, group_capacity_}, *counter_);
    c.finish = [this] {
      const std::uint32_t groups = counter_->read();
      if (groups > rows_)
        throw LaunchError("the user's group-by counted " + std::to_string(groups) + " groups in " +
                          std::to_string(rows_) + " rows");
      groups_ = groups;
      return true;
    };
    return c;
  }

 private:
  GroupByVariant decode(const variants::Params& params) const override {
    return GroupByVariant(params, engine_.device());
  }

  void run(const GroupByVariant& variant, KernelSequence& seq) override {
    allocate_groups();
    groups_ = 0;
    if (rows_ == 0) return;  // no rows, no groups; no kernel reads the caller's buffers
    const std::uint64_t groups = kernels_->run(
        variant, seq, {*keys_, *counts_, *sums_, *mins_, *maxs_, *extents_, *group_ids_, group_capacity_});
    if (groups > rows_)
      throw LaunchError("the group-by counted " + std::to_string(groups) + " groups in " +
                        std::to_string(rows_) + " rows");
    groups_ = groups;
  }

  // The groups of the next execution, where the last ones were handed over.
  void allocate_groups() {
    if (keys_) return;
    for (auto* b : {&keys_, &counts_, &mins_, &maxs_, &extents_}) *b = engine_.allocate(group_capacity_ * 4);
    sums_ = engine_.allocate(group_capacity_ * 8);
    group_ids_ = engine_.allocate(row_capacity_ * 4);
    mark_slack_rows(engine_, *group_ids_, rows_, row_capacity_, group_capacity_);
  }

  const DeviceBuffer& keys_in_;
  const DeviceBuffer& values_in_;
  std::uint64_t rows_;
  std::uint64_t row_capacity_ = 0, group_capacity_ = 0, groups_ = 0;
  std::unique_ptr<GroupByKernels> kernels_;
  std::unique_ptr<DeviceBuffer> keys_, counts_, sums_, mins_, maxs_, extents_, group_ids_;
  std::unique_ptr<ContractCounter> counter_;  // the groups another kernel counts (contract_buffers)
};

// One thread's groups: open addressing over the keys it owns.
class HostGroups {
 public:
  void add(std::int32_t key, std::int32_t value) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    GroupAggregates& g = slots_[find(key)];
    if (!occupied_[&g - slots_.data()]) {
      occupied_[&g - slots_.data()] = true;
      ++used_;
      g = {key, 0, 0, std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::min()};
    }
    ++g.count;
    g.sum += value;
    g.min = std::min(g.min, value);
    g.max = std::max(g.max, value);
  }
  void append_to(std::vector<GroupAggregates>& out) const {
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      if (occupied_[s]) out.push_back(slots_[s]);
    }
  }

 private:
  std::size_t find(std::int32_t key) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t s = datasets::splitmix64(static_cast<std::uint32_t>(key) ^ 0x5555u) & mask;
    while (occupied_[s] && slots_[s].key != key) s = (s + 1) & mask;
    return s;
  }
  void grow() {
    std::vector<GroupAggregates> old;
    append_to(old);
    slots_.assign(std::max<std::size_t>(64, 2 * slots_.size()), {});
    occupied_.assign(slots_.size(), false);
    for (const GroupAggregates& g : old) {
      const std::size_t s = find(g.key);
      slots_[s] = g;
      occupied_[s] = true;
    }
  }
  std::vector<GroupAggregates> slots_;
  std::vector<bool> occupied_;
  std::size_t used_ = 0;
};

}  // namespace

GroupByVariant::GroupByVariant(const variants::Params& params, const DeviceInfo& device)
    : HashVariant(params, device, static_cast<std::uint32_t>(std::countr_zero(max_radix_parts(device)))),
      optimistic(variants::get_string(params, "build") == "optimistic"),
      agg(groupby_aggregation_named(variants::get_string(params, "agg"))),
      extents_at_build(variants::get_string(params, "extents") == "build"),
      fused(variants::get_string(params, "fuse") == "on"),
      sketch(variants::get_string(params, "sizing") == "sketch"),
      local_groups(groupby_local_groups(device)) {
  defines.push_back({"HASH_GROUPBY", "1"});
  defines.push_back({"LOCAL_AGG", agg == GroupAggregation::Local || agg == GroupAggregation::Warp ||
                                          agg == GroupAggregation::Registers
                                      ? "1"
                                      : "0"});
  defines.push_back({"VOTE", agg == GroupAggregation::Warp ? "1" : "0"});
  defines.push_back({"REGISTER_AGG", agg == GroupAggregation::Registers ? "1" : "0"});
  defines.push_back({"LOCAL_GROUPS", std::to_string(local_groups)});
  defines.push_back({"AGG_TILE", std::to_string(kAggregateTile)});
  defines.push_back({"FUSED", fused ? "1" : "0"});
}

GroupReference group_reference(const std::vector<std::int32_t>& keys,
                               const std::vector<std::int32_t>& values) {
  // Each thread owns the keys of one hash partition and reads the whole column for them.
  const unsigned parts = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<HostGroups> tables(parts);
  datasets::parallel_rows(parts, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t p = b; p < e; ++p) {
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (datasets::splitmix64(static_cast<std::uint32_t>(keys[i])) % parts == p)
          tables[p].add(keys[i], values[i]);
      }
    }
  });
  GroupReference r;
  for (const HostGroups& t : tables) t.append_to(r.groups);
  std::sort(r.groups.begin(), r.groups.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  r.digest.rows = r.groups.size();
  for (const GroupAggregates& g : r.groups) r.digest.checksum += group_digest(g.key, g.count, g.sum);
  return r;
}

double hyperloglog_estimate(const std::vector<std::uint32_t>& registers) {
  const double m = static_cast<double>(registers.size());
  double harmonic = 0;
  std::size_t zeros = 0;
  for (std::uint32_t r : registers) {
    harmonic += std::ldexp(1.0, -static_cast<int>(r));
    zeros += r == 0;
  }
  const double estimate = 0.7213 / (1.0 + 1.079 / m) * m * m / harmonic;
  // Few distinct keys: linear counting over the empty registers is the better estimate.
  if (estimate <= 2.5 * m && zeros > 0) return m * std::log(m / static_cast<double>(zeros));
  return estimate;
}

variants::Space GroupByOperator::space(const variants::SpaceContext& context) const {
  return groupby_space(context);
}

Defines GroupByOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return GroupByVariant(params, device).defines;
}

WorkloadDecl GroupByOperator::declaration() const {
  WorkloadDecl d;
  // Two columns of the same rows (the kernels read them as two arrays; an application binds one buffer
  // each), from one file of `key,value` lines.
  d.inputs = {{"keys", "int32", "keys of `distinct` groups, uniform or Zipf, seeded",
               "the key of each `key,value` line of int32 decimals"},
              {"values", "int32", "uniform over int32, seeded", "the value of each `key,value` line"}};
  d.flags = {flags::input("Read key,value rows from FILE"), flags::rows(),
             flags::distinct("Groups, 1 to the rows (default: min(rows, 2^16))"), flags::zipf(),
             flags::seed()};
  d.output = OutputKind::Groups;
  return d;
}

datasets::WorkloadSpec GroupByOperator::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec;
  spec.op = name();
  if (const auto input = options.text("input")) {
    for (const char* generated : {"distinct", "zipf"}) {
      if (options.text(generated))
        throw UsageError(std::string("--") + generated +
                         " describes generated keys; groupby reads a file here");
    }
    const std::string path = std::filesystem::absolute(*input).string();
    spec.generator = "file";
    spec.params = {{"path", bytes_json(path)},
                   {"rows", datasets::load_key_value_rows(path).size()},
                   {"fingerprint", datasets::file_fingerprint(path)}};
  } else {
    if (!options.count("rows")) throw std::logic_error("groupby: generated workloads need a row count");
    const std::uint64_t rows = *options.count("rows");
    const std::uint64_t distinct =
        options.count("distinct").value_or(std::min<std::uint64_t>(rows, 1ULL << 16));
    const double zipf = options.number("zipf").value_or(0.0);
    if (rows > 0 && (distinct < 1 || distinct > rows))
      throw UsageError("--distinct must lie between 1 and the rows (" + std::to_string(rows) + ")");
    if (!(zipf >= 0.0 && zipf <= 10.0)) throw UsageError("--zipf must lie between 0 and 10");
    spec.generator = "group_keys";
    spec.params = {{"rows", rows}, {"distinct", distinct}, {"zipf", zipf}, {"seed", options.seed()}};
  }
  if (spec.rows() >= kGroupByMaxRows)
    throw UsageError("input too large: groupby handles fewer than 2^31 rows");
  return spec;
}

DeviceFootprint GroupByOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t rows = spec.rows();
  const std::uint64_t groups =
      spec.generator == "group_keys" ? spec.params.at("distinct").get<std::uint64_t>() : rows;
  const std::uint64_t slots = table_for(rows, 25).slots();
  // Keys, values and group ids; the table, its ids and extents; the groups; the partitioned aggregation's
  // (group id, value) pairs.
  return {rows * 20 + slots * 12 + groups * 28, std::max({rows * 4, slots * 4, groups * 8})};
}

std::optional<ContractDecl> GroupByOperator::contract() const {
  return ContractDecl{
      {"keys", "values", "group_keys", "counts", "sums", "mins", "maxs", "extents", "group_ids", "groups"},
      {"rows", "capacity"},
      "keys, values: the rows' int32 key and value (rows of each); groups: a uint32, 0 before each run, that "
      "the kernels leave holding the number of distinct keys; group g (below groups, in any order) is one "
      "key: group_keys[g] its key (int32), counts[g] its rows (uint32), sums[g] the sum of their values "
      "(int64), mins[g] and maxs[g] their least and greatest value (int32), extents[g] one row of the key "
      "(uint32); group_ids[r] is row r's group (uint32); the group arrays hold capacity groups (at least "
      "the distinct keys)"};
}

std::unique_ptr<PreparedRun> GroupByOperator::prepare(Engine& engine,
                                                      const datasets::WorkloadSpec& spec) const {
  return std::make_unique<GroupByRun>(engine, spec);
}

std::unique_ptr<BoundRun> GroupByOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  return std::make_unique<GroupByBound>(engine, binding);
}

}  // namespace varex::operators

namespace varex::operators {

void register_groupby(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<GroupByOperator>());
}

}  // namespace varex::operators
