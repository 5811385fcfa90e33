// The SELECT skeleton of the Red Fox family (document 002, sec. 3.2.2, alg. 2-4), written once for SELECT,
// UNIQUE and REDUCE BY KEY (the host half: operators/common/relations/tile_select.hpp). The input is cut into
// tiles of WG_SIZE x EPT tuples, work-item w of a tile taking the EPT consecutive tuples from w x EPT on. The
// family's own kernel marks what each tile keeps and writes it, dense and in order, to the tile's own
// partition of an intermediate buffer (partition t starts at tuple t x TILE; gaps stay between partitions),
// with its count in counts[t]; then three kernels shared by all:
//   tile_select_scan     work-groups prefix-sum blocks of WG_SIZE partition counts (offsets[]) and keep each
//                        block's total (blocks[]): common/scan.h's scan_tile_exclusive
//   tile_select_combine  one work-group prefix-sums the block totals and writes the number kept: scan_totals
//                        (the block's offset is added back by the gather)
//   tile_select_gather   each partition copied in bulk to its place in the output; with TILE_SELECT_SKIP a
//                        partition may start skip[t] items later (UNIQUE's duplicate on a partition edge)
// The pieces a partition kernel is made of: group_exclusive_scan, stage_tile (the tuples a mask keeps,
// staged in local memory in order) and write_staged (the staged tuples to global memory in bulk).
//
// The includer defines, before including: WG_SIZE, EPT, LAYOUT_SOA (0: attribute c of tuple i at
// i x width + c; 1: at c x capacity + i, in the input, the intermediate and the output), SCAN_LOCAL =
// WG_SIZE and SCAN_ITEMS (1 for the partition counts' scan; the shared kernels exist only then), and
// TILE_SELECT_SKIP (0 or 1); TILE_SELECT_WIDTH where every item has that many words (the gather's `width`
// argument is then unused).
#ifndef VAREX_TILE_SELECT_H
#define VAREX_TILE_SELECT_H

#include "common/compact.h"

#define TILE (WG_SIZE * EPT)

#if LAYOUT_SOA
#define AT(i, c, width, capacity) ((ulong)(c) * (capacity) + (i))
#define STAGED(p, c, width) ((c)*TILE + (p))
#else
#define AT(i, c, width, capacity) ((ulong)(i) * (width) + (c))
#define STAGED(p, c, width) ((p) * (width) + (c))
#endif

// Work-group exclusive prefix sum of one value per work-item (common/scan.h); the group's total in *total.
// Every work-item must call it; `scan` has WG_SIZE + 1 words.
FUNC uint group_exclusive_scan(LOCAL uint* scan, uint value, uint* total) {
  const uint exclusive = wg_scan_exclusive_u32(scan, value, WG_SIZE);
  if (lid() == WG_SIZE - 1) scan[WG_SIZE] = exclusive + value;
  LOCAL_BARRIER();
  *total = scan[WG_SIZE];
  LOCAL_BARRIER();
  return exclusive;
}

// Stages the tuples first + j whose bit j of `mask` is set (all `width` attributes) in `stage`, in input
// order; returns the number the tile keeps. Every work-item must call it; `stage` has width x TILE words.
FUNC uint stage_tile(CONSTANT_PTR uint* RESTRICT in, uint first, uint mask, uint width, uint in_capacity,
                     LOCAL uint* scan, LOCAL uint* stage) {
  uint total;
  uint pos = group_exclusive_scan(scan, popcount_u32(mask), &total);
  for (uint j = 0; j < EPT; ++j) {
    if ((mask >> j) & 1u) {
      for (uint c = 0; c < width; ++c) stage[STAGED(pos, c, width)] = in[AT(first + j, c, width, in_capacity)];
      ++pos;
    }
  }
  LOCAL_BARRIER();
  return total;
}

// Copies `total` staged tuples to tuple `dst` on of `out`, in bulk.
FUNC void write_staged(LOCAL uint* stage, GLOBAL uint* RESTRICT out, ulong dst, uint total, uint width,
                       uint out_capacity) {
#if LAYOUT_SOA
  for (uint c = 0; c < width; ++c)
    for (uint p = lid(); p < total; p += WG_SIZE) out[(ulong)c * out_capacity + dst + p] = stage[c * TILE + p];
#else
  for (uint w = lid(); w < total * width; w += WG_SIZE) out[dst * width + w] = stage[w];
#endif
}

#if SCAN_ITEMS == 1

KERNEL void tile_select_scan(CONSTANT_PTR uint* RESTRICT counts, GLOBAL uint* RESTRICT offsets,
                             GLOBAL uint* RESTRICT blocks, uint tiles) {
  LOCAL_ARRAY uint tile_mem[SCAN_TILE_WORDS];
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  const uint nblocks = (tiles + SCAN_TILE - 1) / SCAN_TILE;
  for (uint b = group_id(); b < nblocks; b += num_groups())
    scan_tile_exclusive(counts, offsets, blocks, tiles, b, tile_mem, part);
}

// One work-group: the block totals' exclusive sums in place, the number kept into count[0].
KERNEL void tile_select_combine(GLOBAL uint* RESTRICT blocks, GLOBAL uint* RESTRICT count, uint nblocks) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  scan_totals(blocks, nblocks, part);
  if (lid() == 0) count[0] = blocks[nblocks];
}

#if TILE_SELECT_SKIP
#define TILE_SELECT_SKIP_PARAM CONSTANT_PTR uint *RESTRICT skip,
#define TILE_SELECT_SKIPPED(t) skip[t]
#else
#define TILE_SELECT_SKIP_PARAM
#define TILE_SELECT_SKIPPED(t) 0u
#endif

KERNEL void tile_select_gather(CONSTANT_PTR uint* RESTRICT mid, GLOBAL uint* RESTRICT out,
                               CONSTANT_PTR uint* RESTRICT counts, TILE_SELECT_SKIP_PARAM CONSTANT_PTR uint* RESTRICT offsets,
                               CONSTANT_PTR uint* RESTRICT blocks, uint tiles, uint width, uint mid_capacity,
                               uint out_capacity) {
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    const uint total = counts[t];
    const ulong dst = (ulong)offsets[t] + blocks[t / SCAN_TILE];
    const ulong src = (ulong)t * TILE + TILE_SELECT_SKIPPED(t);
#ifdef TILE_SELECT_WIDTH
    // Items of a width known when compiling (REDUCE BY KEY's pairs): each work-item copies whole items, the
    // words of one item unrolled, as REDUCE BY KEY's own gather did (the loops below took 4-5% longer for its
    // pairs on the H200, through CUDA and OpenCL).
    for (uint p = lid(); p < total; p += WG_SIZE)
      PRAGMA_UNROLL for (uint c = 0; c < TILE_SELECT_WIDTH; ++c)
        out[AT(dst + p, c, TILE_SELECT_WIDTH, out_capacity)] = mid[AT(src + p, c, TILE_SELECT_WIDTH, mid_capacity)];
#elif LAYOUT_SOA
    for (uint c = 0; c < width; ++c)
      for (uint p = lid(); p < total; p += WG_SIZE)
        out[(ulong)c * out_capacity + dst + p] = mid[(ulong)c * mid_capacity + src + p];
#else
    for (uint w = lid(); w < total * width; w += WG_SIZE) out[dst * width + w] = mid[src * width + w];
#endif
  }
}

#endif  // SCAN_ITEMS == 1

#endif  // VAREX_TILE_SELECT_H
