#pragma once
// What the Red Fox operators (ra_project, ra_select, ra_reduce, ra_unique, ra_reduce_by_key; document 002)
// share: the workload flags of a relation (--input FILE, or --rows/--values/--keys/--run/--seed), the
// relation a workload names, its image on the device in either layout, and the launch vocabulary (local,
// ept, grid).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/operators/kernel_sequence.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/common/toolkit.hpp"
#include "variants/launch.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::TupleLayout;
}  // namespace varex::operators

namespace varex::operators {

// Kernels index tuples with 32-bit integers; keep head room for rounding up to whole tiles.
constexpr std::uint64_t kMaxRelationRows = (1ULL << 31) - (1ULL << 22);

InputDecl relation_input();
// --input, --rows, --values, --keys, --run, --seed; --keys names `default_keys` as its default.
std::vector<FlagDecl> relation_flags(
    datasets::KeyDistribution default_keys = datasets::KeyDistribution::Uniform);
// The generator and its parameters, or the file (read once here: an empty file, a malformed one or one of
// more than kMaxRelationRows tuples is a UsageError naming the file). The query is left to the operator.
// Under --keys runs the run length (--run, default 16, at least 1) is a parameter of the workload (a
// shape of its class); --run with other generated keys is a UsageError. Without --keys the keys are
// `default_keys` (uniform; ra_unique and ra_reduce_by_key default to runs).
datasets::WorkloadSpec relation_workload(
    const std::string& op, const WorkloadOptions& options,
    datasets::KeyDistribution default_keys = datasets::KeyDistribution::Uniform);
// The relation a workload names (the file read again; UsageError when it has changed since).
datasets::Relation materialise_relation(const datasets::WorkloadSpec& spec);
// The relation file a workload recorded, `rows` tuples of `values` values (an empty file as an empty relation
// of that width); UsageError if the file changed since.
datasets::Relation load_recorded_relation(const std::string& path, std::uint64_t rows, std::uint64_t values);
std::uint32_t relation_values(const datasets::WorkloadSpec& spec);

// The words of a relation on the device: AoS, tuple i at words [i * A, (i + 1) * A); SoA, attribute c of
// tuple i at word c * capacity + i (capacity >= rows; the slack is zero).
std::vector<std::uint32_t> relation_image(const datasets::Relation& relation, TupleLayout layout,
                                          std::uint64_t capacity);
TupleLayout layout_of(const variants::Params& params);  // the `layout` tunable
inline const char* layout_name(TupleLayout layout) {
  return layout == TupleLayout::Soa ? "soa" : "aos";
}
// An attribute's index in a tuple by its name in queries: key 0, v0 1, v1 2, v2 3; nullopt for another name.
std::optional<std::uint32_t> attribute_index(std::string_view name);

// An application's relation, a runtime call's input (harness/operators/bound_run.hpp): `rows` tuples of a
// uint32 key and 1 to 3 uint32 values in the caller's buffer, laid out as the call's buffer keys say
// (relation_buffer_keys): `values` (1 to 3, default 1) and `layout` (aos, the default: tuple i at words
// [i * A, (i + 1) * A); soa: attribute c of tuple i at word c * rows + i, the columns back to back), A = 1 +
// values. An operator that takes such relations declares these keys beside its own query keys
// (RelationOperator::buffer_keys); on the command line --values and the `layout` tunable say the same.
struct BoundRelation {
  const DeviceBuffer* buffer = nullptr;
  std::uint64_t rows = 0;
  std::uint32_t width = 2;  // A: words per tuple
  TupleLayout layout = TupleLayout::Aos;
  std::uint32_t values() const { return width - 1; }
};
std::vector<QueryKeyDecl> relation_buffer_keys();
// The relation in `buffer` as the buffer keys of `query` describe it; they are taken out of `query`, which
// keeps the operator's own keys. UsageError for a bad key value, more than kMaxRelationRows tuples or a
// buffer of fewer than rows * A * 4 bytes.
BoundRelation bound_relation(const std::string& op, const DeviceBuffer& buffer, std::uint64_t rows,
                             std::map<std::string, std::string>& query);

// A relation on one device in both layouts (a variant picks one through `layout`): uploaded once, restored
// on demand. h2d_ms() is the upload of one layout (both move the same bytes).
class RelationInputs {
 public:
  // `capacity`: the tuples each image holds (>= rows; the slack is zero, so kernels may read it).
  RelationInputs(Engine& engine, const datasets::Relation& relation, std::uint64_t capacity);
  const DeviceBuffer& buffer(TupleLayout layout) const { return layout == TupleLayout::Aos ? *aos_ : *soa_; }
  std::uint64_t capacity() const { return capacity_; }
  double h2d_ms() const { return h2d_ms_; }
  void restore();
  std::uint64_t device_bytes() const { return 2 * bytes_; }

 private:
  Engine& engine_;
  std::uint64_t capacity_;
  std::uint64_t bytes_;
  std::unique_ptr<HostBuffer> host_aos_, host_soa_;
  std::unique_ptr<DeviceBuffer> aos_, soa_;
  double h2d_ms_ = 0;
};

// The Red Fox spaces' launch tunables (variants/launch.hpp): `local` 32 .. the device's largest work-group,
// at most 1024, no auto (the kernels size their work-group arrays by it); `grid` cover (one tile of local
// x ept tuples per work-group) or 1–8 work-groups per compute unit striding over the tiles. Their kernels
// guard their own bounds: no padding tunable (LaunchPlan's guard).
variants::Tunable relation_local(const DeviceInfo& device, variants::TunableKind kind,
                                 const std::string& help);
variants::Tunable relation_grid();
// aos or soa, input and output.
variants::Tunable relation_layout();

}  // namespace varex::operators
