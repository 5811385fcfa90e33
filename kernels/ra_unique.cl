// Red Fox UNIQUE (document 002, sec. 3.2.7, alg. 8): drops consecutive duplicates, comparing keys only;
// the first tuple (key and every value) of each run of equal keys is kept, dense and in input order. The
// input need not be sorted. The input is cut into tiles of WG_SIZE x EPT tuples, work-item w of a tile
// taking the EPT consecutive tuples from w x EPT on; a tuple is kept when its key differs from its
// predecessor's.
//
// ALGO_COMPACT=0, the source's kernels (alg. 8, then SELECT's last three):
//   1 ra_unique_partition  every tuple compares its key with its neighbour's (the previous tuple: the
//                          source's pseudo-code compares input[w] with itself; the text means the
//                          neighbour), the tile's first tuple is kept unconditionally (the source's flag
//                          "initially set at 1"); a local prefix sum places the kept tuples, which are
//                          staged in local memory and written in bulk to the tile's own partition of an
//                          intermediate buffer, with their count
//   2 ra_unique_edges      the separate kernel for the partition edges: where a tile's first key equals
//                          the previous tile's last, that first tuple is a duplicate: the partition
//                          shrinks by one (counts[t]) and its gather starts one later (skip[t])
//   3-5                    the family's scan of the partition counts and gather, each partition from its
//                          skip on (common/tile_select.h: tile_select_scan, _combine, _gather)
// ALGO_COMPACT=1, one compaction (common/compact.h) with the flags computed where they are needed:
//   1 ra_unique_count      kept tuples per tile (compact_group_total)
//   2 compact_offsets      one work-group: their exclusive sums and the number kept (common/compact.h)
//   3 ra_unique_scatter    every kept tuple written straight to its output position (compact_first_slot)
//
//   WG_SIZE      work-group size (sizes the local arrays)
//   EPT          tuples per work-item and tile
//   ALGO_COMPACT 0: the source's kernels; 1: the compaction
//   LAYOUT_SOA   0: packed tuples (attribute c of tuple i at i * width + c); 1: one array per attribute
//                (attribute c of tuple i at c * capacity + i), in the input, the intermediate and the output
#include "common/portable.h"

// The scans' shape: one partition count per work-item (source, as ra_select) or the compaction's tiles.
#define SCAN_LOCAL WG_SIZE
#if ALGO_COMPACT
#define SCAN_ITEMS EPT
#else
#define SCAN_ITEMS 1
#endif
#define TILE_SELECT_SKIP 1
#define COMPACT_OFFSETS_KERNEL
#include "common/tile_select.h"

// Bit j set where tuple first + j (< n) is kept: its key differs from the previous tuple's. `tile_start`:
// the tuple that counts as a head whatever its predecessor (the source's partition start; 0 for the
// compaction, where only the first tuple of all is one).
FUNC uint unique_mask(CONSTANT_PTR uint* RESTRICT in, uint first, uint n, uint width, uint capacity,
                      uint tile_start) {
  uint mask = 0;
  uint previous = 0;
  if (first < n && first != tile_start) previous = in[AT(first - 1, 0, width, capacity)];
  for (uint j = 0; j < EPT; ++j) {
    const uint i = first + j;
    if (i < n) {
      const uint key = in[AT(i, 0, width, capacity)];
      if (i == tile_start || key != previous) mask |= 1u << j;
      previous = key;
    }
  }
  return mask;
}

#if !ALGO_COMPACT

KERNEL void ra_unique_partition(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT mid,
                                GLOBAL uint* RESTRICT counts, uint n, uint width, uint in_capacity,
                                uint mid_capacity, uint tiles) {
  LOCAL_ARRAY uint scan[WG_SIZE + 1];
  LOCAL_ARRAY uint stage[4 * TILE];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    const uint first = t * TILE + lid() * EPT;
    const uint mask = unique_mask(in, first, n, width, in_capacity, t * TILE);
    const uint total = stage_tile(in, first, mask, width, in_capacity, scan, stage);
    write_staged(stage, mid, (ulong)t * TILE, total, width, mid_capacity);
    if (lid() == 0) counts[t] = total;
    LOCAL_BARRIER();
  }
}

// Any grid. Tile t > 0 whose first key equals tile t - 1's last drops its first kept tuple.
KERNEL void ra_unique_edges(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT counts,
                            GLOBAL uint* RESTRICT skip, uint width, uint in_capacity, uint tiles) {
  for (uint t = gid(); t < tiles; t += gsize()) {
    const uint start = t * TILE;
    const uint duplicate =
        t > 0 && in[AT(start, 0, width, in_capacity)] == in[AT(start - 1, 0, width, in_capacity)] ? 1u : 0u;
    skip[t] = duplicate;
    counts[t] -= duplicate;
  }
}

#else

KERNEL void ra_unique_count(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT tile_counts, uint n,
                            uint width, uint in_capacity, uint tiles) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    const uint mask = unique_mask(in, compact_first_item(t), n, width, in_capacity, 0);
    const uint total = compact_group_total(part, mask);
    if (lid() == 0) tile_counts[t] = total;
  }
}

KERNEL void ra_unique_scatter(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out,
                              CONSTANT_PTR uint* RESTRICT tile_offsets, uint n, uint width, uint in_capacity,
                              uint out_capacity, uint tiles) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    const uint first = compact_first_item(t);
    const uint mask = unique_mask(in, first, n, width, in_capacity, 0);
    uint at = compact_first_slot(part, mask, tile_offsets[t]);
    for (uint j = 0; j < EPT; ++j) {
      if ((mask >> j) & 1u) {
        for (uint c = 0; c < width; ++c)
          out[AT(at, c, width, out_capacity)] = in[AT(first + j, c, width, in_capacity)];
        ++at;
      }
    }
  }
}

#endif
