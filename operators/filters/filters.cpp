#include "operators/filters/filters.hpp"

#include <algorithm>
#include <numeric>

#include "base/errors.hpp"
#include "harness/operators/registry.hpp"
#include "harness/outputs/bitmap.hpp"
#include "harness/outputs/value.hpp"

namespace varex::operators {

namespace {

bool counts_only(const variants::Params& params) {
  return params.count("output") && variants::get_string(params, "output") == "count";
}

class FilterRun final : public PreparedRun {
 public:
  FilterRun(Engine& engine, const datasets::WorkloadSpec& spec, const AttributeFilter& op)
      : engine_(engine), op_(op), query_(spec.query) {
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

  CompileInfo compile(const variants::Params& params) override {
    CompileInfo info;
    engine_.compile(kernel_source(engine_.device().backend, "predicates"), defines(params), &info);
    return info;
  }

  void poison() override {
    bitmap_->poison();
    counted_->poison();
  }

  ExecutionTimes execute(const variants::Params& params) override {
    count_only_ = counts_only(params);
    const Program& program =
        engine_.compile(kernel_source(engine_.device().backend, "predicates"), defines(params));
    KernelSequence seq(engine_, program);
    if (count_only_) seq.fill("clear", counted_->buffer(), 0, 16);
    const LaunchShape shape = attribute_shape(params, engine_.device(), rows_);
    const auto launch = [&](const std::string& label, std::uint32_t clause, std::uint32_t pass, bool count) {
      seq.run(label, "filter", shape,
              {KernelArg::of(inputs_->buffer()), KernelArg::of(bitmap_->buffer()),
               KernelArg::of(counted_->buffer()), KernelArg::of(static_cast<std::uint32_t>(rows_)),
               KernelArg::of(static_cast<std::uint64_t>(inputs_->capacity())), KernelArg::of(clause),
               KernelArg::of(pass), KernelArg::of(static_cast<std::uint32_t>(count ? 1 : 0))});
    };
    const std::size_t clauses = op_.clauses(query_, params).size();
    if (!params.count("strategy") || variants::get_string(params, "strategy") == "fused" || clauses < 2) {
      launch("filter", 0, 0, count_only_);
    } else {
      std::vector<std::uint32_t> order(clauses);
      std::iota(order.begin(), order.end(), 0u);
      if (variants::get_string(params, "order") == "selective_first") order = selective_order_;
      for (std::size_t i = 0; i < order.size(); ++i) {
        launch("pass", order[i], i == 0 ? 1 : 2, count_only_ && i + 1 == order.size());
      }
    }
    return seq.times();
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
  Defines defines(const variants::Params& params) const {
    Defines d = op_.defines(params, engine_.device());
    const std::vector<std::string> clauses = op_.clauses(query_, params);
    std::string keep;
    for (std::size_t i = 0; i < clauses.size(); ++i) {
      d.push_back({"CLAUSE_" + std::to_string(i), clauses[i]});
      keep += (keep.empty() ? "(" : "&(") + clauses[i] + ")";
    }
    d.push_back({"CLAUSES", std::to_string(clauses.size())});
    if (!keep.empty()) d.push_back({"KEEP", keep});
    return d;
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

  Engine& engine_;
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

Defines AttributeFilter::defines(const variants::Params& params, const DeviceInfo&) const {
  Defines d = attribute_launch_defines(params);
  d.push_back({"PRED_FILTER", "1"});
  // range's `compare` changes the expression the runner passes as KEEP; naming it here keeps its two compile
  // parts two programs where the workload is not known (the NVRTC compile test of every compile part).
  if (params.count("compare")) d.push_back({"RANGE_COMPARE", variants::get_string(params, "compare")});
  return d;
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
