// The device-wide exclusive scan's three kernels, as harness/primitives/scan.hpp (DeviceScan) launches
// them: a family that includes this header (after defining SCAN_LOCAL and SCAN_ITEMS) has
//   scan_tiles(in, out, tile_sums, n)              grid: one work-group of SCAN_LOCAL per tile
//   scan_sums(tile_sums, ntiles)                   grid: one work-group of SCAN_LOCAL
//   scan_add(out, tile_sums, n, ntiles)            any grid
// out holds n + 1 uints: the exclusive sums of in[0..n), then the total. in may be out.
#ifndef VAREX_SCAN_KERNELS_H
#define VAREX_SCAN_KERNELS_H

#include "common/scan.h"

KERNEL void scan_tiles(GLOBAL const uint* in, GLOBAL uint* out, GLOBAL uint* tile_sums, const uint n) {
  LOCAL_ARRAY uint tile_mem[SCAN_TILE_WORDS];
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  scan_tile_exclusive(in, out, tile_sums, n, group_id(), tile_mem, part);
}

KERNEL void scan_sums(GLOBAL uint* tile_sums, const uint ntiles) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  scan_totals(tile_sums, ntiles, part);
}

KERNEL void scan_add(GLOBAL uint* out, GLOBAL const uint* tile_sums, const uint n, const uint ntiles) {
  scan_add_back(out, tile_sums, n, ntiles);
}

#endif  // VAREX_SCAN_KERNELS_H
