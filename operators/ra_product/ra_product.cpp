#include "operators/ra_product/ra_product.hpp"

#include <algorithm>
#include <memory>

#include "base/errors.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/relation_pair.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DeviceResult;
using harness::KernelSequence;
using harness::LaunchBundle;
using harness::RowsOutput;
using harness::TupleLayout;
using harness::VariantRun;
}  // namespace varex::operators

namespace varex::operators {

namespace {

std::uint64_t twice(std::uint64_t rows) {
  return 2 * rows;
}

// A variant of PRODUCT, decoded once: the tuple layout, the tile (local right tuples x ept left ones), how
// the tiles are staged, ordered and stored, and the defines the kernel is built with.
struct ProductVariant : LaunchBundle {
  ProductVariant(const variants::Params& params, const DeviceInfo& device)
      : LaunchBundle(params, device),
        layout(layout_of(params)),
        local(static_cast<std::uint64_t>(variants::get_int(params, "local"))),
        ept(static_cast<std::uint64_t>(variants::get_int(params, "ept"))),
        stage_local(variants::get_string(params, "stage") == "local"),
        right_major(variants::get_string(params, "order") == "right"),
        vector_store(variants::get_string(params, "store") == "vector") {
    defines = {{"EPT", std::to_string(ept)},
               {"STAGE_LOCAL", stage_local ? "1" : "0"},
               {"RIGHT_MAJOR", right_major ? "1" : "0"},
               {"VECTOR_STORE", vector_store ? "1" : "0"},
               {"LAYOUT_SOA", layout == TupleLayout::Soa ? "1" : "0"}};
  }
  TupleLayout layout;
  std::uint64_t local;
  std::uint64_t ept;
  bool stage_local;   // stage=local
  bool right_major;   // order=right
  bool vector_store;  // store=vector
};

// PRODUCT's kernel, whoever owns the relations and the output: `out` holds `out_capacity` tuples of
// 2 x width words (SoA's stride), every pair written.
void run_product(const ProductVariant& variant, KernelSequence& seq, const PairOperands& in,
                 DeviceBuffer& out, std::uint64_t out_capacity) {
  const std::uint64_t local = variant.local;
  const std::uint64_t ept = variant.ept;
  const std::uint64_t tiles = ((in.n + ept - 1) / ept) * ((in.m + local - 1) / local);  // a work-group each
  seq.run("product", "ra_product", variant.launch.rows(tiles * local),
          {KernelArg::of(in.left), KernelArg::of(in.right), KernelArg::of(out),
           KernelArg::of(static_cast<std::uint32_t>(in.n)), KernelArg::of(static_cast<std::uint32_t>(in.m)),
           KernelArg::of(in.width), KernelArg::of(static_cast<std::uint32_t>(in.left_capacity)),
           KernelArg::of(static_cast<std::uint32_t>(in.right_capacity)), KernelArg::of(out_capacity)});
}

class ProductRun final : public VariantRun<ProductVariant> {
 public:
  ProductRun(Engine& engine, const datasets::WorkloadSpec& spec) : VariantRun(engine, "ra_product") {
    const auto [left, right] = materialise_relation_pair(spec);
    n_ = left.rows();
    m_ = right.rows();
    values_ = left.values();
    output_ =
        std::make_unique<RowsOutput>(engine, 2 * left.attributes(), n_ * m_, product_reference(left, right),
                                     /*counted=*/false);
    inputs_ = std::make_unique<RelationPairInputs>(engine, left, right);
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  void poison() override { output_->poison(); }

  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // Both relations read once, the product written.
  std::uint64_t bytes_moved() const override {
    return (n_ + m_) * (1 + values_) * 4 + output_->bytes_written();
  }
  std::uint64_t working_set_bytes() const override {
    return 2 * (n_ + m_) * (1 + values_) * 4 + output_->bytes_written();
  }

 private:
  ProductVariant decode(const variants::Params& params) const override {
    return ProductVariant(params, engine_.device());
  }

  void run(const ProductVariant& variant, KernelSequence& seq) override {
    const TupleLayout layout = variant.layout;
    output_->set_layout(layout);
    const PairOperands in = inputs_->operands(layout);
    run_product(variant, seq, in, output_->tuple_buffer(), output_->capacity());
  }

  std::uint64_t n_ = 0, m_ = 0;
  std::uint32_t values_ = 0;
  std::unique_ptr<RowsOutput> output_;
  std::unique_ptr<RelationPairInputs> inputs_;
};

// On an application's relations (in any order, in the layout the binding gives, BoundRelationPair): the
// product's n x m tuples (left key, right key, left values, right values), left-major, in the same layout,
// into an output of exactly that size, handed over with n x m rows (not counted: every pair is written).
// Variants of the other layout are refused.
class ProductBound final : public VariantRun<ProductVariant, BoundRun> {
 public:
  ProductBound(Engine& engine, const Binding& binding)
      : VariantRun(engine, "ra_product"),
        pair_(engine, "ra_product", binding),
        out_(engine, 2 * pair_.width(), pair_.layout()) {
    refuse_oversized_output("product", pair_.n(), pair_.m(), pair_.n() * pair_.m());
  }

  datasets::WorkloadClass workload_class() const override { return pair_.workload_class(); }

  std::map<std::string, std::string> fixed() const override {
    return {{"layout", layout_name(pair_.layout())}};
  }
  std::string refuses(const variants::Params& params) const override {
    return pair_.refuses(decode(params).layout, false);
  }

  DeviceResult take_result() override { return out_.take(OutputKind::Rows, pair_.n() * pair_.m()); }

 private:
  ProductVariant decode(const variants::Params& params) const override {
    return ProductVariant(params, engine_.device());
  }

  void run(const ProductVariant& variant, KernelSequence& seq) override {
    if (const std::string refused = pair_.refuses(variant.layout, false); !refused.empty())
      throw UsageError("ra_product: " + refused);
    out_.reserve(pair_.n() * pair_.m());
    run_product(variant, seq, pair_.operands(), out_.tuples(), out_.capacity());
  }

  BoundRelationPair pair_;
  BoundTuples out_;
};

}  // namespace

std::vector<std::uint32_t> product_reference(const datasets::Relation& left,
                                             const datasets::Relation& right) {
  std::vector<std::uint32_t> out;
  out.reserve(left.rows() * right.rows() * (left.attributes() + right.attributes()));
  for (std::uint64_t i = 0; i < left.rows(); ++i) {
    for (std::uint64_t j = 0; j < right.rows(); ++j) {
      out.push_back(left.columns[0][i]);
      out.push_back(right.columns[0][j]);
      for (std::uint32_t c = 1; c < left.attributes(); ++c) out.push_back(left.columns[c][i]);
      for (std::uint32_t c = 1; c < right.attributes(); ++c) out.push_back(right.columns[c][j]);
    }
  }
  return out;
}

WorkloadDecl RaProductOperator::declaration() const {
  WorkloadDecl d;
  d.inputs = {relation_input(), relation_input()};
  d.inputs[0].name = "left";
  d.inputs[1].name = "right";
  d.flags = relation_pair_flags("default: twice --rows");
  d.query = relation_buffer_keys();
  d.output = OutputKind::Rows;
  return d;
}

variants::Space RaProductOperator::space(const variants::SpaceContext& context) const {
  using variants::Value;
  std::vector<variants::Tunable> tunables{
      relation_layout(),
      {"ept",
       variants::TunableKind::Compile,
       {1, 2, 4, 8, 16},
       4,
       "left tuples per work-group: each work-item holds its right tuple in registers and writes its pair "
       "with "
       "each of them"},
      {"stage",
       variants::TunableKind::Compile,
       {Value{"local"}, Value{"none"}},
       Value{"local"},
       "local: the work-group stages its left tuples in local memory first (the source); none: every "
       "work-item reads them from global memory (the same words: the cache broadcasts them)"},
      {"order",
       variants::TunableKind::Compile,
       {Value{"left"}, Value{"right"}},
       Value{"left"},
       "the order the work-groups take the tiles in: left-major (consecutive work-groups write consecutive "
       "output, the output's own order) or right-major (the next left block of one right tile)"},
      {"store",
       variants::TunableKind::Compile,
       {Value{"word"}, Value{"vector"}},
       Value{"word"},
       "how an output tuple is written under AoS: a 32-bit word at a time (the source), or with 16-byte "
       "(8-byte "
       "for 6 words) vector stores"},
      relation_local(context.device, variants::TunableKind::Launch,
                     "work-group size = right tuples per tile"),
      relation_grid(),
  };
  std::vector<variants::Constraint> constraints{
      {"vector stores write AoS tuples (layout=aos); SoA writes words",
       [](const variants::Params& p) {
         return variants::get_string(p, "store") == "word" || variants::get_string(p, "layout") == "aos";
       }},
  };
  return variants::Space("ra_product", std::move(tunables), std::move(constraints));
}

Defines RaProductOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return ProductVariant(params, device).defines;
}

datasets::WorkloadSpec RaProductOperator::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec = relation_pair_workload(name(), options, twice);
  refuse_pair_query(name(), options);
  refuse_oversized_output("product", spec, spec.rows() * relation_rows2(spec));
  return spec;
}

DeviceFootprint RaProductOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t width = 1 + relation_values(spec);
  const std::uint64_t out = spec.rows() * relation_rows2(spec) * 2 * width * 4;
  return {2 * (spec.rows() + relation_rows2(spec)) * width * 4 + out, out};
}

std::unique_ptr<PreparedRun> RaProductOperator::prepare(Engine& engine,
                                                        const datasets::WorkloadSpec& spec) const {
  return std::make_unique<ProductRun>(engine, spec);
}

std::unique_ptr<BoundRun> RaProductOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  return std::make_unique<ProductBound>(engine, binding);
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_product(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaProductOperator>());
}

}  // namespace varex::operators
