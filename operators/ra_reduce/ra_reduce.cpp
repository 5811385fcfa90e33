#include "operators/ra_reduce/ra_reduce.hpp"

#include <algorithm>
#include <memory>

#include "base/errors.hpp"
#include "harness/backends/vendor_library.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/vendor_variant.hpp"
#include "harness/outputs/scalar.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {

namespace {

const char* const kAttributeNames[] = {"key", "v0", "v1", "v2"};
constexpr std::uint64_t kMinLocal = 32;
constexpr std::uint64_t kMaxGroupsPerCu = 8;

std::uint64_t max_parts(std::uint64_t rows, const DeviceInfo& device) {
  return std::max<std::uint64_t>((rows + kMinLocal - 1) / kMinLocal,
                                 kMaxGroupsPerCu * std::max(device.compute_units, 1u)) +
         1;
}

class ReduceRun final : public PreparedRun {
 public:
  ReduceRun(Engine& engine, const datasets::WorkloadSpec& spec)
      : engine_(engine), attribute_(spec.query.at("attr").get<std::uint32_t>()) {
    const datasets::Relation relation = materialise_relation(spec);
    rows_ = relation.rows();
    width_ = relation.attributes();
    output_ = std::make_unique<ScalarOutput>(engine, reduce_reference(relation, attribute_),
                                             max_parts(rows_, engine.device()));
    inputs_ = std::make_unique<RelationInputs>(engine, relation, rows_);
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  CompileInfo compile(const variants::Params& params) override {
    CompileInfo info;
    if (is_vendor(params)) return info;  // built with varex
    engine_.compile(kernel_source(engine_.device().backend, "ra_reduce"),
                    RaReduceOperator().defines(params, engine_.device()), &info);
    return info;
  }

  void poison() override { output_->poison(); }

  ExecutionTimes execute(const variants::Params& params) override {
    const TupleLayout layout = layout_of(params);
    if (rows_ == 0) {
      // The sum of no value, in every variant: no kernel would have a work-item to write it.
      KernelSequence empty(engine_);
      empty.fill("empty", output_->buffer(), 0, 8);
      output_->set_parts(1);
      return empty.times();
    }
    if (is_vendor(params)) return execute_cub(layout);
    const Program& program = engine_.compile(kernel_source(engine_.device().backend, "ra_reduce"),
                                             RaReduceOperator().defines(params, engine_.device()));
    KernelSequence seq(engine_, program);
    const std::uint64_t local = variants::get_int(params, "local");
    const LaunchShape shape =
        LaunchPlan(params, engine_.device()).rows(rows_, variants::get_int(params, "ept"));
    const std::uint64_t groups = shape.global / local;
    if (groups > output_->max_parts()) throw LaunchError("ra_reduce: more work-groups than partial sums");
    seq.run("reduce", "ra_reduce", shape,
            {KernelArg::of(inputs_->buffer(layout)), KernelArg::of(output_->buffer()),
             KernelArg::of(static_cast<std::uint32_t>(rows_)), KernelArg::of(width_),
             KernelArg::of(static_cast<std::uint32_t>(inputs_->capacity())), KernelArg::of(attribute_)});
    if (variants::get_string(params, "finish") == "device") {
      seq.run("finish", "ra_reduce_finish", LaunchShape{local, local},
              {KernelArg::of(output_->buffer()), KernelArg::of(static_cast<std::uint32_t>(groups))});
      output_->set_parts(1);
    } else {
      output_->set_parts(groups);
    }
    return seq.times();
  }

  // cub::DeviceReduce::Sum of the attribute's column (strided in AoS), widened to 64 bits.
  ExecutionTimes execute_cub(TupleLayout layout) {
    const varex_vendor_table& cub = *vendor_library();
    const auto* base = static_cast<const unsigned*>(engine_.native_address(inputs_->buffer(layout)));
    const bool soa = layout == TupleLayout::Soa;
    const unsigned* column = base + (soa ? attribute_ * inputs_->capacity() : attribute_);
    const std::uint64_t stride = soa ? 1 : width_;
    auto* sum = static_cast<unsigned long long*>(engine_.native_address(output_->buffer()));
    KernelSequence seq(engine_);
    seq.vendor("cub_sum", scratch_, [&](void* temp, std::size_t* bytes, void* stream) {
      return cub.sum_u32(temp, bytes, column, stride, sum, rows_, stream);
    });
    output_->set_parts(1);
    return seq.times();
  }

  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // The attribute read once and the sum written.
  std::uint64_t bytes_moved() const override { return rows_ * 4 + output_->bytes_written(); }
  std::uint64_t working_set_bytes() const override { return rows_ * width_ * 4 + output_->bytes_written(); }

 private:
  Engine& engine_;
  std::uint32_t attribute_;
  std::uint64_t rows_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<ScalarOutput> output_;
  std::unique_ptr<RelationInputs> inputs_;
  VendorScratch scratch_{engine_};
};

}  // namespace

std::uint32_t parse_reduce_attribute(const std::map<std::string, std::string>& query, std::uint32_t values) {
  for (const auto& [key, value] : query) {
    if (key != "attr") throw UsageError("ra_reduce: unknown query key '" + key + "' (keys: attr)");
  }
  const auto it = query.find("attr");
  const std::string name = it == query.end() ? "v0" : it->second;
  const auto* found = std::find(std::begin(kAttributeNames), std::end(kAttributeNames), name);
  if (found == std::end(kAttributeNames)) {
    throw UsageError("ra_reduce: attr=" + name + " is no attribute (key, v0, v1, v2)");
  }
  const auto index = static_cast<std::uint32_t>(found - std::begin(kAttributeNames));
  if (index > values) {
    throw UsageError("ra_reduce: attr=" + name + ", but the relation's tuples have " +
                     std::to_string(values) + " value" + (values == 1 ? "" : "s"));
  }
  return index;
}

std::uint64_t reduce_reference(const datasets::Relation& relation, std::uint32_t attribute) {
  std::uint64_t sum = 0;
  for (std::uint32_t v : relation.columns.at(attribute)) sum += v;
  return sum;
}

variants::Space RaReduceOperator::space(const variants::SpaceContext& context) const {
  using variants::Value;
  std::vector<variants::Tunable> tunables{
      {"reduce",
       variants::TunableKind::Compile,
       {Value{"tree"}, Value{"subgroup"}},
       Value{"tree"},
       "tree: the source's local-memory tree (alg. 9); subgroup: sub-group reduction (OpenCL "
       "sub_group_reduce_add where the device has cl_khr_subgroups, else the shared work-group sum of "
       "common/reduce.h: warp shuffles on CUDA, a local-memory tree on OpenCL)"},
      {"finish",
       variants::TunableKind::Launch,
       {Value{"host"}, Value{"device"}},
       Value{"host"},
       "host: the work-groups' partial sums are downloaded and added on the host, as in the source; device: "
       "a second kernel (one work-group) adds them"},
      relation_layout(),
      relation_local(context.device, variants::TunableKind::Compile,
                     "work-group size (compile-time: sizes the local array)"),
      {"ept",
       variants::TunableKind::Compile,
       {1, 2, 4, 8, 16},
       1,
       "tuples per work-item and tile; a work-item's tuples lie local apart"},
      relation_grid(),
  };
  std::vector<variants::Constraint> constraints;
  std::vector<variants::Inactive> inactive;
  add_vendor_variant(context.device, "DeviceReduce::Sum of the column widened to 64 bits", tunables, inactive,
                     {"layout"});
  return variants::Space("ra_reduce", std::move(tunables), std::move(constraints), std::move(inactive));
}

Defines RaReduceOperator::defines(const variants::Params& params, const DeviceInfo&) const {
  return {{"REDUCE_SUBGROUP", variants::get_string(params, "reduce") == "subgroup" ? "1" : "0"},
          {"WG_SIZE", std::to_string(variants::get_int(params, "local"))},
          {"EPT", std::to_string(variants::get_int(params, "ept"))},
          {"LAYOUT_SOA", layout_of(params) == TupleLayout::Soa ? "1" : "0"}};
}

std::vector<QueryKeyDecl> RaReduceOperator::query_keys() const {
  return {{"attr", "the attribute to sum: key, v0, v1 or v2 (default v0)"}};
}

void RaReduceOperator::read_query(const WorkloadOptions& options, datasets::WorkloadSpec& spec) const {
  spec.query = {{"attr", parse_reduce_attribute(options.query, relation_values(spec))}};
}

DeviceFootprint RaReduceOperator::footprint(const datasets::WorkloadSpec& spec,
                                            const DeviceInfo& device) const {
  const std::uint64_t image = spec.rows() * (1 + relation_values(spec)) * 4;
  return {2 * image + max_parts(spec.rows(), device) * 8, image};
}

std::unique_ptr<PreparedRun> RaReduceOperator::prepare(Engine& engine,
                                                       const datasets::WorkloadSpec& spec) const {
  return std::make_unique<ReduceRun>(engine, spec);
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_reduce(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaReduceOperator>());
}

}  // namespace varex::operators
