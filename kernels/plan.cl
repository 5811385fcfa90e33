// The kernels of a plan's element-wise steps (SELECT, arithmetic, PROJECT), one source for OpenCL and CUDA.
// A group of steps that read one relation runs as one count/offsets/scatter triple (the stable compaction of
// common/compact.h; compact_offsets scans every compacted output's tile counts) or one map kernel where no
// step drops rows: one step alone when the plan is not fused, a whole chain of steps (Kernel Weaver's
// fusion) when it is. What the steps compute is generated on the host (operators/plan/plan_codegen.cpp)
// and put before this file, as a query compiler would:
//   PLAN_IN_PARAMS    the columns read, "GLOBAL const uint* RESTRICT c0, …," (a trailing comma; may be empty)
//   PLAN_OUT_PARAMS   the columns written, "GLOBAL uint* RESTRICT o0, …,"
//   PLAN_MASK_DECL    one mask per compacted output: bit k set where row first + k is kept
//   PLAN_ROW_DECL     the build rows a row of the probe side joins (j0, j1, …: one per join, -1: none)
//   PLAN_MASKS(k)     sets bit k of every mask for row r (a join's lookup is part of the predicate)
//   PLAN_LOOKUPS      finds the build rows of a kept row again, before its values are written
//   PLAN_TILE_COUNTS  writes each compacted output's count of the tile
//   PLAN_SCATTER      writes each compacted output's kept rows of the tile
//   PLAN_MAP(r)       writes row r of the outputs that keep every row
// Values are expressions over c<i>[r]: 32-bit columns are read as int, 64-bit ones (arithmetic results)
// through a cast to slong.
// Specialised further by SCAN_LOCAL (work-group size) and SCAN_ITEMS (rows per work-item, at most 32): a
// work-group takes a tile of SCAN_LOCAL x SCAN_ITEMS consecutive rows, each work-item SCAN_ITEMS of them,
// so the outputs keep the input's order (common/compact.h).
// A join probes a hash table of its build side's unique keys (a primary key): open addressing, linear
// probing, keys in hk, build rows in hr, built by plan_build before the group that probes it runs.
// Row counts stay on the device: a relation's count is n_at[n_index], so a chain runs without reading
// anything back; grids cover the input's capacity and tiles past the count keep nothing.
#include "common/portable.h"

#define COMPACT_OFFSETS_KERNEL  // the offsets step, one work-group per compacted output
#include "common/compact.h"

// The empty slot of a join's hash table (a build key may not take it).
#define PLAN_EMPTY_KEY (-2147483647 - 1)

// murmur3's finaliser over the table's slots.
FUNC uint plan_slot(int key, uint mask) {
  uint h = (uint)key;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h & mask;
}

// The build row of `key`, or -1.
FUNC int plan_lookup(GLOBAL const int* RESTRICT keys, GLOBAL const uint* RESTRICT rows, uint mask, int key) {
  for (uint s = plan_slot(key, mask);; s = (s + 1) & mask) {
    const int k = keys[s];
    if (k == key) return (int)rows[s];
    if (k == PLAN_EMPTY_KEY) return -1;
  }
}

// Inserts the build side's keys (the table is cleared to PLAN_EMPTY_KEY before): any grid.
KERNEL void plan_build(GLOBAL const uint* RESTRICT key_column, GLOBAL int* keys, GLOBAL uint* rows,
                       const uint mask, GLOBAL const uint* RESTRICT n_at, const uint n_index) {
  const uint n = n_at[n_index];
  for (uint r = gid(); r < n; r += gsize()) {
    const int key = (int)key_column[r];
    uint s = plan_slot(key, mask);
    while (atomic_cas_i32(&keys[s], PLAN_EMPTY_KEY, key) != PLAN_EMPTY_KEY) s = (s + 1) & mask;
    rows[s] = r;
  }
}

// Declares the masks of this work-item's SCAN_ITEMS rows from `first` (bit k: row first + k kept), as the
// count and the scatter both evaluate them.
#define PLAN_TILE_MASKS(n, first)                       \
  PLAN_MASK_DECL                                        \
  PRAGMA_UNROLL for (uint k = 0; k < SCAN_ITEMS; ++k) { \
    const uint r = (first) + k;                         \
    if (r < (n)) {                                      \
      PLAN_ROW_DECL                                     \
      PLAN_MASKS(k)                                     \
    }                                                   \
  }

// One work-group per tile: counts[o * stride + tile] = the rows of the tile that output o keeps.
KERNEL void plan_count(PLAN_IN_PARAMS GLOBAL uint* RESTRICT counts, GLOBAL const uint* RESTRICT n_at,
                       const uint n_index, const uint stride) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  const uint n = n_at[n_index];
  const uint tile = group_id();
  const uint first = compact_first_item(tile);
  PLAN_TILE_MASKS(n, first)
  PLAN_TILE_COUNTS
}

// One work-group per tile, as plan_count: the kept rows, each at its tile's offset plus the kept rows
// before it. The predicates are evaluated again rather than stored (recomputing is cheaper than a flag
// array's write and read).
KERNEL void plan_scatter(PLAN_IN_PARAMS PLAN_OUT_PARAMS GLOBAL const uint* RESTRICT counts,
                         GLOBAL const uint* RESTRICT n_at, const uint n_index, const uint stride) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  const uint n = n_at[n_index];
  const uint tile = group_id();
  const uint first = compact_first_item(tile);
  PLAN_TILE_MASKS(n, first)
  PLAN_SCATTER
}

// Every row: the outputs that keep every row (arithmetic without a selection before it). Nothing is
// compacted, so a work-group's rows are interleaved (row tile + k x SCAN_LOCAL + lid()): coalesced.
KERNEL void plan_map(PLAN_IN_PARAMS PLAN_OUT_PARAMS GLOBAL const uint* RESTRICT n_at, const uint n_index) {
  const uint n = n_at[n_index];
  PRAGMA_UNROLL for (uint k = 0; k < SCAN_ITEMS; ++k) {
    const uint r = group_id() * SCAN_TILE + k * SCAN_LOCAL + lid();
    if (r < n) {
      PLAN_MAP(r)
    }
  }
}
