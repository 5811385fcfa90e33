#include "operators/filters/filters.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "base/errors.hpp"
#include "harness/operators/registry.hpp"
#include "harness/outputs/bitmap.hpp"
#include "harness/outputs/value.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::bitmap_digest;
using harness::BitmapOutput;
using harness::DeviceResult;
using harness::has_warp_ballot;
using harness::KernelSequence;
using harness::round_up;
using harness::ValueOutput;
using harness::VariantRun;
using harness::warp_ballot_defines;
}  // namespace varex::operators

namespace varex::operators {

namespace {

// range's compare as the space names it (and RANGE_COMPARE passes it on).
RangeCompare range_compare_of(const std::string& text) {
  if (text == "two_sided") return RangeCompare::TwoSided;
  if (text == "unsigned_difference") return RangeCompare::UnsignedDifference;
  throw UsageError("compare=" + text + ": choose two_sided or unsigned_difference");
}

std::string range_compare_name(RangeCompare compare) {
  return compare == RangeCompare::UnsignedDifference ? "unsigned_difference" : "two_sided";
}

// The operator's variant and the query's clauses: CLAUSE_i each, CLAUSES, KEEP (their conjunction).
AttributeFilterVariant decode_filter(const AttributeFilter& op, const nlohmann::json& query,
                                     const variants::Params& params, const DeviceInfo& device) {
  AttributeFilterVariant variant(params, device);
  const std::vector<std::string> clauses = op.clauses(query, variant);
  std::string keep;
  for (std::size_t i = 0; i < clauses.size(); ++i) {
    variant.defines.push_back({"CLAUSE_" + std::to_string(i), clauses[i]});
    keep += (keep.empty() ? "(" : "&(") + clauses[i] + ")";
  }
  variant.defines.push_back({"CLAUSES", std::to_string(clauses.size())});
  if (!keep.empty()) variant.defines.push_back({"KEEP", keep});
  variant.clauses = clauses.size();
  return variant;
}

// Rows order=selective_first judges the clauses by.
constexpr std::uint64_t kSelectivitySample = 65536;

// The clauses from the one that keeps the fewest rows (of the first kSelectivitySample of `table`) to the
// one that keeps the most: later passes then evaluate fewer rows.
std::vector<std::uint32_t> clause_order_by_selectivity(const Cnf& cnf,
                                                       const datasets::AttributeTable& table) {
  std::vector<std::uint64_t> kept(cnf.all.size(), 0);
  for (std::uint64_t r = 0; r < std::min<std::uint64_t>(table.rows(), kSelectivitySample); ++r) {
    for (std::size_t c = 0; c < cnf.all.size(); ++c) {
      kept[c] += keeps(Cnf{{cnf.all[c]}}, table, r) ? 1 : 0;
    }
  }
  std::vector<std::uint32_t> order(cnf.all.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return kept[a] < kept[b]; });
  return order;
}

// The filters' kernels over records into a bitmap of ceil(rows / 32) words (or, output=count, the rows kept
// and the sum of their indices into `counted`'s two words), whoever owns the buffers. `selective_order`:
// the clauses' order for order=selective_first.
void run_filter(const AttributeFilterVariant& variant, KernelSequence& seq, const AttributeColumns& in,
                DeviceBuffer& bitmap, DeviceBuffer& counted,
                const std::vector<std::uint32_t>& selective_order) {
  if (variant.count_only) seq.fill("clear", counted, 0, 16);
  const LaunchShape shape = variant.shape(in.rows);
  const auto launch = [&](const std::string& label, std::uint32_t clause, std::uint32_t pass, bool count) {
    seq.run(label, "filter", shape,
            {KernelArg::of(*in.buffer), KernelArg::of(bitmap), KernelArg::of(counted), in.rows_arg(),
             in.stride_arg(), KernelArg::of(clause), KernelArg::of(pass),
             KernelArg::of(static_cast<std::uint32_t>(count ? 1 : 0))});
  };
  if (!variant.passes || variant.clauses < 2) {
    launch("filter", 0, 0, variant.count_only);
  } else {
    std::vector<std::uint32_t> order(variant.clauses);
    std::iota(order.begin(), order.end(), 0u);
    if (variant.selective_first) order = selective_order;
    for (std::size_t i = 0; i < order.size(); ++i) {
      launch("pass", order[i], i == 0 ? 1 : 2, variant.count_only && i + 1 == order.size());
    }
  }
}

class FilterRun final : public VariantRun<AttributeFilterVariant> {
 public:
  FilterRun(Engine& engine, const datasets::WorkloadSpec& spec, const AttributeFilter& op)
      : VariantRun(engine, "predicates"), op_(op), query_(spec.query) {
    table_ = materialise_attributes(spec);
    rows_ = table_.rows();
    std::vector<std::uint8_t> reference((rows_ + 7) / 8, 0), tolerated((rows_ + 7) / 8, 0);
    bool any_tolerated = false;
    const AttributeFilter::RowReference keeps_row = op.reference(query_, table_);
    for (std::uint64_t r = 0; r < rows_; ++r) {
      bool loose = false;
      if (keeps_row(r, loose)) reference[r / 8] |= static_cast<std::uint8_t>(1u << (r % 8));
      if (loose) {
        tolerated[r / 8] |= static_cast<std::uint8_t>(1u << (r % 8));
        any_tolerated = true;
      }
    }
    inputs_ = std::make_unique<AttributeInputs>(engine, table_);
    counted_ = std::make_unique<ValueOutput>(engine, bitmap_digest(reference.data(), rows_));
    bitmap_ = std::make_unique<BitmapOutput>(engine, rows_, std::move(reference), inputs_->capacity());
    if (any_tolerated) bitmap_->set_tolerated(std::move(tolerated));
    if (query_.contains("where")) selective_order_ = clause_order_by_selectivity(where_of(query_), table_);
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  void poison() override {
    bitmap_->poison();
    counted_->poison();
  }

  void run(const AttributeFilterVariant& variant, KernelSequence& seq) override {
    count_only_ = variant.count_only;
    run_filter(variant, seq, inputs_->columns(), bitmap_->buffer(), counted_->buffer(), selective_order_);
  }

  // A count is compared with the reference's digest as it is: only bitmaps tolerate rows (semilinear, which
  // has no count output).
  Collected collect(Check how) override {
    return count_only_ ? harness::collect(*counted_, how) : harness::collect(*bitmap_, how);
  }
  Digest reference() const override { return bitmap_->reference(); }
  std::uint64_t bytes_moved() const override {
    return rows_ * 4 * op_.attributes_read(query_) + (rows_ + 7) / 8;
  }
  std::uint64_t working_set_bytes() const override { return bytes_moved(); }

  std::optional<BaselineTiming> time_baseline() override {
    const BlockFilter filter = op_.baseline(query_, table_);
    return time_cpu_baseline("vectorised-cpu", [&] {
      const std::vector<std::uint8_t> got = cpu_filter_bitmap(rows_, filter);
      return bitmap_->first_difference(got.data()) == rows_;
    });
  }

 private:
  AttributeFilterVariant decode(const variants::Params& params) const override {
    return decode_filter(op_, query_, params, engine_.device());
  }

  const AttributeFilter& op_;
  nlohmann::json query_;
  datasets::AttributeTable table_;
  std::uint64_t rows_ = 0;
  std::unique_ptr<AttributeInputs> inputs_;
  std::unique_ptr<BitmapOutput> bitmap_;
  std::unique_ptr<ValueOutput> counted_;
  std::vector<std::uint32_t> selective_order_;
  bool count_only_ = false;
};

// Any of the three filters on an application's records (bind_attributes: columns without padding). The
// kernels guard every row, so every variant runs on the caller's exact buffer, but for output=count, which
// writes no bitmap. The bitmap (ceil(rows / 32) words) is allocated here and handed over by take_result.
class FilterBound final : public VariantRun<AttributeFilterVariant, BoundRun> {
  static constexpr const char* kNoBitmap = "output=count counts the rows kept and writes no bitmap";

 public:
  FilterBound(Engine& engine, const Binding& binding, const AttributeFilter& op)
      : VariantRun(engine, "predicates"), op_(op), in_(bind_attributes(op.name(), binding)) {
    query_ = op.parse_query(binding.query, in_.attributes);
    counted_ = engine.allocate(16);  // the kernel's count argument; refused variants alone write it
  }

  datasets::WorkloadClass workload_class() const override { return bound_attribute_class(in_.rows, query_); }

  std::string refuses(const variants::Params& params) const override {
    return AttributeFilterVariant(params, engine_.device()).count_only ? kNoBitmap : "";
  }

  DeviceResult take_result() override {
    if (!bitmap_) throw std::logic_error(op_.name() + ": no result to take (execute first)");
    DeviceResult result{OutputKind::Bitmap, {}, in_.rows};
    result.buffers.push_back(std::move(bitmap_));
    return result;
  }

 private:
  AttributeFilterVariant decode(const variants::Params& params) const override {
    return decode_filter(op_, query_, params, engine_.device());
  }

  void run(const AttributeFilterVariant& variant, KernelSequence& seq) override {
    if (variant.count_only) throw UsageError(op_.name() + ": " + kNoBitmap);
    if (!bitmap_) bitmap_ = engine_.allocate(round_up(in_.rows, 32) / 8);
    if (variant.selective_first && !ordered_) {
      selective_order_ = clause_order_by_selectivity(where_of(query_), sample());
      ordered_ = true;
    }
    run_filter(variant, seq, in_, *bitmap_, *counted_, selective_order_);
  }

  // The first kSelectivitySample records of every attribute the buffer holds, on the host (order=
  // selective_first judges the clauses by them as the prepared run does by its table's); downloaded once.
  datasets::AttributeTable sample() {
    const std::uint64_t rows = std::min(in_.rows, kSelectivitySample);
    auto host = engine_.allocate_host(std::max<std::uint64_t>(rows, 1) * 4);
    datasets::AttributeTable table;
    table.columns.assign(in_.attributes, std::vector<std::int32_t>(rows));
    for (std::uint32_t c = 0; c < in_.attributes && rows; ++c) {
      engine_.download(*host, *in_.buffer, rows * 4, c * in_.stride * 4)->elapsed_ms();
      std::memcpy(table.columns[c].data(), host->data(), rows * 4);
    }
    return table;
  }

  const AttributeFilter& op_;
  AttributeColumns in_;
  nlohmann::json query_;
  std::unique_ptr<DeviceBuffer> bitmap_, counted_;
  std::vector<std::uint32_t> selective_order_;
  bool ordered_ = false;
};

}  // namespace

AttributeFilterVariant::AttributeFilterVariant(const variants::Params& params, const DeviceInfo& device)
    : AttributeVariant(params, device),
      passes(params.count("strategy") && variants::get_string(params, "strategy") != "fused"),
      selective_first(params.count("order") && variants::get_string(params, "order") == "selective_first"),
      count_only(params.count("output") && variants::get_string(params, "output") == "count"),
      // Params recorded before `pack` existed packed by ballots where the device has them.
      ballot(params.count("pack") ? variants::get_string(params, "pack") == "ballot"
                                  : has_warp_ballot(device)) {
  if (params.count("compare")) compare = range_compare_of(variants::get_string(params, "compare"));
  defines.push_back({"PRED_FILTER", "1"});
  if (ballot) {
    defines.push_back({"PACK_BALLOT", "1"});
    for (Define& d : warp_ballot_defines(device)) defines.push_back(std::move(d));
  }
  // range's `compare` changes the expression the runner passes as KEEP; naming it here keeps its two compile
  // parts two programs where the workload is not known (the NVRTC compile test of every compile part).
  if (compare) defines.push_back({"RANGE_COMPARE", range_compare_name(*compare)});
}

WorkloadDecl AttributeFilter::declaration() const {
  WorkloadDecl d;
  d.inputs = {attribute_input()};
  d.flags = attribute_flags();
  d.query = query_keys();
  d.output = OutputKind::Bitmap;
  return d;
}

variants::Space AttributeFilter::space(const variants::SpaceContext& context) const {
  using variants::Value;
  std::vector<variants::Tunable> tunables = own_tunables();
  // Ballots where the device has them (the OpenCL filter on NVIDIA's platform reached 0.74 of the copy probe
  // packing through local memory, CUDA's ballots 0.95-1.0 on the same H100).
  std::vector<Value> packs{Value{"local"}};
  if (has_warp_ballot(context.device)) packs.insert(packs.begin(), Value{"ballot"});
  tunables.push_back(
      {"pack", variants::TunableKind::Compile, packs, packs.front(),
       "how the mask's bits become words: ballot, a warp ballot per row of the tile (CUDA; NVIDIA's "
       "OpenCL through inline PTX); local, a byte per row in local memory packed once per tile"});
  for (variants::Tunable& t : attribute_launch_tunables(context.device)) tunables.push_back(std::move(t));
  return variants::Space(name(), std::move(tunables), own_constraints());
}

Defines AttributeFilter::defines(const variants::Params& params, const DeviceInfo& device) const {
  return AttributeFilterVariant(params, device).defines;
}

datasets::WorkloadSpec AttributeFilter::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec = attribute_workload(name(), options);
  spec.query = parse_query(options.query, attribute_count(spec));
  return spec;
}

DeviceFootprint AttributeFilter::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t image = attribute_image_bytes(spec);
  return {image + attribute_capacity(spec.rows()) / 8 + 16, image};
}

std::unique_ptr<PreparedRun> AttributeFilter::prepare(Engine& engine,
                                                      const datasets::WorkloadSpec& spec) const {
  return std::make_unique<FilterRun>(engine, spec, *this);
}

std::unique_ptr<BoundRun> AttributeFilter::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  return std::make_unique<FilterBound>(engine, binding, *this);
}

}  // namespace varex::operators

namespace varex::operators {

void register_filters(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<CnfFilterOperator>());
  registry.add(std::make_unique<RangeOperator>());
  registry.add(std::make_unique<SemilinearOperator>());
}

}  // namespace varex::operators
