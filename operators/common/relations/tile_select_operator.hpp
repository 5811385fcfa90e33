#pragma once
// The operators of the SELECT family (ra_select, ra_unique, ra_reduce_by_key) as one base: a relation
// operator whose space is the family's (the source's algorithm or the operator's own, layout, local, ept,
// grid; tiles of at most TileSelect::kMaxTile tuples whose staging fits the device's local memory; the vendor
// variant), whose defines are TileSelectVariant's and whose run on an application's relation (bind; the
// relation as bound_relation reads it, the result as RelationBound hands it over) is written once here. An
// operator says how it differs (TileSelectSpace, parts, its query) and adds its footprint and prepared run.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "operators/common/relations/relation_operator.hpp"
#include "operators/common/relations/relation_run.hpp"
#include "operators/common/relations/tile_select.hpp"

namespace varex::operators {

struct TileSelectSpace {
  TileSelectFamily family;
  std::string algorithm_help;         // what the source's and the operator's own algorithm do
  std::string staging;                // what the source's kernels keep in local memory, for the constraint
  std::uint64_t staged_bytes = 0;     // local memory per tuple of a tile, under the source's algorithm
  std::uint64_t scan_bytes = 0;       // and per work-item (its scan)
  bool own_algorithm_stages = false;  // whether the own algorithm needs the same local memory
  std::string vendor_call;            // the library's algorithm, for the help text
  std::vector<std::string> vendor_honours;  // own tunables the vendor variant reads
};

class TileSelectOperator : public RelationOperator {
 public:
  TileSelectOperator(std::string description, datasets::KeyDistribution keys, TileSelectSpace space)
      : RelationOperator(space.family.kernels, std::move(description), OutputKind::Rows, keys),
        space_(std::move(space)) {}

  variants::Space space(const variants::SpaceContext& context) const final;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const final;
  // The relation (query keys `values` and `layout`, relation_buffer_keys) and the operator's query; the
  // workload class is the operator's for the call as a workload of no generator: rows, values and the query.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const final;

 protected:
  const TileSelectFamily& family() const { return space_.family; }
  std::vector<QueryKeyDecl> buffer_keys() const final { return relation_buffer_keys(); }
  // What both runs take from the operator for a workload (its rows, values and query; for a call, as bind
  // makes it).
  virtual TileSelectParts parts(const datasets::WorkloadSpec& spec) const = 0;
  // A call's query keys (the buffer keys taken out) into `spec`: its query and what the class reads of it.
  // None by default (check_binding has refused keys the operator does not declare).
  virtual void read_bound_query(const std::map<std::string, std::string>& query,
                                datasets::WorkloadSpec& spec) const;

 private:
  TileSelectSpace space_;
};

}  // namespace varex::operators
