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
// algorithm=single_pass, one kernel with a decoupled look-back (common/lookback.h): work-groups take tiles
// in order from an atomic ticket, a tile finds the survivors of the tiles before it by looking back over
// their published counts and writes its staged survivors straight to the output.
// algorithm=single_pass_ballot (TILE_BALLOT, devices with warp ballots): the same pass with coalesced loads
// and each warp's survivors counted and placed by ballots, without the work-group scan and the staging.
//
//   WG_SIZE     work-group size (sizes the local arrays; a multiple of 32 for TILE_BALLOT)
//   EPT         tuples per work-item and tile
//   LAYOUT_SOA  0: packed tuples (attribute c of tuple i at i * width + c); 1: one array per attribute
//               (attribute c of tuple i at c * capacity + i), in the input, the intermediate and the output
#include "common/portable.h"

// The partition counts are scanned with the shared device-wide scan's pieces, one count per work-item.
#define SCAN_LOCAL WG_SIZE
#define SCAN_ITEMS 1
#define TILE_SELECT_SKIP 0
#include "common/tile_select.h"

// Whether a key passes the range predicate (1 or 0).
FUNC uint key_in_range(uint key, uint lo, uint hi, uint neg) {
  return ((key >= lo && key <= hi) ? 1u : 0u) ^ neg;
}

// Bit j set where tuple first + j (< n) passes the range predicate on its key.
FUNC uint range_mask(CONSTANT_PTR uint* RESTRICT in, uint first, uint n, uint width, uint in_capacity,
                     uint lo, uint hi, uint neg) {
  uint mask = 0;
  for (uint j = 0; j < EPT; ++j) {
    const uint i = first + j;
    if (i < n) {
      mask |= key_in_range(in[AT(i, 0, width, in_capacity)], lo, hi, neg) << j;
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

#else  // ALGO_SINGLE

#include "common/lookback.h"

#if !TILE_BALLOT

KERNEL void ra_select_single(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out,
                             GLOBAL uint* RESTRICT count, GLOBAL uint* RESTRICT state,
                             GLOBAL uint* RESTRICT ticket, uint n, uint width, uint in_capacity,
                             uint out_capacity, uint tiles, uint lo, uint hi, uint neg) {
  LOCAL_ARRAY uint scan[WG_SIZE + 1];
  LOCAL_ARRAY uint stage[4 * TILE];
  LOCAL_ARRAY uint window[LOOKBACK];
  LOCAL_ARRAY uint shared[3];
  for (;;) {
    const uint t = lookback_next_tile(ticket, shared);
    if (t >= tiles) break;
    const uint total = select_tile(in, n, width, in_capacity, t, lo, hi, neg, scan, stage);
    const uint prefix = lookback_exclusive(state, tiles, t, total, window, shared);
    if (lid() == 0 && t == tiles - 1) count[0] = prefix + total;
    write_staged(stage, out, prefix, total, width, out_capacity);
    LOCAL_BARRIER();
  }
}

#else  // TILE_BALLOT

// The single pass with warp ballots: warp w of the work-group takes the 32 x EPT tuples of the tile from
// w x 32 x EPT on, 32 at a time (tuple j x 32 + lane of its share is the lane's j-th: coalesced loads). A
// ballot per j gives the warp's survivors in order; the warps' counts meet in local memory, and each lane
// writes its survivors straight to the output at the tile's prefix + the warps' and lanes' before it (the
// survivors of a warp's j-th step land side by side). No staging, one barrier besides the look-back's.
KERNEL void ra_select_single(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out,
                             GLOBAL uint* RESTRICT count, GLOBAL uint* RESTRICT state,
                             GLOBAL uint* RESTRICT ticket, uint n, uint width, uint in_capacity,
                             uint out_capacity, uint tiles, uint lo, uint hi, uint neg) {
  LOCAL_ARRAY uint warp_counts[WG_SIZE / 32];
  LOCAL_ARRAY uint window[LOOKBACK];
  LOCAL_ARRAY uint shared[3];
  const uint lane = lid() & 31u, warp = lid() >> 5;
  const uint lanes_before = (1u << lane) - 1u;
  // Packed pairs (the common (key, value) tuple) move as one 64-bit word each way, held in registers between.
  const int pairs = !LAYOUT_SOA && width == 2;
  for (;;) {
    const uint t = lookback_next_tile(ticket, shared);
    if (t >= tiles) break;
    const uint first = t * TILE + warp * 32u * EPT + lane;
    // Every load of the tile first, then the ballots: a ballot between two loads (inline PTX on NVIDIA's
    // OpenCL, which its compiler may not move loads across) could keep one load per work-item in flight.
    uint words[EPT];
    uint2 pair[EPT];
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint i = first + j * 32u;
      pair[j].x = pair[j].y = 0u;
      if (i < n) {
        if (pairs)
          pair[j] = ((CONSTANT_PTR uint2*)in)[i];
        else
          pair[j].x = in[AT(i, 0, width, in_capacity)];
      }
    }
    uint kept = 0;
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      words[j] = warp_ballot(first + j * 32u < n && key_in_range(pair[j].x, lo, hi, neg));
      kept += popcount_u32(words[j]);
    }
    if (lane == 0) warp_counts[warp] = kept;
    LOCAL_BARRIER();
    uint before = 0, total = 0;
    for (uint w = 0; w < WG_SIZE / 32; ++w) {
      const uint c = warp_counts[w];
      before += w < warp ? c : 0u;
      total += c;
    }
    // Every work-item has read warp_counts before the look-back's barriers; the next tile writes it after.
    const uint prefix = lookback_exclusive(state, tiles, t, total, window, shared);
    if (lid() == 0 && t == tiles - 1) count[0] = prefix + total;
    uint at = prefix + before;
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      if ((words[j] >> lane) & 1u) {
        const uint slot = at + popcount_u32(words[j] & lanes_before);
        if (pairs) {
          ((GLOBAL uint2*)out)[slot] = pair[j];
        } else {
          const uint i = first + j * 32u;
          for (uint c = 0; c < width; ++c)
            out[AT(slot, c, width, out_capacity)] = in[AT(i, c, width, in_capacity)];
        }
      }
      at += popcount_u32(words[j]);
    }
  }
}

#endif  // TILE_BALLOT

#endif
