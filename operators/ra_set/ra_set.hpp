#pragma once
// Red Fox SET INTERSECTION, SET UNION and SET DIFFERENCE (document 002, sec. 3.2.5): ra_intersect, ra_union
// and ra_difference, one operator class parameterised by the operation, one kernel source (kernels/ra_set.cl,
// the operation a define). Two relations sorted by whole tuple (key, then values; 1 to 3 values, the same on
// both sides); tuples match when key and values are equal, with multiset semantics as C++'s
// std::set_intersection, std::set_union and std::set_difference on sorted ranges: a tuple present m times on
// the left and n times on the right appears min(m, n), max(m, n) and max(m - n, 0) times (left minus right).
// The output's order is the variant's choice (compared as a multiset); the device counts it.
//
// Variants: `algorithm` rank (the source's rule: each candidate's rank among its copies against the copies
// on the other side, found by binary search; then a stable compaction) or merge_path (the merge of both
// relations cut into equal shares by diagonal binary search, each share merged sequentially counting runs
// of equal tuples, after a partition kernel that cuts the merge into tiles), `compaction` (three_kernels:
// count, scan and write; single_pass: each tile merged once and placed by a decoupled look-back), `write`
// (merge path: direct, or staged: the tile's kept tuples compacted in local memory and written together),
// `local`, `ept` (candidates per work-item; 15 an odd share), `grid`; and on CUDA devices impl=cub, Thrust's
// set algorithm over whole tuples from the vendor library.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/operators/variant_run.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::LaunchBundle;
}  // namespace varex::operators

namespace varex::operators {

enum class SetOperation { Intersection, Union, Difference };

// A variant, decoded once: the operation, the algorithm, the tile (local x ept candidates) and the defines
// the kernels are built with (SET_OP, ALGO_MERGE, WG_SIZE, EPT).
struct RaSetVariant : LaunchBundle {
  RaSetVariant(const variants::Params& params, const DeviceInfo& device, SetOperation operation);
  SetOperation operation;
  bool merge;        // algorithm=merge_path (else rank)
  bool single_pass;  // compaction=single_pass (else count, offsets, scatter)
  std::uint64_t local;
  std::uint64_t ept;
};

// Host reference: std::set_intersection / std::set_union / std::set_difference over the tuples (key, then
// values) of two relations sorted by tuple; dense AoS tuples, in the order the standard algorithm gives.
std::vector<std::uint32_t> set_reference(SetOperation operation, const datasets::Relation& left,
                                         const datasets::Relation& right);

class RaSetOperator final : public Operator {
 public:
  explicit RaSetOperator(SetOperation operation) : operation_(operation) {}
  SetOperation operation() const { return operation_; }

  std::string name() const override;
  std::string description() const override;
  std::string kernel_family() const override { return "ra_set"; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  // Two relations of two words per tuple or more.
  std::uint64_t default_rows(std::uint64_t cache_rows) const override { return cache_rows / 4; }
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // On an application's relations: inputs left and right, packed tuples of 1 + values uint32 words (query
  // keys `values`, 1 to 3, default 1; `layout`, which must be aos), each SORTED by tuple (key, then values,
  // as unsigned integers; the caller sorts them, nothing checks). The result: one buffer of packed tuples
  // of the same width, in the variant's order, allocated for the largest result (min(n, m), n + m or n
  // tuples); `rows` its tuples as the device counted them.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;

 private:
  SetOperation operation_;
};

}  // namespace varex::operators
