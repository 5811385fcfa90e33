#include "operators/ra_project/ra_project.hpp"

#include <algorithm>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/relation_call.hpp"
#include "operators/common/relations/relation_workload.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
using harness::LaunchBundle;
using harness::RowsOutput;
using harness::TupleLayout;
using harness::VariantRun;
}  // namespace varex::operators

namespace varex::operators {

namespace {

std::vector<std::uint32_t> keep_of(const datasets::WorkloadSpec& spec) {
  return spec.query.at("keep").get<std::vector<std::uint32_t>>();
}

// A variant of PROJECT, decoded once: the tuple layout, tuples per work-item, and the defines the kernel is
// built with.
struct ProjectVariant : LaunchBundle {
  ProjectVariant(const variants::Params& params, const DeviceInfo& device)
      : LaunchBundle(params, device),
        layout(layout_of(params)),
        ept(static_cast<std::uint64_t>(variants::get_int(params, "ept"))) {
    defines = {{"EPT", std::to_string(ept)}, {"LAYOUT_SOA", layout == TupleLayout::Soa ? "1" : "0"}};
  }
  TupleLayout layout;
  std::uint64_t ept;
};

// The relation PROJECT reads, whoever owns its buffer: `rows` tuples of `width` words in the variant's
// layout (under soa `capacity` tuples per column).
struct ProjectInput {
  const DeviceBuffer& buffer;
  std::uint64_t rows;
  std::uint32_t width;
  std::uint64_t capacity;
};

// The kept attributes of every tuple of `in`, in the variant's layout, dense into `out` (under soa one
// column of `rows` words after the other).
void run_project(const ProjectVariant& variant, KernelSequence& seq, const ProjectInput& in,
                 const std::vector<std::uint32_t>& keep, DeviceBuffer& out) {
  std::uint32_t a[4] = {0, 0, 0, 0};
  std::copy(keep.begin(), keep.end(), a);
  seq.run("project", "ra_project", variant.launch.rows(in.rows, variant.ept),
          {KernelArg::of(in.buffer), KernelArg::of(out), KernelArg::of(static_cast<std::uint32_t>(in.rows)),
           KernelArg::of(in.width), KernelArg::of(static_cast<std::uint32_t>(in.capacity)),
           KernelArg::of(static_cast<std::uint32_t>(keep.size())), KernelArg::of(a[0]), KernelArg::of(a[1]),
           KernelArg::of(a[2]), KernelArg::of(a[3])});
}

class ProjectRun final : public VariantRun<ProjectVariant> {
 public:
  ProjectRun(Engine& engine, const datasets::WorkloadSpec& spec)
      : VariantRun(engine, "ra_project"), keep_(keep_of(spec)) {
    const datasets::Relation relation = materialise_relation(spec);
    rows_ = relation.rows();
    width_ = relation.attributes();
    output_ = std::make_unique<RowsOutput>(engine, static_cast<std::uint32_t>(keep_.size()), rows_,
                                           project_reference(relation, keep_), /*counted=*/false);
    inputs_ = std::make_unique<RelationInputs>(engine, relation, rows_);
  }

  double h2d_ms() const override { return inputs_->h2d_ms(); }
  void restore_inputs() override { inputs_->restore(); }

  void poison() override { output_->poison(); }

  Collected collect(Check how) override { return harness::collect(*output_, how); }
  Digest reference() const override { return output_->reference(); }
  // At least the kept attributes are read (all of a tuple's words under AoS, which this does not count)
  // and written.
  std::uint64_t bytes_moved() const override { return rows_ * keep_.size() * 4 + output_->bytes_written(); }
  std::uint64_t working_set_bytes() const override { return rows_ * width_ * 4 + output_->bytes_written(); }

 private:
  ProjectVariant decode(const variants::Params& params) const override {
    return ProjectVariant(params, engine_.device());
  }

  void run(const ProjectVariant& variant, KernelSequence& seq) override {
    output_->set_layout(variant.layout);
    run_project(variant, seq, {inputs_->buffer(variant.layout), rows_, width_, inputs_->capacity()}, keep_,
                output_->tuple_buffer());
  }

  std::vector<std::uint32_t> keep_;
  std::uint64_t rows_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<RowsOutput> output_;
  std::unique_ptr<RelationInputs> inputs_;
};

// On an application's relation (relation_call.hpp): the kept attributes of every tuple, in the input's
// layout (soa: one column of rows words per kept attribute, back to back), in one buffer of the bound run's
// own.
class ProjectBound final : public RelationCall<ProjectVariant> {
 public:
  ProjectBound(Engine& engine, const BoundRelation& relation, datasets::WorkloadClass workload_class,
               std::vector<std::uint32_t> keep)
      : RelationCall(engine, "ra_project", relation, std::move(workload_class), OutputKind::Rows,
                     static_cast<std::uint32_t>(keep.size())),
        keep_(std::move(keep)) {}

 private:
  void run(const ProjectVariant& variant, KernelSequence& seq) override {
    DeviceBuffer& out = output(relation_.rows * keep_.size() * 4);
    run_project(variant, seq, {in(), relation_.rows, relation_.width, relation_.rows}, keep_, out);
  }

  std::vector<std::uint32_t> keep_;
};

}  // namespace

std::vector<std::uint32_t> parse_projection(const std::map<std::string, std::string>& query,
                                            std::uint32_t values) {
  for (const auto& [key, value] : query) {
    if (key != "keep") throw UsageError("ra_project: unknown query key '" + key + "' (keys: keep)");
  }
  const auto it = query.find("keep");
  std::vector<std::uint32_t> keep;
  for (const std::string& raw : split(it == query.end() ? "key" : it->second, ',')) {
    const std::string name(trim(raw));
    const std::optional<std::uint32_t> found = attribute_index(name);
    if (!found) {
      throw UsageError("ra_project: keep=" + it->second + ": '" + name +
                       "' is no attribute (key, v0, v1, v2)");
    }
    const std::uint32_t index = *found;
    if (index > values) {
      throw UsageError("ra_project: keep names " + name + ", but the relation's tuples have " +
                       std::to_string(values) + " value" + (values == 1 ? "" : "s"));
    }
    if (std::find(keep.begin(), keep.end(), index) != keep.end()) {
      throw UsageError("ra_project: keep names " + name + " twice");
    }
    keep.push_back(index);
  }
  return keep;
}

std::vector<std::uint32_t> project_reference(const datasets::Relation& relation,
                                             const std::vector<std::uint32_t>& keep) {
  std::vector<std::uint32_t> out;
  out.reserve(relation.rows() * keep.size());
  for (std::uint64_t r = 0; r < relation.rows(); ++r) {
    for (std::uint32_t a : keep) out.push_back(relation.columns[a][r]);
  }
  return out;
}

variants::Space RaProjectOperator::space(const variants::SpaceContext& context) const {
  std::vector<variants::Tunable> tunables{
      relation_layout(),
      {"ept",
       variants::TunableKind::Compile,
       {1, 2, 4, 8},
       1,
       "tuples per work-item and tile (the source: 1); a work-item's tuples lie local apart"},
      relation_local(context.device, variants::TunableKind::Launch, "work-group size"),
      relation_grid(),
  };
  return variants::Space("ra_project", std::move(tunables), {});
}

Defines RaProjectOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return ProjectVariant(params, device).defines;
}

std::vector<QueryKeyDecl> RaProjectOperator::query_keys() const {
  return {{"keep", "attributes to keep, in output order: a comma list of key, v0, v1, v2 (default key)"}};
}

void RaProjectOperator::read_query(const WorkloadOptions& options, datasets::WorkloadSpec& spec) const {
  spec.query = {{"keep", parse_projection(options.query, relation_values(spec))}};
}

DeviceFootprint RaProjectOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  const std::uint64_t image = spec.rows() * (1 + relation_values(spec)) * 4;
  const std::uint64_t out = spec.rows() * keep_of(spec).size() * 4;
  return {2 * image + out, std::max(image, out)};
}

std::unique_ptr<PreparedRun> RaProjectOperator::prepare(Engine& engine,
                                                        const datasets::WorkloadSpec& spec) const {
  return std::make_unique<ProjectRun>(engine, spec);
}

std::unique_ptr<BoundRun> RaProjectOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  std::map<std::string, std::string> query = binding.query;
  const BoundRelation relation = bound_relation(name(), *binding.inputs[0], binding.rows[0], query);
  std::vector<std::uint32_t> keep = parse_projection(query, relation.values());
  datasets::WorkloadClass workload_class = relation_call_class(*this, relation, {{"keep", keep}});
  return std::make_unique<ProjectBound>(engine, relation, std::move(workload_class), std::move(keep));
}

}  // namespace varex::operators

namespace varex::operators {

void register_ra_project(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaProjectOperator>());
}

}  // namespace varex::operators
