// Stable stream compaction, written once for OpenCL and CUDA. Work-group g owns tile g, SCAN_TILE =
// SCAN_LOCAL * SCAN_ITEMS consecutive items, and each work-item SCAN_ITEMS consecutive items of it, so
// output positions follow input order:
//   1. count:   every work-item forms a mask of its kept items (bit k: item k kept); compact_group_total
//               gives the tile's count, written to tile_counts[g]
//   2. scan:    the tile counts' exclusive sums (scan_totals of common/scan.h: one work-group, the total
//               kept behind them)
//   3. scatter: compact_first_slot gives each work-item the output position of its first kept item
//               from its tile's offset; its kept items follow one by one
// A family supplies the predicate; compact_flag_mask reads it from a flag array (non-zero: keep).
#ifndef VAREX_COMPACT_H
#define VAREX_COMPACT_H

#include "common/scan.h"

#if defined(SCAN_LOCAL) && defined(SCAN_ITEMS)
// The first of the SCAN_ITEMS items of this work-item in tile `tile`.
FUNC uint compact_first_item(uint tile) {
  return tile * SCAN_TILE + lid() * SCAN_ITEMS;
}

// Bit k set where flags[first + k] is non-zero and first + k < n.
FUNC uint compact_flag_mask(GLOBAL const uint* flags, uint first, uint n) {
  uint mask = 0;
  PRAGMA_UNROLL for (uint k = 0; k < SCAN_ITEMS; ++k) {
    if (first + k < n && flags[first + k] != 0u) mask |= 1u << k;
  }
  return mask;
}

// The items the work-group keeps (every work-item gets it); `part` has SCAN_LOCAL uints.
FUNC uint compact_group_total(LOCAL uint* part, uint mask) {
  const uint inclusive = wg_scan_inclusive_u32(part, popcount_u32(mask), SCAN_LOCAL);
  if (lid() == SCAN_LOCAL - 1) part[0] = inclusive;
  LOCAL_BARRIER();
  const uint total = part[0];
  LOCAL_BARRIER();
  return total;
}

// The kept items of the work-items before this one, and the work-group's total into *total, from one scan.
// `part` holds the scan until the caller's next barrier: the caller passes one before scanning it again.
FUNC uint compact_group_slot(LOCAL uint* part, uint mask, uint* total) {
  const uint count = popcount_u32(mask);
  const uint inclusive = wg_scan_inclusive_u32(part, count, SCAN_LOCAL);
  *total = part[SCAN_LOCAL - 1];
  return inclusive - count;
}

// The output position of this work-item's first kept item: its tile's offset plus the kept items of
// the work-items before it.
FUNC uint compact_first_slot(LOCAL uint* part, uint mask, uint tile_offset) {
  return tile_offset + wg_scan_exclusive_u32(part, popcount_u32(mask), SCAN_LOCAL);
}

#ifdef COMPACT_OFFSETS_KERNEL
// Step 2 as a kernel, for a family that defines COMPACT_OFFSETS_KERNEL before including this file. One
// work-group per output o of a family that compacts several at once (a fused plan group; one elsewhere):
// o's tile counts, `stride` words from the previous output's, in place into their exclusive sums, the number
// kept behind them and into totals[o].
KERNEL void compact_offsets(GLOBAL uint* RESTRICT tile_counts, GLOBAL uint* RESTRICT totals, uint tiles,
                            uint stride) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  GLOBAL uint* sums = tile_counts + group_id() * stride;
  scan_totals(sums, tiles, part);
  if (lid() == 0) totals[group_id()] = sums[tiles];
}
#endif
#endif  // SCAN_LOCAL && SCAN_ITEMS

#endif  // VAREX_COMPACT_H
