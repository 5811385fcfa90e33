// Red Fox REDUCE BY KEY (document 002, sec. 3.2.9, alg. 10 and 11): for each run of equal consecutive keys,
// the key and the sum of v0 over the run (unsigned 32-bit, modulo 2^32), dense and in input order. The
// input is cut into tiles of WG_SIZE x EPT tuples, work-item w of a tile taking the EPT consecutive tuples
// from w x EPT on. The output (and the intermediate) holds pairs: key, sum.
//
// ALGO_SEGSCAN=0, the source's kernels (alg. 11, then SELECT's last three):
//   1 ra_rbk_partition  a tuple is a head where its key differs from the previous tuple's (alg. 11's
//                       reg1/reg2 on the keys; the text's "values" there mean the keys) or where it starts
//                       the tile (the flag work-item 0 sets to 1); the heads' inclusive prefix sum (alg. 10)
//                       numbers the tile's runs; the heads place their keys and values in local memory, a
//                       barrier, then the others add their values with local atomics (a work-item first adds
//                       up its own consecutive tuples of one run in a register: with EPT = 1 that is the
//                       source's one atomic per non-head tuple). The runs go in bulk to the tile's own
//                       partition of an intermediate buffer; counts[t] = runs, tails[t] = the last run's sum
//   2 ra_rbk_edges      the partition edges: a tile whose last run goes on in the next tile drops it
//                       (sizes[t] = counts[t] - 1); the tile where such a run ends adds the partial sums of
//                       the tiles it came through (walking back while a tile is that one run) to its first
//                       run
//   3-5                 the family's scan of the partition sizes and gather of the (key, sum) pairs
//                       (common/tile_select.h: tile_select_scan, _combine, _gather with width 2)
// ALGO_SEGSCAN=1, a segmented scan of the values by head flags, then compaction of the run ends:
//   1 ra_rbk_reduce     per tile: the segmented scan's tile aggregate (whether a run starts in the tile, the
//                       sum since its last head) and the run ends it holds (common/compact.h)
//   2 ra_rbk_carries    one work-group: the segmented exclusive scan of the tile aggregates (the open run's
//                       sum entering each tile), the tile counts' exclusive sums and the number of runs
//                       (scan_totals)
//   3 ra_rbk_scatter    per tile: the segmented scan again from the tile's carry; every run end writes its
//                       key and sum at its compacted position (compact_first_slot)
//
//   WG_SIZE      work-group size (sizes the local arrays)
//   EPT          tuples per work-item and tile
//   ALGO_SEGSCAN 0: the source's kernels; 1: the segmented scan
//   LAYOUT_SOA   0: packed tuples (attribute c of tuple i at i * width + c), pairs as i * 2 + c; 1: one array
//                per attribute (attribute c of tuple i at c * capacity + i), in input, intermediate, output
#include "common/portable.h"

#define SCAN_LOCAL WG_SIZE
#if ALGO_SEGSCAN
#define SCAN_ITEMS EPT
#else
#define SCAN_ITEMS 1
#endif
#define TILE_SELECT_SKIP 0
#define TILE_SELECT_WIDTH 2
#include "common/tile_select.h"

// A (key, sum) pair as a tuple of two words, in the layout of the relation.
#define PAIR_AT(i, c, capacity) AT(i, c, 2, capacity)

#if !ALGO_SEGSCAN

KERNEL void ra_rbk_partition(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT mid,
                             GLOBAL uint* RESTRICT counts, GLOBAL uint* RESTRICT tails, uint n, uint width,
                             uint in_capacity, uint mid_capacity, uint tiles) {
  LOCAL_ARRAY uint scan[WG_SIZE + 1];
  LOCAL_ARRAY uint keys[TILE];
  LOCAL_ARRAY uint sums[TILE];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    const uint start = t * TILE;
    const uint first = start + lid() * EPT;
    uint key[EPT];
    uint value[EPT];
    uint heads = 0;
    uint previous = first < n && first != start ? in[AT(first - 1, 0, width, in_capacity)] : 0u;
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint i = first + j;
      key[j] = 0;
      value[j] = 0;
      if (i < n) {
        key[j] = in[AT(i, 0, width, in_capacity)];
        value[j] = in[AT(i, 1, width, in_capacity)];
        if (i == start || key[j] != previous) heads |= 1u << j;
        previous = key[j];
      }
    }
    // Alg. 10: the inclusive scan of the flags; the runs before this work-item's first head are
    // inclusive - own heads (at least one for every work-item but the first, whose first tuple is a head).
    const uint own = popcount_u32(heads);
    const uint inclusive = wg_scan_inclusive_u32(scan, own, WG_SIZE);
    if (lid() == WG_SIZE - 1) scan[WG_SIZE] = inclusive;
    LOCAL_BARRIER();
    const uint total = scan[WG_SIZE];
    const uint before = inclusive - own;
    // Heads place their key and the values of their run that this work-item holds.
    uint run = before;
    uint acc = 0;
    uint lead = 0;  // values ahead of this work-item's first head: a run placed by an earlier work-item
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      if (first + j < n) {
        if ((heads >> j) & 1u) {
          if (run != before) sums[run - 1] = acc;
          keys[run] = key[j];
          acc = value[j];
          ++run;
        } else if (run != before) {
          acc += value[j];
        } else {
          lead += value[j];
        }
      }
    }
    if (run != before) sums[run - 1] = acc;
    LOCAL_BARRIER();
    // The others add theirs atomically (wrapping modulo 2^32).
    if (first < n && (heads & 1u) == 0u) atomic_add_u32(&sums[before - 1], lead);
    LOCAL_BARRIER();
    const ulong dst = (ulong)t * TILE;
    for (uint p = lid(); p < total; p += WG_SIZE) {
      mid[PAIR_AT(dst + p, 0, mid_capacity)] = keys[p];
      mid[PAIR_AT(dst + p, 1, mid_capacity)] = sums[p];
    }
    if (lid() == 0) {
      counts[t] = total;
      tails[t] = sums[total - 1];
    }
    LOCAL_BARRIER();
  }
}

// Whether tile t's first tuple continues tile t - 1's last run (0 < t < tiles).
FUNC uint continues(CONSTANT_PTR uint* RESTRICT in, uint width, uint in_capacity, uint tiles, uint t) {
  if (t == 0 || t >= tiles) return 0u;
  return in[AT(t * TILE, 0, width, in_capacity)] == in[AT(t * TILE - 1, 0, width, in_capacity)] ? 1u : 0u;
}

// Any grid. The source: "the value in the former partition is added to the value of the later partition,
// and the size of the former partition is decreased by one"; a run may cross several partitions, so the
// partition where it ends adds all their partial sums (tails[] and counts[] are read-only here).
KERNEL void ra_rbk_edges(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT mid,
                         CONSTANT_PTR uint* RESTRICT counts, CONSTANT_PTR uint* RESTRICT tails,
                         GLOBAL uint* RESTRICT sizes, uint width, uint in_capacity, uint mid_capacity,
                         uint tiles) {
  for (uint t = gid(); t < tiles; t += gsize()) {
    const uint runs = counts[t];
    const uint into_next = continues(in, width, in_capacity, tiles, t + 1);
    sizes[t] = runs - into_next;
    if (continues(in, width, in_capacity, tiles, t) && !(into_next && runs == 1)) {
      uint sum = 0;
      uint s = t;
      do {
        --s;
        sum += tails[s];
      } while (counts[s] == 1 && continues(in, width, in_capacity, tiles, s));
      mid[PAIR_AT((ulong)t * TILE, 1, mid_capacity)] += sum;
    }
  }
}

#else

// The segmented scan's pairs: f = a run starts in the span, s = the sum of the span's values since its last
// head (all of them without one); (f1, s1) then (f2, s2) is (f1 | f2, f2 ? s2 : s1 + s2), (0, 0) the
// identity. The work-group's inclusive scan of one pair per work-item (Hillis-Steele in `sf`, `ss`, WG_SIZE
// words each), in place of *f, *s; sf/ss hold every work-item's result until the caller's next barrier.
FUNC void wg_segscan_inclusive(LOCAL uint* sf, LOCAL uint* ss, uint* f, uint* s) {
  const uint l = lid();
  sf[l] = *f;
  ss[l] = *s;
  LOCAL_BARRIER();
  for (uint offset = 1; offset < WG_SIZE; offset <<= 1) {
    uint pf = 0;
    uint ps = 0;
    if (l >= offset) {
      pf = sf[l - offset];
      ps = ss[l - offset];
    }
    LOCAL_BARRIER();
    if (l >= offset) {
      if (!*f) *s += ps;
      *f |= pf;
      sf[l] = *f;
      ss[l] = *s;
    }
    LOCAL_BARRIER();
  }
}

// This work-item's tuples: keys, values, heads (bit j: key differs from the previous tuple's, or the first
// tuple of all), ends (bit j: the last tuple, or the next key differs), and its pair (f, s).
FUNC void load_items(CONSTANT_PTR uint* RESTRICT in, uint first, uint n, uint width, uint in_capacity,
                     uint* key, uint* value, uint* heads, uint* ends, uint* f, uint* s) {
  uint previous = first > 0 && first < n ? in[AT(first - 1, 0, width, in_capacity)] : 0u;
  *heads = 0;
  *ends = 0;
  *s = 0;
  PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
    const uint i = first + j;
    key[j] = 0;
    value[j] = 0;
    if (i < n) {
      key[j] = in[AT(i, 0, width, in_capacity)];
      value[j] = in[AT(i, 1, width, in_capacity)];
      if (i == 0 || key[j] != previous) {
        *heads |= 1u << j;
        *s = value[j];
      } else {
        *s += value[j];
      }
      previous = key[j];
    }
  }
  PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
    const uint i = first + j;
    if (i < n) {
      const uint next = j + 1 < EPT ? key[j + 1] : (i + 1 < n ? in[AT(i + 1, 0, width, in_capacity)] : 0u);
      if (i + 1 == n || next != key[j]) *ends |= 1u << j;
    }
  }
  *f = *heads != 0u ? 1u : 0u;
}

KERNEL void ra_rbk_reduce(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT tile_flags,
                          GLOBAL uint* RESTRICT tile_sums, GLOBAL uint* RESTRICT tile_counts, uint n,
                          uint width, uint in_capacity, uint tiles) {
  LOCAL_ARRAY uint sf[WG_SIZE];
  LOCAL_ARRAY uint ss[WG_SIZE];
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    uint key[EPT];
    uint value[EPT];
    uint heads, ends, f, s;
    load_items(in, compact_first_item(t), n, width, in_capacity, key, value, &heads, &ends, &f, &s);
    wg_segscan_inclusive(sf, ss, &f, &s);
    if (lid() == WG_SIZE - 1) {
      tile_flags[t] = f;
      tile_sums[t] = s;
    }
    const uint total = compact_group_total(part, ends);
    if (lid() == 0) tile_counts[t] = total;
  }
}

// One work-group. tile_sums[t] becomes the sum of the run that is open where tile t starts (its values in
// the tiles before t); tile_counts the exclusive sums of the run ends per tile, the number of runs behind
// them and in count[0].
KERNEL void ra_rbk_carries(CONSTANT_PTR uint* RESTRICT tile_flags, GLOBAL uint* RESTRICT tile_sums,
                           GLOBAL uint* RESTRICT tile_counts, GLOBAL uint* RESTRICT count, uint tiles) {
  LOCAL_ARRAY uint sf[WG_SIZE];
  LOCAL_ARRAY uint ss[WG_SIZE];
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  const uint l = lid();
  uint carry = 0;
  for (uint base = 0; base < tiles; base += WG_SIZE) {
    const uint t = base + l;
    uint f = t < tiles ? tile_flags[t] : 0u;
    uint s = t < tiles ? tile_sums[t] : 0u;
    wg_segscan_inclusive(sf, ss, &f, &s);
    const uint ef = l > 0 ? sf[l - 1] : 0u;
    const uint es = l > 0 ? ss[l - 1] : 0u;
    const uint last_f = sf[WG_SIZE - 1];
    const uint last_s = ss[WG_SIZE - 1];
    LOCAL_BARRIER();
    if (t < tiles) tile_sums[t] = ef ? es : carry + es;
    carry = last_f ? last_s : carry + last_s;
  }
  scan_totals(tile_counts, tiles, part);
  if (l == 0) count[0] = tile_counts[tiles];
}

KERNEL void ra_rbk_scatter(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out,
                           CONSTANT_PTR uint* RESTRICT tile_carry, CONSTANT_PTR uint* RESTRICT tile_offsets,
                           uint n, uint width, uint in_capacity, uint out_capacity, uint tiles) {
  LOCAL_ARRAY uint sf[WG_SIZE];
  LOCAL_ARRAY uint ss[WG_SIZE];
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  const uint l = lid();
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    const uint first = compact_first_item(t);
    uint key[EPT];
    uint value[EPT];
    uint heads, ends, f, s;
    load_items(in, first, n, width, in_capacity, key, value, &heads, &ends, &f, &s);
    wg_segscan_inclusive(sf, ss, &f, &s);
    const uint ef = l > 0 ? sf[l - 1] : 0u;
    const uint es = l > 0 ? ss[l - 1] : 0u;
    LOCAL_BARRIER();
    uint acc = ef ? es : tile_carry[t] + es;  // the open run's sum before this work-item's first tuple
    uint at = compact_first_slot(part, ends, tile_offsets[t]);
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      if (first + j < n) {
        acc = ((heads >> j) & 1u) ? value[j] : acc + value[j];
        if ((ends >> j) & 1u) {
          out[PAIR_AT(at, 0, out_capacity)] = key[j];
          out[PAIR_AT(at, 1, out_capacity)] = acc;
          ++at;
        }
      }
    }
  }
}

#endif
