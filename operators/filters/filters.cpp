#include "operators/filters/filters.hpp"

#include <algorithm>
#include <numeric>

#include "base/errors.hpp"
#include "harness/operators/registry.hpp"
#include "harness/outputs/bitmap.hpp"
#include "harness/outputs/value.hpp"

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
    if (query_.contains("where")) selective_order_ = clause_order_by_selectivity();
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  void poison() override {
    bitmap_->poison();
    counted_->poison();
  }

  void run(const AttributeFilterVariant& variant, KernelSequence& seq) override {
    count_only_ = variant.count_only;
    if (count_only_) seq.fill("clear", counted_->buffer(), 0, 16);
    const LaunchShape shape = variant.shape(rows_);
    const auto launch = [&](const std::string& label, std::uint32_t clause, std::uint32_t pass, bool count) {
      seq.run(label, "filter", shape,
              {KernelArg::of(inputs_->buffer()), KernelArg::of(bitmap_->buffer()),
               KernelArg::of(counted_->buffer()), KernelArg::of(static_cast<std::uint32_t>(rows_)),
               KernelArg::of(static_cast<std::uint64_t>(inputs_->capacity())), KernelArg::of(clause),
               KernelArg::of(pass), KernelArg::of(static_cast<std::uint32_t>(count ? 1 : 0))});
    };
    if (!variant.passes || variant.clauses < 2) {
      launch("filter", 0, 0, count_only_);
    } else {
      std::vector<std::uint32_t> order(variant.clauses);
      std::iota(order.begin(), order.end(), 0u);
      if (variant.selective_first) order = selective_order_;
      for (std::size_t i = 0; i < order.size(); ++i) {
        launch("pass", order[i], i == 0 ? 1 : 2, count_only_ && i + 1 == order.size());
      }
    }
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
  // The operator's variant and the query's clauses: CLAUSE_i each, CLAUSES, KEEP (their conjunction).
  AttributeFilterVariant decode(const variants::Params& params) const override {
    AttributeFilterVariant variant(params, engine_.device());
    const std::vector<std::string> clauses = op_.clauses(query_, variant);
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

  // The clauses from the one that keeps the fewest rows (of the first 65536) to the one that keeps the most:
  // later passes then evaluate fewer rows.
  std::vector<std::uint32_t> clause_order_by_selectivity() const {
    const Cnf cnf = where_of(query_);
    std::vector<std::uint64_t> kept(cnf.all.size(), 0);
    for (std::uint64_t r = 0; r < std::min<std::uint64_t>(rows_, 65536); ++r) {
      for (std::size_t c = 0; c < cnf.all.size(); ++c) {
        kept[c] += keeps(Cnf{{cnf.all[c]}}, table_, r) ? 1 : 0;
      }
    }
    std::vector<std::uint32_t> order(cnf.all.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return kept[a] < kept[b]; });
    return order;
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

}  // namespace

AttributeFilterVariant::AttributeFilterVariant(const variants::Params& params, const DeviceInfo& device)
    : AttributeVariant(params, device),
      passes(params.count("strategy") && variants::get_string(params, "strategy") != "fused"),
      selective_first(params.count("order") && variants::get_string(params, "order") == "selective_first"),
      count_only(params.count("output") && variants::get_string(params, "output") == "count") {
  if (params.count("compare")) compare = range_compare_of(variants::get_string(params, "compare"));
  defines.push_back({"PRED_FILTER", "1"});
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
  std::vector<variants::Tunable> tunables = own_tunables();
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

}  // namespace varex::operators

namespace varex::operators {

void register_filters(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<CnfFilterOperator>());
  registry.add(std::make_unique<RangeOperator>());
  registry.add(std::make_unique<SemilinearOperator>());
}

}  // namespace varex::operators
