#include "operators/aggregates/aggregates.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>

#include "base/errors.hpp"
#include "harness/backends/vendor_library.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/vendor_variant.hpp"
#include "harness/outputs/value.hpp"
#include "operators/common/attributes/attribute_baseline.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DeviceResult;
using harness::KernelSequence;
using harness::ValueOutput;
using harness::VariantRun;
using harness::vendor_library;
using harness::VendorScratch;
}  // namespace varex::operators

namespace varex::operators {

namespace {

constexpr std::uint64_t kAccWords = 35;   // the kernels' accumulators (ACC_WORDS)
constexpr std::uint64_t kMaxBins = 2048;  // 2^MAX_RADIX_BITS

// The host reference, row by row: the kept values of the attribute.
std::vector<std::int32_t> kept_values(const datasets::AttributeTable& table, std::uint32_t attribute,
                                      const Cnf& where) {
  std::vector<std::int32_t> kept;
  for (std::uint64_t r = 0; r < table.rows(); ++r) {
    if (keeps(where, table, r)) kept.push_back(table.columns[attribute][r]);
  }
  return kept;
}

Digest aggregate_reference(AggregateFn fn, const std::vector<std::int32_t>& kept) {
  const std::uint64_t n = kept.size();
  std::uint64_t sum = 0;
  for (std::int32_t v : kept) sum += static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  switch (fn) {
    case AggregateFn::Count:
      return {n, n};
    case AggregateFn::Sum:
    case AggregateFn::Avg:
      return {n, sum};
    case AggregateFn::Min:
      return {n, n ? static_cast<std::uint64_t>(
                         static_cast<std::int64_t>(*std::min_element(kept.begin(), kept.end())))
                   : 0};
    case AggregateFn::Max:
      return {n, n ? static_cast<std::uint64_t>(
                         static_cast<std::int64_t>(*std::max_element(kept.begin(), kept.end())))
                   : 0};
  }
  return {};
}

// Both operators' kernels over records, whoever owns them: the accumulators, the select's state and
// histogram (kept between executions), and the two kernel sequences (the aggregate's passes, the
// digit-by-digit select), which leave (rows aggregated, the result as a signed 64-bit value) in `out`.
class AggregateKernels {
 public:
  // `k`: the k-th largest's k; absent: the query's quantile of the rows kept, counted on the device first.
  AggregateKernels(Engine& engine, const nlohmann::json& query, bool kth, std::optional<std::uint64_t> k)
      : engine_(engine),
        query_(query),
        kth_(kth),
        attribute_(query.at("attr").get<std::uint32_t>()),
        where_(where_of(query)),
        fn_(kth ? AggregateFn::Sum : aggregate_fn(query)),
        k_(k) {
    acc_ = engine.allocate(kAccWords * 8);
    state_ = engine.allocate(16);
    hist_ = engine.allocate(kMaxBins * 4);
  }

  std::uint32_t attribute() const { return attribute_; }
  const Cnf& where() const { return where_; }
  AggregateFn fn() const { return fn_; }

  // The operator's variant and the query's defines: the filter's KEEP, and the aggregate's AGG_EXTREMES.
  AttributeAggregateVariant decode(const variants::Params& params) const {
    AttributeAggregateVariant variant(params, engine_.device(), kth_);
    for (const Define& f : filter_defines(where_)) variant.defines.push_back(f);
    if (!kth_) {
      variant.defines.push_back(
          {"AGG_EXTREMES", fn_ == AggregateFn::Min || fn_ == AggregateFn::Max ? "1" : "0"});
    }
    return variant;
  }

  void run(const AttributeAggregateVariant& variant, KernelSequence& seq, const AttributeColumns& in,
           DeviceBuffer& out) {
    const LaunchShape shape = variant.shape(in.rows);
    if (kth_ && variant.sort) {
      sort_select(seq, shape, in, out);
    } else if (kth_) {
      select(seq, variant, shape, in, out, k_, variant.radix_bits);
    } else if (variant.bits && (fn_ == AggregateFn::Min || fn_ == AggregateFn::Max)) {
      // MIN and MAX as the k-th largest (k = 1; k = 0 asks for the smallest), one bit per pass.
      select(seq, variant, shape, in, out, fn_ == AggregateFn::Max ? 1u : 0u, 1);
    } else {
      const bool bits = variant.bits && fn_ != AggregateFn::Count;
      seq.run("init", "aggregate_init", {64, 64}, {KernelArg::of(*acc_)});
      if (bits) {
        const std::uint32_t width = variant.sum_bits;
        for (std::uint32_t first = 0; first < 32; first += width) {
          seq.run("bits", "aggregate_bits", shape,
                  {KernelArg::of(*in.buffer), KernelArg::of(*acc_), in.rows_arg(), in.stride_arg(),
                   KernelArg::of(attribute_), KernelArg::of(first), KernelArg::of(width)});
        }
      } else {
        seq.run("aggregate", "aggregate_direct", shape,
                {KernelArg::of(*in.buffer), KernelArg::of(*acc_), in.rows_arg(), in.stride_arg(),
                 KernelArg::of(attribute_)});
      }
      seq.run("finish", "aggregate_finish", {1, 1},
              {KernelArg::of(*acc_), KernelArg::of(out), KernelArg::of(fn_code()),
               KernelArg::of(static_cast<std::uint32_t>(bits ? 1 : 0))});
    }
  }

 private:
  std::uint32_t fn_code() const {
    switch (fn_) {
      case AggregateFn::Count:
        return 0;
      case AggregateFn::Sum:
      case AggregateFn::Avg:
        return 1;
      case AggregateFn::Min:
        return 2;
      case AggregateFn::Max:
        return 3;
    }
    return 0;
  }

  // k of the query's quantile over the rows kept, as the device counted them: the sum of the first pass's
  // `bins` 32-bit counts, or (bins 0) the 64-bit count in the first word of the accumulators. Read back,
  // as the host needs it to go on.
  std::uint32_t counted_k(KernelSequence& seq, const DeviceBuffer& src, std::size_t bins) {
    if (!readback_) readback_ = engine_.allocate_host(kMaxBins * 4);
    seq.read(*readback_, src, bins ? bins * 4 : 8, 0);
    std::uint64_t kept = bins ? 0 : readback_->as<std::uint64_t>()[0];
    for (std::size_t i = 0; i < bins; ++i) kept += readback_->as<std::uint32_t>()[i];
    return static_cast<std::uint32_t>(kth_of(query_, kept));
  }

  // Routine 4.5: one pass per digit of `width` bits from the most significant, each a histogram of the
  // digit among the kept rows that match the digits chosen so far, then the pick of the digit that holds
  // the k-th largest. Without k, the first pass's histogram is read back for the rows kept and k set then.
  void select(KernelSequence& seq, const AttributeAggregateVariant& variant, const LaunchShape& shape,
              const AttributeColumns& in, DeviceBuffer& out, std::optional<std::uint64_t> k,
              std::uint64_t width) {
    const std::uint64_t local = variant.local;
    const auto init = [&](std::uint64_t value) {
      seq.run("init", "select_init", {1, 1},
              {KernelArg::of(*state_), KernelArg::of(static_cast<std::uint32_t>(value))});
    };
    if (k) init(*k);
    seq.fill("clear", *hist_, 0, kMaxBins * 4);
    for (std::uint32_t done = 0; done < 32;) {
      const auto w = static_cast<std::uint32_t>(std::min<std::uint64_t>(width, 32 - done));
      const std::uint32_t shift = 32 - done - w;
      seq.run("histogram", "select_histogram", shape,
              {KernelArg::of(*in.buffer), KernelArg::of(*state_), KernelArg::of(*hist_), in.rows_arg(),
               in.stride_arg(), KernelArg::of(attribute_), KernelArg::of(shift), KernelArg::of(w)});
      if (!k) {
        k = counted_k(seq, *hist_, std::size_t{1} << w);
        init(*k);
      }
      seq.run("pick", "select_pick", {local, local},
              {KernelArg::of(*state_), KernelArg::of(*hist_), KernelArg::of(w),
               KernelArg::of(static_cast<std::uint32_t>(done == 0 ? 1 : 0))});
      done += w;
    }
    seq.run("finish", "select_finish", {1, 1}, {KernelArg::of(*state_), KernelArg::of(out)});
  }

  // The sorting variant: the kept values in order-preserving form (the others 0, the smallest), sorted by
  // CUB's radix sort, and the (n - k)-th of them.
  void sort_select(KernelSequence& seq, const LaunchShape& shape, const AttributeColumns& in,
                   DeviceBuffer& out) {
    const std::uint64_t rows = in.rows;
    const std::uint64_t bytes = std::max<std::uint64_t>(rows, 1) * 4;
    if (!keys_ || keys_->bytes() < bytes) keys_ = engine_.allocate(bytes);
    if (!sorted_ || sorted_->bytes() < bytes) sorted_ = engine_.allocate(bytes);
    seq.run("init", "aggregate_init", {64, 64}, {KernelArg::of(*acc_)});
    seq.run("keys", "select_keys", shape,
            {KernelArg::of(*in.buffer), KernelArg::of(*keys_), KernelArg::of(*acc_), in.rows_arg(),
             in.stride_arg(), KernelArg::of(attribute_)});
    const auto* keys = static_cast<const unsigned*>(engine_.native_address(*keys_));
    auto* sorted = static_cast<unsigned*>(engine_.native_address(*sorted_));
    const varex_vendor_table& cub = *vendor_library();
    seq.vendor("cub_sort", scratch_, [&](void* temp, std::size_t* temp_bytes, void* stream) {
      return cub.sort_keys_u32(temp, temp_bytes, keys, sorted, rows, stream);
    });
    const std::uint32_t k = k_ ? static_cast<std::uint32_t>(*k_) : counted_k(seq, *acc_, 0);
    seq.run(
        "finish", "select_sorted_finish", {1, 1},
        {KernelArg::of(*sorted_), KernelArg::of(*acc_), KernelArg::of(out), in.rows_arg(), KernelArg::of(k)});
  }

  Engine& engine_;
  nlohmann::json query_;
  bool kth_;
  std::uint32_t attribute_;
  Cnf where_;
  AggregateFn fn_;
  std::optional<std::uint64_t> k_;
  std::unique_ptr<DeviceBuffer> acc_, state_, hist_, keys_, sorted_;
  std::unique_ptr<HostBuffer> readback_;
  VendorScratch scratch_{engine_};
};

// The k-th largest's k as the prepared run checks it against the rows kept (UsageError).
std::uint64_t checked_k(const nlohmann::json& query, const Cnf& where, std::uint64_t kept) {
  const std::uint64_t k = kth_of(query, kept);
  if (kept == 0) {
    throw UsageError(std::string("kth_largest: no row ") +
                     (where.all.empty() ? "exists" : "passes the filter") + ", so there is no k-th largest");
  }
  if (k > kept) {
    throw UsageError("kth_largest: k=" + (query.contains("k") ? query.at("k").dump() : std::to_string(k)) +
                     ", but " + std::to_string(kept) + " row" + (kept == 1 ? "" : "s") +
                     (where.all.empty() ? " exist" : " pass the filter"));
  }
  return k;
}

// Both operators on varex's own records, checked against the host reference.
class AggregateRun final : public VariantRun<AttributeAggregateVariant> {
 public:
  AggregateRun(Engine& engine, const datasets::WorkloadSpec& spec, const AttributeAggregate& op)
      : VariantRun(engine, "predicates"), kth_(op.name() == "kth_largest") {
    table_ = materialise_attributes(spec);
    rows_ = table_.rows();
    const std::uint32_t attribute = spec.query.at("attr").get<std::uint32_t>();
    const Cnf where = where_of(spec.query);
    std::vector<std::int32_t> kept = kept_values(table_, attribute, where);
    Digest want;
    if (kth_) {
      k_ = checked_k(spec.query, where, kept.size());
      std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(k_ - 1), kept.end(),
                       std::greater<>());
      want = {kept.size(), static_cast<std::uint64_t>(static_cast<std::int64_t>(kept[k_ - 1]))};
    } else {
      want = aggregate_reference(aggregate_fn(spec.query), kept);
    }
    output_ = std::make_unique<ValueOutput>(engine, want);
    inputs_ = std::make_unique<AttributeInputs>(engine, table_);
    kernels_ = std::make_unique<AggregateKernels>(engine, spec.query, kth_, k_);
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  void poison() override { output_->poison(); }

  void run(const AttributeAggregateVariant& variant, KernelSequence& seq) override {
    kernels_->run(variant, seq, inputs_->columns(), output_->buffer());
  }

  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // The attribute and the filter's attributes, read once per pass at least (one pass counted).
  std::uint64_t bytes_moved() const override {
    return rows_ * 4 * kernels_->where().attributes_read(kernels_->attribute()) + 16;
  }
  std::uint64_t working_set_bytes() const override { return bytes_moved(); }

  std::optional<BaselineTiming> time_baseline() override {
    const BlockFilter filter = cnf_block_filter(kernels_->where(), table_);
    const std::vector<std::int32_t>& column = table_.columns[kernels_->attribute()];
    const Digest want = output_->reference();
    if (kth_) {
      return time_cpu_baseline("radix-select-cpu", [&] {
        const auto [value, kept] = cpu_kth_largest(column, k_, filter);
        return value && Digest{kept, static_cast<std::uint64_t>(static_cast<std::int64_t>(*value))} == want;
      });
    }
    const AggregateFn fn = kernels_->fn();
    return time_cpu_baseline("vectorised-cpu", [&] {
      const CpuAggregate a = cpu_aggregate(column, filter);
      std::uint64_t value = a.rows;
      if (fn == AggregateFn::Sum || fn == AggregateFn::Avg) value = static_cast<std::uint64_t>(a.sum);
      if (fn == AggregateFn::Min) value = static_cast<std::uint64_t>(static_cast<std::int64_t>(a.min));
      if (fn == AggregateFn::Max) value = static_cast<std::uint64_t>(static_cast<std::int64_t>(a.max));
      return Digest{a.rows, value} == want;
    });
  }

 private:
  AttributeAggregateVariant decode(const variants::Params& params) const override {
    return kernels_->decode(params);
  }

  bool kth_;
  datasets::AttributeTable table_;
  std::uint64_t rows_ = 0;
  std::uint64_t k_ = 0;
  std::unique_ptr<ValueOutput> output_;
  std::unique_ptr<AttributeInputs> inputs_;
  std::unique_ptr<AggregateKernels> kernels_;
};

// Both operators on an application's records (bind_attributes: columns without padding). The kernels guard
// every row, so every variant runs on the caller's exact buffer. The result, two 64-bit words (rows
// aggregated, the value as a signed 64-bit integer), is allocated here and handed over by take_result.
// kth_largest's k is the query's k (at most the rows), or its quantile's of the rows kept: of the rows when
// there is no filter, else counted on the device by the first pass and read back.
class AggregateBound final : public VariantRun<AttributeAggregateVariant, BoundRun> {
 public:
  AggregateBound(Engine& engine, const Binding& binding, const AttributeAggregate& op)
      : VariantRun(engine, "predicates"), op_(op), in_(bind_attributes(op.name(), binding)) {
    query_ = op.parse_query(binding.query, in_.attributes);
    std::optional<std::uint64_t> k;
    if (op.name() == "kth_largest") {
      if (query_.contains("k")) {
        k = query_.at("k").get<std::uint64_t>();
        if (in_.rows && *k > in_.rows) {
          throw UsageError("kth_largest: k=" + std::to_string(*k) + ", but the records have " +
                           std::to_string(in_.rows) + " row" + (in_.rows == 1 ? "" : "s"));
        }
      } else if (!query_.contains("where")) {
        k = kth_of(query_, in_.rows);
      }
    }
    kernels_ = std::make_unique<AggregateKernels>(engine, query_, op.name() == "kth_largest", k);
  }

  datasets::WorkloadClass workload_class() const override { return bound_attribute_class(in_.rows, query_); }

  DeviceResult take_result() override {
    if (!out_) throw std::logic_error(op_.name() + ": no result to take (execute first)");
    if (op_.name() == "kth_largest") check_kept();
    DeviceResult result{OutputKind::Scalar, {}, 1};
    result.buffers.push_back(std::move(out_));
    result.parts = {{0, 0, 16, 0}};  // rows aggregated, value
    return result;
  }

 private:
  AttributeAggregateVariant decode(const variants::Params& params) const override {
    return kernels_->decode(params);
  }

  void run(const AttributeAggregateVariant& variant, KernelSequence& seq) override {
    if (!out_) out_ = engine_.allocate(16);
    kernels_->run(variant, seq, in_, *out_);
  }

  // The rows the filter kept are counted on the device: a k beyond them (or no row kept) has no k-th
  // largest, and the kernels' value would mean nothing, so the count is read back and checked as
  // `varex run` checks it on the host (UsageError).
  void check_kept() {
    if (!readback_) readback_ = engine_.allocate_host(16);
    engine_.download(*readback_, *out_, 16)->elapsed_ms();
    checked_k(query_, kernels_->where(), readback_->as<std::uint64_t>()[0]);
  }

  const AttributeAggregate& op_;
  AttributeColumns in_;
  nlohmann::json query_;
  std::unique_ptr<AggregateKernels> kernels_;
  std::unique_ptr<DeviceBuffer> out_;
  std::unique_ptr<HostBuffer> readback_;
};

}  // namespace

AttributeAggregateVariant::AttributeAggregateVariant(const variants::Params& params, const DeviceInfo& device,
                                                     bool kth_largest)
    : AttributeVariant(params, device) {
  if (kth_largest) {
    sort = vendor;
    vendor = false;  // the sorting variant's own kernels need the program
    radix_bits = static_cast<std::uint64_t>(variants::get_int(params, "radix_bits"));
  } else {
    bits = variants::get_string(params, "method") == "bits";
    sum_bits = static_cast<std::uint32_t>(variants::get_int(params, "sum_bits"));
    defines.push_back({"PRED_AGGREGATE", "1"});
  }
  defines.push_back({"PRED_SELECT", "1"});
}

AggregateFn aggregate_fn(const nlohmann::json& query) {
  const std::string fn = query.at("fn").get<std::string>();
  if (fn == "count") return AggregateFn::Count;
  if (fn == "sum") return AggregateFn::Sum;
  if (fn == "avg") return AggregateFn::Avg;
  if (fn == "min") return AggregateFn::Min;
  if (fn == "max") return AggregateFn::Max;
  throw UsageError("query fn=" + fn + ": choose count, sum, avg, min or max");
}

std::uint64_t kth_of(const nlohmann::json& query, std::uint64_t kept) {
  if (kept == 0) return 0;
  if (query.contains("k")) return query.at("k").get<std::uint64_t>();
  const double q = query.at("quantile").get<double>();
  const auto at_or_below = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(kept)));
  return std::clamp<std::uint64_t>(kept + 1 - std::min(at_or_below, kept), 1, kept);
}

WorkloadDecl AttributeAggregate::declaration() const {
  WorkloadDecl d;
  d.inputs = {attribute_input()};
  d.flags = attribute_flags();
  d.query = own_keys();
  d.query.push_back({"attr", "the attribute, a0, a1, … (default a0)"});
  d.query.push_back(
      {"where", "only the rows this filter keeps (the syntax of cnf_filter's where; default: every row)"});
  d.output = OutputKind::Scalar;
  return d;
}

variants::Space AttributeAggregate::space(const variants::SpaceContext& context) const {
  std::vector<variants::Tunable> tunables = own_tunables(context.device);
  for (variants::Tunable& t : attribute_launch_tunables(context.device)) tunables.push_back(std::move(t));
  std::vector<variants::Constraint> constraints = own_constraints();
  std::vector<variants::Inactive> inactive;
  add_vendor(context.device, tunables, inactive);
  return variants::Space(name(), std::move(tunables), std::move(constraints), std::move(inactive));
}

nlohmann::json AttributeAggregate::parse_query(const std::map<std::string, std::string>& query,
                                               std::uint32_t attributes) const {
  nlohmann::json q = nlohmann::json::object();
  std::map<std::string, std::string> own;
  for (const auto& [key, value] : query) {
    if (key == "attr") {
      q["attr"] = parse_attribute(value, attributes, key);
    } else if (key == "where") {
      q["where"] = parse_where(query, attributes).to_string();
    } else {
      own[key] = value;
    }
  }
  if (!q.contains("attr")) q["attr"] = 0;
  parse_own(own, q);
  return q;
}

datasets::WorkloadSpec AttributeAggregate::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec = attribute_workload(name(), options);
  spec.query = parse_query(options.query, attribute_count(spec));
  check(spec);
  return spec;
}

DeviceFootprint AttributeAggregate::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  // The sorting variant's keys and sorted keys included.
  const std::uint64_t image = attribute_image_bytes(spec);
  return {image + 2 * attribute_capacity(spec.rows()) * 4 + kAccWords * 8 + kMaxBins * 4 + 32, image};
}

std::optional<double> AttributeAggregate::result_value(const datasets::WorkloadSpec& spec,
                                                       const Digest& digest) const {
  const auto value = static_cast<double>(static_cast<std::int64_t>(digest.checksum));
  const AggregateFn fn = spec.query.contains("fn") ? aggregate_fn(spec.query) : AggregateFn::Sum;
  // MIN, MAX and AVG of no row have no value (SQL's NULL); COUNT and SUM of none are 0.
  const bool undefined_when_empty =
      fn == AggregateFn::Avg || fn == AggregateFn::Min || fn == AggregateFn::Max;
  if (digest.rows == 0 && undefined_when_empty) return std::numeric_limits<double>::quiet_NaN();
  return fn == AggregateFn::Avg ? value / static_cast<double>(digest.rows) : value;
}

std::unique_ptr<PreparedRun> AttributeAggregate::prepare(Engine& engine,
                                                         const datasets::WorkloadSpec& spec) const {
  return std::make_unique<AggregateRun>(engine, spec, *this);
}

std::unique_ptr<BoundRun> AttributeAggregate::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  return std::make_unique<AggregateBound>(engine, binding, *this);
}

}  // namespace varex::operators

namespace varex::operators {

void register_aggregates(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<AggregateOperator>());
  registry.add(std::make_unique<KthLargestOperator>());
}

}  // namespace varex::operators
