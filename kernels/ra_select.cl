// Red Fox SELECT (document 002, sec. 3.2.2, alg. 2-4): the whole tuple where a range predicate on the key
// holds, dense and in input order. The input is cut into tiles of WG_SIZE x EPT tuples, work-item w of a
// tile taking the EPT consecutive tuples from w x EPT on. A tile evaluates the predicate, prefix-sums its
// work-items' survivor counts in local memory (alg. 3) and stages its survivors in local memory, in order.
//
// algorithm=source, the source's four kernels:
//   1 ra_select_partition  each tile writes its staged survivors in bulk to its own partition of an
//                          intermediate buffer (gaps stay between partitions) and its count to counts[]
//   2-4                    the family's scan of the partition counts and gather (common/tile_select.h:
//                          tile_select_scan, tile_select_combine, tile_select_gather)
// algorithm=single_pass, one kernel with a decoupled look-back (Merrill and Garland's single-pass scan, as
// CUB's single_pass_scan_operators): work-groups take tiles in order from an atomic ticket; a tile publishes
// its survivor count (its aggregate) at once, then walks back over its predecessors, adding their
// aggregates until it meets one that has published its inclusive prefix, publishes its own inclusive
// prefix and writes its survivors straight to the output. A predecessor has taken its ticket before, so it
// is running and its aggregate comes. state[t] holds tile t's aggregate + 1 and state[tiles + t] its
// inclusive prefix + 1 (0: not yet), so each word goes from 0 to its value once.
//
//   WG_SIZE       work-group size (sizes the local arrays)
//   EPT         tuples per work-item and tile
//   LAYOUT_SOA  0: packed tuples (attribute c of tuple i at i * width + c); 1: one array per attribute
//               (attribute c of tuple i at c * capacity + i), in the input, the intermediate and the output
#include "common/portable.h"

// The partition counts are scanned with the shared device-wide scan's pieces, one count per work-item.
#define SCAN_LOCAL WG_SIZE
#define SCAN_ITEMS 1
#define TILE_SELECT_SKIP 0
#include "common/tile_select.h"

// Predecessors the single pass's look-back reads at once (at most the work-group).
#define LOOKBACK (WG_SIZE < 32 ? WG_SIZE : 32)

// Bit j set where tuple first + j (< n) passes the range predicate on its key.
FUNC uint range_mask(CONSTANT_PTR uint* RESTRICT in, uint first, uint n, uint width, uint in_capacity,
                     uint lo, uint hi, uint neg) {
  uint mask = 0;
  for (uint j = 0; j < EPT; ++j) {
    const uint i = first + j;
    if (i < n) {
      const uint key = in[AT(i, 0, width, in_capacity)];
      mask |= (((key >= lo && key <= hi) ? 1u : 0u) ^ neg) << j;
    }
  }
  return mask;
}

// Stages the survivors of tile t in `stage`, in input order; returns their number.
FUNC uint select_tile(CONSTANT_PTR uint* RESTRICT in, uint n, uint width, uint in_capacity, uint t, uint lo,
                      uint hi, uint neg, LOCAL uint* scan, LOCAL uint* stage) {
  const uint first = t * TILE + lid() * EPT;
  return stage_tile(in, first, range_mask(in, first, n, width, in_capacity, lo, hi, neg), width, in_capacity,
                    scan, stage);
}

#if !ALGO_SINGLE

KERNEL void ra_select_partition(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT mid,
                                GLOBAL uint* RESTRICT counts, uint n, uint width, uint in_capacity,
                                uint mid_capacity, uint tiles, uint lo, uint hi, uint neg) {
  LOCAL_ARRAY uint scan[WG_SIZE + 1];
  LOCAL_ARRAY uint stage[4 * TILE];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    const uint total = select_tile(in, n, width, in_capacity, t, lo, hi, neg, scan, stage);
    write_staged(stage, mid, (ulong)t * TILE, total, width, mid_capacity);
    if (lid() == 0) counts[t] = total;
    LOCAL_BARRIER();
  }
}

#else

KERNEL void ra_select_single(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out,
                             GLOBAL uint* RESTRICT count, GLOBAL uint* RESTRICT state,
                             GLOBAL uint* RESTRICT ticket, uint n, uint width, uint in_capacity,
                             uint out_capacity, uint tiles, uint lo, uint hi, uint neg) {
  LOCAL_ARRAY uint scan[WG_SIZE + 1];
  LOCAL_ARRAY uint stage[4 * TILE];
  LOCAL_ARRAY uint shared[3];
  GLOBAL uint* aggregate = state;
  GLOBAL uint* inclusive = state + tiles;
  for (;;) {
    if (lid() == 0) shared[0] = atomic_inc_u32(ticket);
    LOCAL_BARRIER();
    const uint t = shared[0];
    if (t >= tiles) break;
    const uint total = select_tile(in, n, width, in_capacity, t, lo, hi, neg, scan, stage);
    // Publish the aggregate at once (tile 0's inclusive prefix is its aggregate), then look back in windows
    // of LOOKBACK predecessors read in parallel: each reads its tile's word into scan[] as 0 (not yet) or
    // 2 x value + (1 if it is an inclusive prefix) + 1; work-item 0 adds the window up to the first
    // inclusive prefix, or up to the first tile not yet published (the next window starts there).
    if (lid() == 0) {
      if (t > 0) atomic_add_u32(&aggregate[t], total + 1u);
      shared[1] = 0;  // the prefix found so far
      shared[2] = t;  // the tiles before this one are still to be added
    }
    LOCAL_BARRIER();
    for (uint p = t; p > 0; p = shared[2]) {
      if (lid() < LOOKBACK) {
        uint word = 0;
        if (lid() < p) {
          const uint q = p - 1 - lid();
          const uint done = atomic_add_u32(&inclusive[q], 0u);
          const uint partial = done ? 0u : atomic_add_u32(&aggregate[q], 0u);
          word = done ? 2u * (done - 1u) + 2u : partial ? 2u * (partial - 1u) + 1u : 0u;
        }
        scan[lid()] = word;
      }
      LOCAL_BARRIER();
      if (lid() == 0) {
        uint prefix = shared[1], k = 0, left = p;
        for (; k < LOOKBACK && k < p; ++k) {
          const uint word = scan[k];
          if (word == 0) break;  // not published yet: the next window starts here
          prefix += (word - 1u) >> 1;
          --left;
          if (((word - 1u) & 1u) == 1u) {  // an inclusive prefix: nothing before it is needed
            left = 0;
            break;
          }
        }
        shared[1] = prefix;
        shared[2] = left;
      }
      LOCAL_BARRIER();
    }
    if (lid() == 0) {
      const uint prefix = shared[1];
      atomic_add_u32(&inclusive[t], prefix + total + 1u);
      if (t == tiles - 1) count[0] = prefix + total;
    }
    LOCAL_BARRIER();
    write_staged(stage, out, shared[1], total, width, out_capacity);
    LOCAL_BARRIER();
  }
}

#endif
