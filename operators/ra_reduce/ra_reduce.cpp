#include "operators/ra_reduce/ra_reduce.hpp"

#include <algorithm>
#include <memory>

#include "base/errors.hpp"
#include "harness/backends/vendor_library.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/operators/vendor_variant.hpp"
#include "harness/outputs/scalar.hpp"
#include "operators/common/relations/relation_call.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::add_vendor_variant;
using harness::KernelSequence;
using harness::LaunchBundle;
using harness::ScalarOutput;
using harness::TupleLayout;
using harness::VariantRun;
using harness::vendor_library;
using harness::VendorScratch;
}  // namespace varex::operators

namespace varex::operators {

namespace {

constexpr std::uint64_t kMinLocal = 32;
constexpr std::uint64_t kMaxGroupsPerCu = 8;

std::uint64_t max_parts(std::uint64_t rows, const DeviceInfo& device) {
  return std::max<std::uint64_t>((rows + kMinLocal - 1) / kMinLocal,
                                 kMaxGroupsPerCu * std::max(device.compute_units, 1u)) +
         1;
}

// A variant of REDUCE, decoded once: the work-group reduction, where the partial sums are finished, the
// tuple layout, the work-group size and tuples per work-item, and the defines the kernels are built with.
struct ReduceVariant : LaunchBundle {
  ReduceVariant(const variants::Params& params, const DeviceInfo& device)
      : LaunchBundle(params, device),
        subgroup(variants::get_string(params, "reduce") == "subgroup"),
        finish_on_device(variants::get_string(params, "finish") == "device"),
        layout(layout_of(params)),
        local(static_cast<std::uint64_t>(variants::get_int(params, "local"))),
        ept(static_cast<std::uint64_t>(variants::get_int(params, "ept"))) {
    defines = {{"REDUCE_SUBGROUP", subgroup ? "1" : "0"},
               {"WG_SIZE", std::to_string(local)},
               {"EPT", std::to_string(ept)},
               {"LAYOUT_SOA", layout == TupleLayout::Soa ? "1" : "0"}};
  }
  bool subgroup;          // reduce=subgroup, else the local-memory tree
  bool finish_on_device;  // finish=device, else the host adds the partial sums
  TupleLayout layout;
  std::uint64_t local;
  std::uint64_t ept;
};

// The relation REDUCE reads, whoever owns its buffer: `rows` tuples of `width` words in the variant's
// layout (under soa `capacity` tuples per column), and the attribute summed.
struct ReduceInput {
  const DeviceBuffer& buffer;
  std::uint64_t rows;
  std::uint32_t width;
  std::uint64_t capacity;
  std::uint32_t attribute;
};

// cub::DeviceReduce::Sum of the attribute's column (strided in AoS), widened to 64 bits.
void run_reduce_cub(Engine& engine, VendorScratch& scratch, const ReduceVariant& variant, KernelSequence& seq,
                    const ReduceInput& in, DeviceBuffer& parts) {
  const varex_vendor_table& cub = *vendor_library();
  const auto* base = static_cast<const unsigned*>(engine.native_address(in.buffer));
  const bool soa = variant.layout == TupleLayout::Soa;
  const unsigned* column = base + (soa ? in.attribute * in.capacity : in.attribute);
  const std::uint64_t stride = soa ? 1 : in.width;
  auto* sum = static_cast<unsigned long long*>(engine.native_address(parts));
  seq.vendor("cub_sum", scratch, [&](void* temp, std::size_t* bytes, void* stream) {
    return cub.sum_u32(temp, bytes, column, stride, sum, in.rows, stream);
  });
}

// REDUCE of `in` into `parts` (64-bit words, `most_parts` of them; the vendor call's scratch in `scratch`):
// returns how many partial sums it leaves at the buffer's start (1: the sum itself).
std::uint64_t run_reduce(Engine& engine, VendorScratch& scratch, const ReduceVariant& variant,
                         KernelSequence& seq, const ReduceInput& in, DeviceBuffer& parts,
                         std::uint64_t most_parts) {
  if (in.rows == 0) {
    // The sum of no value, in every variant: no kernel would have a work-item to write it.
    seq.fill("empty", parts, 0, 8);
    return 1;
  }
  if (variant.vendor) {
    run_reduce_cub(engine, scratch, variant, seq, in, parts);
    return 1;
  }
  const std::uint64_t local = variant.local;
  const LaunchShape shape = variant.launch.rows(in.rows, variant.ept);
  const std::uint64_t groups = shape.global / local;
  if (groups > most_parts) throw LaunchError("ra_reduce: more work-groups than partial sums");
  seq.run("reduce", "ra_reduce", shape,
          {KernelArg::of(in.buffer), KernelArg::of(parts), KernelArg::of(static_cast<std::uint32_t>(in.rows)),
           KernelArg::of(in.width), KernelArg::of(static_cast<std::uint32_t>(in.capacity)),
           KernelArg::of(in.attribute)});
  if (!variant.finish_on_device) return groups;
  seq.run("finish", "ra_reduce_finish", LaunchShape{local, local},
          {KernelArg::of(parts), KernelArg::of(static_cast<std::uint32_t>(groups))});
  return 1;
}

class ReduceRun final : public VariantRun<ReduceVariant> {
 public:
  ReduceRun(Engine& engine, const datasets::WorkloadSpec& spec)
      : VariantRun(engine, "ra_reduce"), attribute_(spec.query.at("attr").get<std::uint32_t>()) {
    const datasets::Relation relation = materialise_relation(spec);
    rows_ = relation.rows();
    width_ = relation.attributes();
    output_ = std::make_unique<ScalarOutput>(engine, reduce_reference(relation, attribute_),
                                             max_parts(rows_, engine.device()));
    inputs_ = std::make_unique<RelationInputs>(engine, relation, rows_);
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  void poison() override { output_->poison(); }

  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // The attribute read once and the sum written.
  std::uint64_t bytes_moved() const override { return rows_ * 4 + output_->bytes_written(); }
  std::uint64_t working_set_bytes() const override { return rows_ * width_ * 4 + output_->bytes_written(); }

 private:
  ReduceVariant decode(const variants::Params& params) const override {
    return ReduceVariant(params, engine_.device());
  }

  void run(const ReduceVariant& variant, KernelSequence& seq) override {
    output_->set_parts(
        run_reduce(engine_, scratch_, variant, seq,
                   {inputs_->buffer(variant.layout), rows_, width_, inputs_->capacity(), attribute_},
                   output_->buffer(), output_->max_parts()));
  }

  std::uint32_t attribute_;
  std::uint64_t rows_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<ScalarOutput> output_;
  std::unique_ptr<RelationInputs> inputs_;
  VendorScratch scratch_{engine_};
};

// On an application's relation (relation_call.hpp): the sum, an unsigned 64-bit word (modulo 2^64) at
// the start of a buffer of the bound run's own. A variant that finishes on the host (finish=host)
// downloads the partial sums, adds them on the host, as the prepared run's collection does, and writes
// the sum to the buffer's first word.
class ReduceBound final : public RelationCall<ReduceVariant> {
 public:
  ReduceBound(Engine& engine, const BoundRelation& relation, datasets::WorkloadClass workload_class,
              std::uint32_t attribute)
      : RelationCall(engine, "ra_reduce", relation, std::move(workload_class), OutputKind::Scalar, 0),
        attribute_(attribute),
        max_parts_(max_parts(relation.rows, engine.device())),
        host_sum_(engine.allocate_host(8)) {}

 private:
  void run(const ReduceVariant& variant, KernelSequence& seq) override {
    DeviceBuffer& out = output(max_parts_ * 8);
    const std::uint64_t parts =
        run_reduce(engine_, scratch_, variant, seq,
                   {in(), relation_.rows, relation_.width, relation_.rows, attribute_}, out, max_parts_);
    if (parts > 1) finish_on_host(seq, out, parts);
  }

  // The partial sums downloaded and added, the sum written to the buffer's first word.
  void finish_on_host(KernelSequence& seq, DeviceBuffer& out, std::uint64_t parts) {
    if (!host_parts_ || host_parts_->bytes() < parts * 8) host_parts_ = engine_.allocate_host(parts * 8);
    seq.read(*host_parts_, out, parts * 8, 0);
    const auto* words = host_parts_->as<std::uint64_t>();
    std::uint64_t sum = 0;
    for (std::uint64_t p = 0; p < parts; ++p) sum += words[p];
    *host_sum_->as<std::uint64_t>() = sum;
    engine_.upload(out, 0, *host_sum_, 8)->elapsed_ms();
  }

  std::uint32_t attribute_;
  std::uint64_t max_parts_;
  std::unique_ptr<HostBuffer> host_parts_, host_sum_;
  VendorScratch scratch_{engine_};
};

}  // namespace

std::uint32_t parse_reduce_attribute(const std::map<std::string, std::string>& query, std::uint32_t values) {
  for (const auto& [key, value] : query) {
    if (key != "attr") throw UsageError("ra_reduce: unknown query key '" + key + "' (keys: attr)");
  }
  const auto it = query.find("attr");
  const std::string name = it == query.end() ? "v0" : it->second;
  const std::optional<std::uint32_t> found = attribute_index(name);
  if (!found) {
    throw UsageError("ra_reduce: attr=" + name + " is no attribute (key, v0, v1, v2)");
  }
  const std::uint32_t index = *found;
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

Defines RaReduceOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return ReduceVariant(params, device).defines;
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

std::unique_ptr<BoundRun> RaReduceOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  std::map<std::string, std::string> query = binding.query;
  const BoundRelation relation = bound_relation(name(), *binding.inputs[0], binding.rows[0], query);
  const std::uint32_t attribute = parse_reduce_attribute(query, relation.values());
  return std::make_unique<ReduceBound>(
      engine, relation, relation_call_class(*this, relation, {{"attr", attribute}}), attribute);
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_reduce(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaReduceOperator>());
}

}  // namespace varex::operators
