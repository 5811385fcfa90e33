#pragma once
// The host half of the Red Fox SELECT skeleton (kernels/common/tile_select.h), which ra_select, ra_unique and
// ra_reduce_by_key share: the intermediate partitions (one per tile of local x ept tuples), the partition
// counts and their scan's buffers, and the launches of the family's scan, combine and gather. An operator
// runs its own partition kernel (and edge kernel) first, writing mid() and counts().
#include <cstdint>
#include <memory>

#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/variant_run.hpp"
#include "operators/common/relations/relation_workload.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
using harness::LaunchBundle;
using harness::LaunchPlan;
using harness::TupleLayout;
}  // namespace varex::operators

namespace varex::operators {

// What tells the family's operators apart in their variants: the kernel source, and the operator's own
// algorithm beside the source's (its `algorithm` value and the define that switches the kernels to it).
struct TileSelectFamily {
  const char* kernels;    // "ra_select"
  const char* algorithm;  // "single_pass"
  const char* define;     // "ALGO_SINGLE"
  // The own algorithm again with warp ballots (its kernels under TILE_BALLOT), offered on devices that have
  // them (harness::has_warp_ballot); nullptr where the family has none.
  const char* ballot_algorithm = nullptr;  // "single_pass_ballot"
};

// A variant of the family, decoded once: the tuple layout, the tile (local x ept tuples), whether the
// operator's own algorithm runs, and the defines every family kernel is built with.
struct TileSelectVariant : LaunchBundle {
  TileSelectVariant(const variants::Params& params, const DeviceInfo& device, const TileSelectFamily& family);
  TupleLayout layout;
  bool own_algorithm;  // the family's own algorithm, with ballots or without
  bool ballot;         // its ballot form
  std::uint64_t local;
  std::uint64_t ept;
};

class TileSelect {
 public:
  // The largest tile (local x ept) the family's spaces allow (the partitions are rounded up to it), and the
  // smallest work-group (which bounds the number of tiles).
  static constexpr std::uint64_t kMaxTile = 2048;
  static constexpr std::uint64_t kMinLocal = 32;

  // A variant's tiles.
  struct Tiles {
    std::uint64_t local = 0;
    std::uint32_t count = 0;
    LaunchShape over_tiles;  // a work-group per tile, or the variant's grid striding over them
  };

  // `rows` input tuples; `width` words per kept item; `skips`: a partition may start later (skip()).
  TileSelect(Engine& engine, std::uint64_t rows, std::uint32_t width, bool skips = false);

  Tiles tiles(const TileSelectVariant& variant) const;
  DeviceBuffer& mid() { return *mid_; }
  DeviceBuffer& counts() { return *counts_; }
  DeviceBuffer& skip() { return *skip_; }
  // Per-tile words an operator may use besides counts() (ra_reduce_by_key's tails and sizes).
  std::unique_ptr<DeviceBuffer> tile_words() const;
  std::uint32_t mid_capacity() const { return static_cast<std::uint32_t>(mid_capacity_); }
  void poison();

  // tile_select_scan, _combine and _gather: the partitions, `sizes[t]` items each (counts(), or the
  // operator's own sizes), dense into `out`, their number into `count`.
  void gather(KernelSequence& seq, const Tiles& tiles, const LaunchPlan& plan, const DeviceBuffer& sizes,
              DeviceBuffer& out, DeviceBuffer& count, std::uint64_t out_capacity);

  // The intermediate's bytes (for a run's working set) and all device bytes of `rows` tuples of `width`
  // words (for an operator's footprint).
  std::uint64_t mid_bytes() const { return mid_capacity_ * width_ * 4; }
  static std::uint64_t device_bytes(std::uint64_t rows, std::uint64_t width);

 private:
  Engine& engine_;
  std::uint64_t rows_;
  std::uint32_t width_;
  std::uint64_t mid_capacity_;
  std::uint64_t max_tiles_;
  std::unique_ptr<DeviceBuffer> mid_, counts_, offsets_, blocks_, skip_;
};

}  // namespace varex::operators
