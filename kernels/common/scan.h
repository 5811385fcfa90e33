// Prefix sums of uint, written once for OpenCL and CUDA.
//
// Work-group scans (any work-group size, one value per work-item, through `size` uints of local memory):
//   wg_scan_inclusive_u32(scratch, value, size), wg_scan_exclusive_u32(scratch, value, size)
//   wg_reserve(scratch, base, count, counter): places in an output shared by all work-groups
// Every work-item of the group calls them with size == the work-group's size; they end with a barrier,
// so the scratch array can be reused at once.
//
// A device-wide exclusive scan in three launches (the pieces; common/scan_kernels.h makes kernels of them):
//   scan_tile_exclusive  one tile of SCAN_TILE = SCAN_LOCAL * SCAN_ITEMS elements per work-group: its
//                        exclusive sums in place of the elements, its total into tile_sums[tile]
//   scan_totals          one work-group: exclusive sums of the tile totals in place, their sum behind them
//   scan_add_back        each element plus its tile's offset; the grand total behind the last element
// Defines: SCAN_LOCAL (the work-group size of the tile and totals kernels), SCAN_ITEMS (elements per
// work-item).
#ifndef VAREX_SCAN_H
#define VAREX_SCAN_H

#include "common/portable.h"

FUNC uint wg_scan_inclusive_u32(LOCAL uint* scratch, uint value, uint size) {
  const uint l = lid();
  scratch[l] = value;
  LOCAL_BARRIER();
  for (uint offset = 1; offset < size; offset <<= 1) {
    const uint add = l >= offset ? scratch[l - offset] : 0u;
    LOCAL_BARRIER();
    scratch[l] += add;
    LOCAL_BARRIER();
  }
  const uint inclusive = scratch[l];
  LOCAL_BARRIER();
  return inclusive;
}

FUNC uint wg_scan_exclusive_u32(LOCAL uint* scratch, uint value, uint size) {
  return wg_scan_inclusive_u32(scratch, value, size) - value;
}

// Places in an output that every work-group appends to: each work-item asks for `count`, the work-group
// takes them all with one atomic on `counter` (an aggregated atomic: the output's order is free) and each
// work-item gets its first place. Every work-item calls it; `scratch` has lsize() uints, `base` one.
FUNC uint wg_reserve(LOCAL uint* scratch, LOCAL uint* base, uint count, GLOBAL uint* counter) {
  const uint inclusive = wg_scan_inclusive_u32(scratch, count, lsize());
  if (lid() == lsize() - 1) base[0] = inclusive ? atomic_add_u32(counter, inclusive) : 0u;
  LOCAL_BARRIER();
  const uint first = base[0] + inclusive - count;
  LOCAL_BARRIER();
  return first;
}

#if defined(SCAN_LOCAL) && defined(SCAN_ITEMS)
#define SCAN_TILE (SCAN_LOCAL * SCAN_ITEMS)
// A tile passes through local memory skewed by one word in 32 against bank conflicts.
#define SCAN_TILE_AT(i) ((i) + (i) / 32)
#define SCAN_TILE_WORDS (SCAN_TILE + SCAN_TILE / 32)

// Exclusive sums of tile `tile` of in[0..n) into out (which may be in), the tile's total into
// tile_sums[tile]. The tile is loaded and stored coalesced; each work-item scans SCAN_ITEMS consecutive
// elements. `tile_mem` has SCAN_TILE_WORDS uints, `part` SCAN_LOCAL.
FUNC void scan_tile_exclusive(GLOBAL const uint* in, GLOBAL uint* out, GLOBAL uint* tile_sums, uint n,
                              uint tile, LOCAL uint* tile_mem, LOCAL uint* part) {
  const uint l = lid();
  const uint base = tile * SCAN_TILE;
  PRAGMA_UNROLL for (uint k = 0; k < SCAN_ITEMS; ++k) {
    const uint i = k * SCAN_LOCAL + l;
    tile_mem[SCAN_TILE_AT(i)] = base + i < n ? in[base + i] : 0u;
  }
  LOCAL_BARRIER();
  uint items[SCAN_ITEMS];
  uint sum = 0;
  PRAGMA_UNROLL for (uint k = 0; k < SCAN_ITEMS; ++k) {
    items[k] = tile_mem[SCAN_TILE_AT(l * SCAN_ITEMS + k)];
    sum += items[k];
  }
  uint running = wg_scan_exclusive_u32(part, sum, SCAN_LOCAL);
  PRAGMA_UNROLL for (uint k = 0; k < SCAN_ITEMS; ++k) {
    tile_mem[SCAN_TILE_AT(l * SCAN_ITEMS + k)] = running;
    running += items[k];
  }
  if (l == SCAN_LOCAL - 1) tile_sums[tile] = running;
  LOCAL_BARRIER();
  PRAGMA_UNROLL for (uint k = 0; k < SCAN_ITEMS; ++k) {
    const uint i = k * SCAN_LOCAL + l;
    if (base + i < n) out[base + i] = tile_mem[SCAN_TILE_AT(i)];
  }
}

// One work-group of SCAN_LOCAL: exclusive sums of sums[0..count) in place, their total into sums[count].
FUNC void scan_totals(GLOBAL uint* sums, uint count, LOCAL uint* part) {
  const uint l = lid();
  uint carry = 0;
  for (uint first = 0; first < count; first += SCAN_TILE) {
    const uint base = first + l * SCAN_ITEMS;
    uint items[SCAN_ITEMS];
    uint sum = 0;
    PRAGMA_UNROLL for (uint k = 0; k < SCAN_ITEMS; ++k) {
      items[k] = base + k < count ? sums[base + k] : 0u;
      sum += items[k];
    }
    uint running = carry + wg_scan_exclusive_u32(part, sum, SCAN_LOCAL);
    PRAGMA_UNROLL for (uint k = 0; k < SCAN_ITEMS; ++k) {
      if (base + k < count) sums[base + k] = running;
      running += items[k];
    }
    if (l == SCAN_LOCAL - 1) part[0] = running;
    LOCAL_BARRIER();
    carry = part[0];
    LOCAL_BARRIER();
  }
  if (l == 0) sums[count] = carry;
}

// Any grid: out[i] += tile_sums[i / SCAN_TILE] for i < n, and out[n] = the total at tile_sums[ntiles].
FUNC void scan_add_back(GLOBAL uint* out, GLOBAL const uint* tile_sums, uint n, uint ntiles) {
  for (uint i = gid(); i < n; i += gsize()) out[i] += tile_sums[i / SCAN_TILE];
  if (gid() == 0) out[n] = tile_sums[ntiles];
}
#endif  // SCAN_LOCAL && SCAN_ITEMS

#endif  // VAREX_SCAN_H
