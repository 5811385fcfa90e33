#include "operators/common/relations/tile_select_operator.hpp"

#include "harness/operators/bound_run.hpp"
#include "harness/operators/vendor_variant.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::add_vendor_variant;
using harness::has_warp_ballot;
}  // namespace varex::operators

namespace varex::operators {

variants::Space TileSelectOperator::space(const variants::SpaceContext& context) const {
  using variants::Value;
  const TileSelectFamily& family = space_.family;
  std::vector<Value> algorithms{Value{"source"}, Value{family.algorithm}};
  if (family.ballot_algorithm && has_warp_ballot(context.device))
    algorithms.emplace_back(family.ballot_algorithm);
  std::vector<variants::Tunable> tunables{
      {"algorithm", variants::TunableKind::Compile, algorithms, Value{"source"}, space_.algorithm_help},
      relation_layout(),
      relation_local(context.device, variants::TunableKind::Compile,
                     "work-group size = partition size in work-items (compile-time: sizes the local arrays)"),
      {"ept",
       variants::TunableKind::Compile,
       {1, 2, 4, 8, 16},
       1,
       "tuples per work-item (consecutive; the ballot pass: 32 apart); a tile (partition) holds local x ept "
       "tuples; the source: 1; 16 for the ballot pass only"},
      relation_grid(),
  };
  const std::uint64_t local_mem = context.device.local_mem;
  const TileSelectSpace& s = space_;
  std::vector<variants::Constraint> constraints{
      {"a tile (local x ept tuples) holds at most " + std::to_string(TileSelect::kMaxTile) +
           " tuples, but for the ballot pass, which stages nothing (and alone takes ept 16)",
       [ballot =
            std::string(family.ballot_algorithm ? family.ballot_algorithm : "")](const variants::Params& p) {
         if (!ballot.empty() && variants::get_string(p, "algorithm") == ballot) return true;
         return variants::get_int(p, "ept") <= 8 &&
                static_cast<std::uint64_t>(variants::get_int(p, "local") * variants::get_int(p, "ept")) <=
                    TileSelect::kMaxTile;
       }},
      {s.staging + " (" + std::to_string(s.staged_bytes) +
           " bytes per tuple) and scan must fit the device's "
           "local memory",
       [local_mem, s](const variants::Params& p) {
         const auto local = static_cast<std::uint64_t>(variants::get_int(p, "local"));
         const auto ept = static_cast<std::uint64_t>(variants::get_int(p, "ept"));
         const std::string algorithm = variants::get_string(p, "algorithm");
         const bool ballot = s.family.ballot_algorithm && algorithm == s.family.ballot_algorithm;
         const bool stages = !ballot && (s.own_algorithm_stages || algorithm != s.family.algorithm);
         return local_mem == 0 || !stages ||
                local * ept * s.staged_bytes + local * s.scan_bytes + 64 <= local_mem;
       }},
  };
  std::vector<variants::Inactive> inactive;
  add_vendor_variant(context.device, space_.vendor_call, tunables, inactive, space_.vendor_honours);
  return variants::Space(name(), std::move(tunables), std::move(constraints), std::move(inactive));
}

std::unique_ptr<BoundRun> TileSelectOperator::bind(Engine& engine, const Binding& binding) const {
  check_binding(*this, binding);
  std::map<std::string, std::string> query = binding.query;
  const BoundRelation relation = bound_relation(name(), *binding.inputs[0], binding.rows[0], query);
  // The call as a workload: what the parts and the class read. No generator: the call knows nothing of
  // how its keys are distributed.
  datasets::WorkloadSpec spec;
  spec.op = name();
  spec.params = {{"rows", relation.rows}, {"values", relation.values()}};
  read_bound_query(query, spec);
  datasets::WorkloadClass workload_class = this->workload_class(spec);
  workload_class.shape.erase("generator");
  return std::make_unique<RelationBound>(engine, parts(spec), relation, std::move(workload_class));
}

void TileSelectOperator::read_bound_query(const std::map<std::string, std::string>&,
                                          datasets::WorkloadSpec&) const {}

Defines TileSelectOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return TileSelectVariant(params, device, space_.family).defines;
}

}  // namespace varex::operators
