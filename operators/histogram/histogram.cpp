#include "operators/histogram/histogram.hpp"

#include <bit>
#include <cstring>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/operators/workload_flags.hpp"
#include "harness/outputs/rows.hpp"
#include "variants/launch.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
using harness::LaunchBundle;
using harness::RowsOutput;
using harness::VariantRun;
namespace flags = harness::flags;
}  // namespace varex::operators

namespace varex::operators {

namespace {

constexpr std::uint32_t kDefaultBuckets = 256;
constexpr std::uint32_t kMostBuckets = 1u << 16;
// Rows are indexed with 32-bit integers in the kernel.
constexpr std::uint64_t kMostRows = (1ULL << 31) - 1;

std::uint32_t buckets_of(const datasets::WorkloadSpec& spec) {
  return spec.params.at("buckets").get<std::uint32_t>();
}

// A value's bucket is its top log2(buckets) bits: the kernel shifts by the rest.
std::uint32_t shift_of(std::uint32_t buckets) {
  return 32u - static_cast<std::uint32_t>(std::countr_zero(buckets));
}

// A variant of the histogram, decoded once: where the counting happens, rows per work-item, and the
// defines the kernel is built with.
struct HistogramVariant : LaunchBundle {
  HistogramVariant(const variants::Params& params, const DeviceInfo& device)
      : LaunchBundle(params, device),
        local_bins(variants::get_string(params, "bins") == "local"),
        ept(static_cast<std::uint64_t>(variants::get_int(params, "ept"))) {
    defines = {{"EPT", std::to_string(ept)}, {"LOCAL_BINS", local_bins ? "1" : "0"}};
  }
  bool local_bins;    // bins=local: sub-histograms in local memory, else global atomics per row
  std::uint64_t ept;  // rows per work-item
};

class HistogramRun final : public VariantRun<HistogramVariant> {
 public:
  HistogramRun(Engine& engine, const datasets::WorkloadSpec& spec)
      : VariantRun(engine, "histogram"), buckets_(buckets_of(spec)) {
    std::vector<std::int32_t> column = datasets::int32_column_of(spec);
    rows_ = column.size();
    host_in_ = engine.allocate_host(std::max<std::uint64_t>(rows_, 1) * 4);
    if (rows_) std::memcpy(host_in_->data(), column.data(), rows_ * 4);
    out_ = std::make_unique<RowsOutput>(engine, 1, buckets_, histogram_reference(column, buckets_),
                                        /*counted=*/false);
    column = {};
    in_ = engine.allocate(std::max<std::uint64_t>(rows_, 1) * 4);
    restore_inputs();
  }

  double h2d_ms() const override { return h2d_ms_; }
  void restore_inputs() override {
    h2d_ms_ = rows_ ? engine_.upload(*in_, 0, *host_in_, rows_ * 4)->elapsed_ms() : 0.0;
  }
  void poison() override { out_->poison(); }
  Collected collect(Check how) override { return harness::collect(*out_, how); }
  Digest reference() const override { return out_->reference(); }
  std::uint64_t bytes_moved() const override { return rows_ * 4 + buckets_ * 4ull; }
  std::uint64_t working_set_bytes() const override { return bytes_moved(); }

 private:
  HistogramVariant decode(const variants::Params& params) const override {
    return HistogramVariant(params, engine_.device());
  }

  void run(const HistogramVariant& variant, KernelSequence& seq) override {
    DeviceBuffer& counts = out_->tuple_buffer();
    seq.fill("clear", counts, 0, buckets_ * 4ull);
    if (rows_ == 0) return;
    seq.run("histogram", "histogram", variant.launch.rows(rows_, variant.ept),
            {KernelArg::of(*in_), KernelArg::of(counts), KernelArg::of(static_cast<std::uint32_t>(rows_)),
             KernelArg::of(shift_of(buckets_)), KernelArg::of(buckets_)});
  }

  std::uint32_t buckets_;
  std::uint64_t rows_ = 0;
  std::unique_ptr<HostBuffer> host_in_;
  std::unique_ptr<DeviceBuffer> in_;
  std::unique_ptr<RowsOutput> out_;
  double h2d_ms_ = 0;
};

}  // namespace

std::vector<std::uint32_t> histogram_reference(const std::vector<std::int32_t>& column,
                                               std::uint32_t buckets) {
  // Independent of the kernel's bit trick: the bucket is the value's offset from INT32_MIN times the
  // buckets, divided by the 2^32 values.
  std::vector<std::uint32_t> counts(buckets, 0);
  for (const std::int32_t v : column) {
    const std::uint64_t offset = static_cast<std::uint64_t>(static_cast<std::int64_t>(v) + 2147483648LL);
    ++counts[static_cast<std::size_t>(offset * buckets >> 32)];
  }
  return counts;
}

variants::Space HistogramOperator::space(const variants::SpaceContext& context) const {
  using variants::TunableKind;
  using variants::Value;
  std::vector<variants::Tunable> tunables{
      {"bins",
       TunableKind::Compile,
       {Value{"global"}, Value{"local"}},
       Value{"local"},
       "global: a global atomic per row; local: each work-group counts into local memory, 1,024 buckets per "
       "pass over its rows, and adds its counts to the global ones"},
      {"ept", TunableKind::Compile, {1, 2, 4, 8, 16}, 4, "rows per work-item and tile"},
      variants::local_tunable(context.device),
      variants::grid_tunable({Value{"cover"}, 1, 2, 4, 8, 16, 32}, Value{"cover"},
                             "the rows (one work-item per ept rows)"),
  };
  return variants::Space("histogram", std::move(tunables), {});
}

Defines HistogramOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return HistogramVariant(params, device).defines;
}

WorkloadDecl HistogramOperator::declaration() const {
  WorkloadDecl d;
  d.inputs = {{"column", "int32", "uniform over the whole int32 range, seeded",
               "one decimal per line, or little-endian int32 in a file named *.bin"}};
  d.flags = {
      flags::input(),
      flags::rows(),
      flags::seed(),
      {"buckets", "N", "Buckets, a power of two from 2 to 65536 (default 256)", datasets::ScaleKind::Count}};
  d.output = OutputKind::Rows;
  return d;
}

datasets::WorkloadSpec HistogramOperator::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec;
  spec.op = name();
  const std::uint64_t buckets = options.count("buckets").value_or(kDefaultBuckets);
  if (buckets < 2 || buckets > kMostBuckets || !std::has_single_bit(buckets))
    throw UsageError("histogram: --buckets " + std::to_string(buckets) + ": a power of two from 2 to 65536");
  if (const auto input = options.text("input")) {
    spec = datasets::int32_file_workload(name(), *input);
  } else {
    const auto rows = options.count("rows");
    if (!rows) throw std::logic_error("histogram: generated workloads need a row count");
    spec.generator = "uniform_int32";
    spec.params = {{"rows", *rows}, {"seed", options.seed()}};
  }
  spec.params["buckets"] = buckets;
  if (spec.rows() > kMostRows)
    throw UsageError("input too large: histogram handles at most " + std::to_string(kMostRows) +
                     " rows, got " + std::to_string(spec.rows()));
  return spec;
}

DeviceFootprint HistogramOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  return {spec.rows() * 4 + buckets_of(spec) * 4ull, spec.rows() * 4};
}

std::unique_ptr<PreparedRun> HistogramOperator::prepare(Engine& engine,
                                                        const datasets::WorkloadSpec& spec) const {
  return std::make_unique<HistogramRun>(engine, spec);
}

}  // namespace varex::operators

namespace varex::operators {

void register_histogram(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<HistogramOperator>());
}

}  // namespace varex::operators
