#pragma once
// The operators of the SELECT family (ra_select, ra_unique, ra_reduce_by_key) as one base: a relation
// operator whose space is the family's (the source's algorithm or the operator's own, layout, local, ept,
// grid; tiles of at most TileSelect::kMaxTile tuples whose staging fits the device's local memory; the vendor
// variant) and whose defines are TileSelectVariant's. An operator says how it differs (TileSelectSpace) and
// adds its footprint and run.
#include <cstdint>
#include <string>
#include <vector>

#include "operators/common/relations/relation_operator.hpp"
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

 protected:
  const TileSelectFamily& family() const { return space_.family; }

 private:
  TileSelectSpace space_;
};

}  // namespace varex::operators
