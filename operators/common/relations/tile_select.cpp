#include "operators/common/relations/tile_select.hpp"

#include <algorithm>

#include "base/params.hpp"
#include "harness/outputs/output.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
using harness::kPoisonWord;
using harness::LaunchBundle;
using harness::LaunchPlan;
using harness::round_up;
using harness::TupleLayout;
using harness::warp_ballot_defines;
}  // namespace varex::operators

namespace varex::operators {

namespace {

std::uint64_t capacity_of(std::uint64_t rows) {
  return round_up(std::max<std::uint64_t>(rows, 1), TileSelect::kMaxTile);
}

std::uint64_t max_tiles_of(std::uint64_t rows) {
  return (rows + TileSelect::kMinLocal - 1) / TileSelect::kMinLocal + 1;
}

}  // namespace

TileSelectVariant::TileSelectVariant(const variants::Params& params, const DeviceInfo& device,
                                     const TileSelectFamily& family)
    : LaunchBundle(params, device),
      layout(layout_of(params)),
      ballot(family.ballot_algorithm && variants::get_string(params, "algorithm") == family.ballot_algorithm),
      local(static_cast<std::uint64_t>(variants::get_int(params, "local"))),
      ept(static_cast<std::uint64_t>(variants::get_int(params, "ept"))) {
  own_algorithm = ballot || variants::get_string(params, "algorithm") == family.algorithm;
  defines = {{family.define, own_algorithm ? "1" : "0"},
             {"WG_SIZE", std::to_string(local)},
             {"EPT", std::to_string(ept)},
             {"LAYOUT_SOA", layout == TupleLayout::Soa ? "1" : "0"}};
  if (ballot) {
    defines.push_back({"TILE_BALLOT", "1"});
    for (Define& d : warp_ballot_defines(device)) defines.push_back(std::move(d));
  }
}

TileSelect::TileSelect(Engine& engine, std::uint64_t rows, std::uint32_t width, bool skips)
    : engine_(engine),
      rows_(rows),
      width_(width),
      mid_capacity_(capacity_of(rows)),
      max_tiles_(max_tiles_of(rows)) {
  mid_ = engine.allocate(mid_capacity_ * width_ * 4);
  counts_ = tile_words();
  offsets_ = tile_words();
  blocks_ = engine.allocate((max_tiles_ / kMinLocal + 2) * 4);
  if (skips) skip_ = tile_words();
}

std::unique_ptr<DeviceBuffer> TileSelect::tile_words() const {
  return engine_.allocate(max_tiles_ * 4);
}

TileSelect::Tiles TileSelect::tiles(const TileSelectVariant& variant) const {
  Tiles t;
  t.local = variant.local;
  const std::uint64_t tile = variant.local * variant.ept;
  t.count = static_cast<std::uint32_t>((rows_ + tile - 1) / tile);
  t.over_tiles = variant.launch.rows(std::uint64_t{t.count} * t.local);
  return t;
}

void TileSelect::poison() {
  engine_.fill(*mid_, kPoisonWord, 0, mid_->bytes())->elapsed_ms();
}

void TileSelect::gather(KernelSequence& seq, const Tiles& tiles, const LaunchPlan& plan,
                        const DeviceBuffer& sizes, DeviceBuffer& out, DeviceBuffer& count,
                        std::uint64_t out_capacity) {
  const auto nblocks = static_cast<std::uint32_t>((tiles.count + tiles.local - 1) / tiles.local);
  seq.run(
      "scan", "tile_select_scan", plan.rows(std::uint64_t{nblocks} * tiles.local),
      {KernelArg::of(sizes), KernelArg::of(*offsets_), KernelArg::of(*blocks_), KernelArg::of(tiles.count)});
  seq.run("combine", "tile_select_combine", LaunchShape{tiles.local, tiles.local},
          {KernelArg::of(*blocks_), KernelArg::of(count), KernelArg::of(nblocks)});
  std::vector<KernelArg> args{KernelArg::of(*mid_), KernelArg::of(out), KernelArg::of(sizes)};
  if (skip_) args.push_back(KernelArg::of(*skip_));
  for (const KernelArg& a :
       {KernelArg::of(*offsets_), KernelArg::of(*blocks_), KernelArg::of(tiles.count), KernelArg::of(width_),
        KernelArg::of(mid_capacity()), KernelArg::of(static_cast<std::uint32_t>(out_capacity))})
    args.push_back(a);
  seq.run("gather", "tile_select_gather", tiles.over_tiles, args);
}

std::uint64_t TileSelect::device_bytes(std::uint64_t rows, std::uint64_t width) {
  return capacity_of(rows) * width * 4 + 4 * max_tiles_of(rows) * 4 +
         (max_tiles_of(rows) / kMinLocal + 2) * 4;
}

}  // namespace varex::operators
