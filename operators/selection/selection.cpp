#include "operators/selection/selection.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/operators/workload_flags.hpp"
#include "harness/outputs/bitmap.hpp"
#include "operators/selection/selection_space.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::BitmapOutput;
using harness::DeviceResult;
using harness::KernelSequence;
using harness::LaunchBundle;
using harness::max_local;
using harness::round_up;
using harness::VariantRun;
namespace flags = harness::flags;
}  // namespace varex::operators

namespace varex::operators {

namespace {

// Rows are indexed with 32-bit integers in the kernels; keep head room for padding.
constexpr std::uint64_t kSelectionMaxRows = (1ULL << 31) - (1ULL << 22);

// Host padding rounds the rows up to a multiple of local x ept, both powers of two, so rounding up to the
// largest such product covers every variant; a row count that is already a multiple needs no slack.
std::uint64_t capacity_rows(std::uint64_t rows, const DeviceInfo& device) {
  const std::uint64_t largest = max_local(device) * 32;
  return (rows + largest - 1) / largest * largest;
}

// A variant of the selection, decoded once: the kernel, rows and loads per work-item, and the defines the
// kernel is built with.
struct SelectionVariant : LaunchBundle {
  SelectionVariant(const variants::Params& params, const DeviceInfo& device)
      : LaunchBundle(params, device),
        overflow(variants::get_string(params, "kernel") == "overflow"),
        ept(static_cast<std::uint64_t>(variants::get_int(params, "ept"))),
        vec(static_cast<std::uint64_t>(variants::get_int(params, "vec"))) {
    defines = {{"SEL_OVERFLOW", overflow ? "1" : "0"},
               {"EPT", std::to_string(ept)},
               {"VEC", std::to_string(vec)},
               {"MAX_LOCAL", std::to_string(max_local(device))}};
  }
  bool overflow;      // kernel=overflow (Fett's), else the loop kernel
  std::uint64_t ept;  // rows per work-item
  std::uint64_t vec;  // vector width of the loads
};

// The selection's kernel over a column of `rows` and its bitmap, whoever owns the buffers.
void run_selection(const SelectionVariant& variant, KernelSequence& seq, const DeviceBuffer& in,
                   DeviceBuffer& out, std::uint64_t rows_in, const KernelRange& range) {
  if (rows_in == 0) return;
  // Host-side padding: the kernel reads a row count that fills whole work-groups (the slack behind the
  // rows: zeros in a tuning run, whatever the application's buffer holds in a runtime call); the bits of
  // the rows past `rows_in` are written 0, as are the rest of the bitmap's last word.
  const std::uint64_t rows = variant.launch.indexed(rows_in, variant.ept);
  const LaunchShape shape = variant.launch.rows(rows, variant.ept);
  const std::vector<KernelArg> args{KernelArg::of(in),
                                    KernelArg::of(out),
                                    KernelArg::of(static_cast<std::uint32_t>(rows)),
                                    KernelArg::of(static_cast<std::uint32_t>(rows_in)),
                                    KernelArg::of(range.lo),
                                    KernelArg::of(range.hi),
                                    KernelArg::of(range.neg)};
  seq.run("selection", "selection", shape, args);
}

// On an application's column: its buffer holds the rows (and, where the caller left it, slack that host
// padding may read); the bitmap is allocated for the widest variant and handed over.
class SelectionBound final : public VariantRun<SelectionVariant, BoundRun> {
 public:
  SelectionBound(Engine& engine, const Binding& binding)
      : VariantRun(engine, "selection"), in_(*binding.inputs[0]), rows_(binding.rows[0]) {
    if (rows_ > kSelectionMaxRows)
      throw UsageError("selection handles at most " + std::to_string(kSelectionMaxRows) + " rows");
    if (in_.bytes() < rows_ * 4)
      throw UsageError("the column's buffer holds " + std::to_string(in_.bytes()) + " bytes, " +
                       std::to_string(rows_) + " int32 rows need " + std::to_string(rows_ * 4));
    query_ = SelectionQuery::parse(binding.query);
    range_ = query_.inclusive();
  }

  datasets::WorkloadClass workload_class() const override {
    datasets::WorkloadClass c;
    c.shape["negate"] = query_.negate ? "true" : "false";
    c.set_scale("rows", rows_, datasets::ScaleKind::Count);
    c.set_scale("selectivity", std::round(query_.uniform_share() * 1e6) / 1e6, datasets::ScaleKind::Fraction);
    return c;
  }

  std::string refuses(const variants::Params& params) const override {
    const SelectionVariant variant = decode(params);
    const std::uint64_t read = variant.launch.indexed(rows_, variant.ept) * 4;
    if (read <= in_.bytes()) return {};
    return "host padding reads " + std::to_string(read) + " bytes of a column buffer of " +
           std::to_string(in_.bytes());
  }

  DeviceResult take_result() override {
    DeviceResult result{OutputKind::Bitmap, {}, rows_};
    result.buffers.push_back(std::move(out_));
    return result;
  }

  // The caller's column holds the rows and nothing the contract promises past them: capacity is rows.
  std::optional<ContractBuffers> contract_buffers() override {
    if (!out_) out_ = engine_.allocate(round_up(capacity_rows(rows_, engine_.device()), 32) / 8);
    ContractBuffers c;
    c.buffers = {{"column", const_cast<DeviceBuffer*>(&in_)},
                 {"bitmap", out_.get()}};  // the column is only read
    c.scalars = {{"rows", static_cast<std::int64_t>(rows_)},
                 {"capacity", static_cast<std::int64_t>(rows_)},
                 {"lo", range_.lo},
                 {"hi", range_.hi},
                 {"negate", range_.neg}};
    return c;
  }

 private:
  SelectionVariant decode(const variants::Params& params) const override {
    return SelectionVariant(params, engine_.device());
  }

  void run(const SelectionVariant& variant, KernelSequence& seq) override {
    if (!out_) out_ = engine_.allocate(round_up(capacity_rows(rows_, engine_.device()), 32) / 8);
    run_selection(variant, seq, in_, *out_, rows_, range_);
  }

  const DeviceBuffer& in_;
  std::uint64_t rows_;
  SelectionQuery query_;
  KernelRange range_{};
  std::unique_ptr<DeviceBuffer> out_;
};

class SelectionRun final : public VariantRun<SelectionVariant> {
 public:
  SelectionRun(Engine& engine, const datasets::WorkloadSpec& spec) : VariantRun(engine, "selection") {
    std::vector<std::int32_t> column = datasets::int32_column_of(spec);
    rows_ = column.size();
    if (rows_ > kSelectionMaxRows)
      throw UsageError("input too large: selection handles at most " + std::to_string(kSelectionMaxRows) +
                       " rows");
    const SelectionQuery query = SelectionQuery::from_json(spec.query);
    range_ = query.inclusive();

    const DeviceInfo& device = engine.device();
    const std::uint64_t capacity = capacity_rows(rows_, device);
    host_in_ = engine.allocate_host(rows_ * 4);
    if (rows_) std::memcpy(host_in_->data(), column.data(), rows_ * 4);
    out_ = std::make_unique<BitmapOutput>(engine, rows_, selection_reference(column, query), capacity);
    column = {};
    in_ = engine.allocate(capacity * 4);
    restore_inputs();
  }

  double h2d_ms() const override { return h2d_ms_; }

  void restore_inputs() override {
    h2d_ms_ = rows_ ? engine_.upload(*in_, 0, *host_in_, rows_ * 4)->elapsed_ms() : 0.0;
    // The slack behind the rows is what host-side padding reads: give it defined contents.
    if (in_->bytes() > rows_ * 4) engine_.fill(*in_, 0, rows_ * 4, in_->bytes() - rows_ * 4)->elapsed_ms();
  }

  void poison() override { out_->poison(); }

  Collected collect(Check how) override { return harness::collect(*out_, how); }

  Digest reference() const override { return out_->reference(); }
  std::uint64_t bytes_moved() const override { return rows_ * 4 + (rows_ + 7) / 8; }
  std::uint64_t working_set_bytes() const override { return bytes_moved(); }

  std::optional<ContractBuffers> contract_buffers() override {
    ContractBuffers c;
    c.buffers = {{"column", in_.get()}, {"bitmap", &out_->buffer()}};
    c.scalars = {{"rows", static_cast<std::int64_t>(rows_)},
                 {"capacity", static_cast<std::int64_t>(in_->bytes() / 4)},
                 {"lo", range_.lo},
                 {"hi", range_.hi},
                 {"negate", range_.neg}};
    return c;
  }

 private:
  SelectionVariant decode(const variants::Params& params) const override {
    return SelectionVariant(params, engine_.device());
  }

  void run(const SelectionVariant& variant, KernelSequence& seq) override {
    run_selection(variant, seq, *in_, out_->buffer(), rows_, range_);
  }

  std::uint64_t rows_ = 0;
  KernelRange range_{};
  std::unique_ptr<HostBuffer> host_in_;
  std::unique_ptr<DeviceBuffer> in_;
  std::unique_ptr<BitmapOutput> out_;
  double h2d_ms_ = 0;
};

}  // namespace

std::vector<std::uint8_t> selection_reference(const std::vector<std::int32_t>& column,
                                              const SelectionQuery& query) {
  std::vector<std::uint8_t> bitmap((column.size() + 7) / 8, 0);
  for (std::size_t r = 0; r < column.size(); ++r) {
    if (query.matches(column[r])) bitmap[r / 8] |= static_cast<std::uint8_t>(1u << (r % 8));
  }
  return bitmap;
}

variants::Space SelectionOperator::space(const variants::SpaceContext& context) const {
  return selection_space(context);
}

Defines SelectionOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return SelectionVariant(params, device).defines;
}

std::optional<ContractDecl> SelectionOperator::contract() const {
  return ContractDecl{
      {"column", "bitmap"},
      {"rows", "capacity", "lo", "hi", "negate"},
      "column: the rows' int32 values, then zeros up to capacity (at least rows: a multiple of 32 rows and "
      "more "
      "in varex's runs, rows on an application's column in the runtime library); bitmap: "
      "bit r % 32 of 32-bit word r / 32 is set where row r matches, that is where lo <= value <= hi is "
      "true, or false with negate = 1; every word that holds a row is written, the bits past the last row "
      "are not compared"};
}

WorkloadDecl SelectionOperator::declaration() const {
  WorkloadDecl d;
  d.inputs = {{"column", "int32", "uniform over the whole int32 range, seeded",
               "one decimal per line, or little-endian int32 in a file named *.bin"}};
  d.flags = {flags::input(), flags::rows(), flags::seed(),
             flags::selectivity("Share of rows the generated range query keeps, 0 to 1 (default 0.5)")};
  d.query = {{"lo", "lower bound of the range (int32; absent: none)"},
             {"hi", "upper bound of the range (int32; absent: none)"},
             {"lo_inclusive", "whether lo itself passes (default true)"},
             {"hi_inclusive", "whether hi itself passes (default true)"},
             {"negate", "keep the rows outside the range instead (default false)"}};
  d.output = OutputKind::Bitmap;
  return d;
}

datasets::WorkloadSpec SelectionOperator::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec;
  spec.op = name();
  if (const auto input = options.text("input")) {
    spec = datasets::int32_file_workload(name(), *input);
    spec.query = SelectionQuery::parse(options.query).to_json();
  } else {
    const auto rows = options.count("rows");
    if (!rows) throw std::logic_error("selection: generated workloads need a row count");
    spec.generator = "uniform_int32";
    const double selectivity = options.number("selectivity").value_or(0.5);
    spec.params = {{"rows", *rows}, {"seed", options.seed()}, {"selectivity", selectivity}};
    spec.query = options.query.empty() ? SelectionQuery::for_selectivity(selectivity).to_json()
                                       : SelectionQuery::parse(options.query).to_json();
  }
  if (spec.rows() > kSelectionMaxRows) {
    throw UsageError("input too large: selection handles at most " + std::to_string(kSelectionMaxRows) +
                     " rows, got " + std::to_string(spec.rows()));
  }
  return spec;
}

datasets::WorkloadClass SelectionOperator::workload_class(const datasets::WorkloadSpec& spec) const {
  datasets::WorkloadClass c;
  const SelectionQuery query = SelectionQuery::from_json(spec.query);
  c.shape["generator"] = spec.generator == "file" ? "file" : spec.generator;
  c.shape["negate"] = query.negate ? "true" : "false";
  c.set_scale("rows", spec.rows(), datasets::ScaleKind::Count);
  if (spec.generator != "file") {
    // Rounded, so that equal shares computed from different bounds compare equal.
    c.set_scale("selectivity", std::round(query.uniform_share() * 1e6) / 1e6, datasets::ScaleKind::Fraction);
  }
  return c;
}

DeviceFootprint SelectionOperator::footprint(const datasets::WorkloadSpec& spec,
                                             const DeviceInfo& device) const {
  const std::uint64_t capacity = capacity_rows(spec.rows(), device);
  return {capacity * 4 + round_up(capacity, 32) / 8, capacity * 4};
}

std::unique_ptr<PreparedRun> SelectionOperator::prepare(Engine& engine,
                                                        const datasets::WorkloadSpec& spec) const {
  return std::make_unique<SelectionRun>(engine, spec);
}

std::unique_ptr<BoundRun> SelectionOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  return std::make_unique<SelectionBound>(engine, binding);
}

}  // namespace varex::operators

namespace varex::operators {

void register_selection(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<SelectionOperator>());
}

}  // namespace varex::operators
