#include "operators/ra_project/ra_project.hpp"

#include <algorithm>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/relation_workload.hpp"

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
    const TupleLayout layout = variant.layout;
    output_->set_layout(layout);
    std::uint32_t a[4] = {0, 0, 0, 0};
    std::copy(keep_.begin(), keep_.end(), a);
    seq.run("project", "ra_project", variant.launch.rows(rows_, variant.ept),
            {KernelArg::of(inputs_->buffer(layout)), KernelArg::of(output_->tuple_buffer()),
             KernelArg::of(static_cast<std::uint32_t>(rows_)), KernelArg::of(width_),
             KernelArg::of(static_cast<std::uint32_t>(inputs_->capacity())),
             KernelArg::of(static_cast<std::uint32_t>(keep_.size())), KernelArg::of(a[0]),
             KernelArg::of(a[1]), KernelArg::of(a[2]), KernelArg::of(a[3])});
  }

  std::vector<std::uint32_t> keep_;
  std::uint64_t rows_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<RowsOutput> output_;
  std::unique_ptr<RelationInputs> inputs_;
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

}  // namespace varex::operators

namespace varex::operators {

void register_ra_project(harness::OperatorRegistry& registry) {
  registry.add(std::make_unique<RaProjectOperator>());
}

}  // namespace varex::operators
