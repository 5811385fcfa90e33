// Red Fox SET INTERSECTION, SET UNION and SET DIFFERENCE (document 002, sec. 3.2.5) on two relations sorted
// by whole tuple (key, then values), AoS tuples of `width` (2 to 4) words, the same width on both sides.
// Tuples match when key and every value are equal; multiset semantics as C++'s std::set_intersection,
// std::set_union and std::set_difference on sorted ranges: a tuple present m times on the left and n times
// on the right appears min(m, n), max(m, n) and max(m - n, 0) times. The output's order is the variant's
// choice (the result is compared as a multiset); its count goes to count[0]; nothing is written at or past
// `out_capacity` tuples.
//
// The source ranks the copies of a tuple ("every unique tuple has a 0 rank, and with every occurrence of
// the same tuple, the rank is increased by 1") and keeps a tuple by comparing its rank with the copies in
// the other relation. Its pseudo-code is the JOIN's (alg. 6/7) with the keys alone compared and the
// partition sizes guessed (the minimum of the two partitions for INTERSECTION, the sum for UNION); what
// the text means, and what both algorithms here compute, is the rank rule on whole tuples:
//   INTERSECTION  a left tuple of rank r among its copies is kept iff r < the copies on the right
//   DIFFERENCE    a left tuple is kept iff r >= the copies on the right
//   UNION         every left tuple, and a right tuple iff its rank r >= the copies on the left
// (the source's UNION counts "leftover tuples in the first partition" by subtracting bounds, which is the
// same max(m, n) per tuple). Where the words say otherwise, the rank rule wins: DIFFERENCE "checks to see if
// [a tuple] exists in the second partition" (which would drop every copy of a tuple found once) and UNION
// "removes the duplicates" (which would keep one copy): with ranks, as std::set_difference and
// std::set_union, max(m - n, 0) and max(m, n) copies stay. Alg. 6 compares keys only; here whole tuples
// are compared everywhere (equal keys with other values do not match). Both algorithms form, per work-item, a
// mask of EPT candidates kept, and share one stable compaction (common/compact.h), in three kernels:
//   1 ra_set_count    the kept candidates per tile of WG_SIZE x EPT (compact_group_total)
//   2 compact_offsets one work-group: their exclusive sums, the number kept into count[0] (common/compact.h)
//   3 ra_set_scatter  every kept tuple written to its output position (compact_group_slot, write_kept)
// or in one, ra_set_single: tiles taken in order, each placed by a decoupled look-back (common/lookback.h).
// ALGO_MERGE=0, rank (the source's rule): candidate i is left tuple i (i < n) or, for UNION, right tuple
//   i - n. Its rank is its index minus the lower bound of its own tuple in its own relation, the copies on
//   the other side upper bound minus lower bound there (binary searches over the whole relation); a
//   candidate equal to the work-item's previous one takes its rank + 1 and its count without searching.
// ALGO_MERGE=1, merge path (as Modern GPU's and Thrust's set operations): candidate d is step d of the
//   merge of both relations (n + m steps), ties taken from the FIRST relation (the right one for
//   INTERSECTION and DIFFERENCE, the left one for UNION): then every copy of a tuple in FIRST precedes its
//   copies in SECOND, so when SECOND's copy of rank r is merged the copies in FIRST are all behind it and
//   counted. A partition kernel finds every tile's ends on the merge path first (ra_set_partition: one
//   diagonal binary search per tile boundary, all at once, in global memory) and where the runs of the tuples
//   just before each tile start (galloping back: runs of equal tuples cross tiles); a tile's work-group then
//   loads its FIRST and SECOND slices (at most WG_SIZE x EPT tuples, each slice behind the tuple before it)
//   into local memory with coalesced loads. Each work-item finds where its EPT steps start by a diagonal
//   search in local memory, the run starts of the last FIRST and SECOND tuples before them (a lower bound in
//   the slice, else the tile's run start), then merges sequentially from local memory, counting runs as it
//   goes. A FIRST step is kept for UNION only; a SECOND step of rank r against c copies in FIRST is kept
//   iff r < c (INTERSECTION) or r >= c (UNION, DIFFERENCE). The count and scatter kernels both stage and
//   merge the tile, the single pass once (the kept tuples are copied from the stage); the host's constraint
//   keeps the stage, (WG_SIZE x EPT + 2) x MAX_WIDTH words, within 48 KiB.
//
//   SET_OP      0 intersection, 1 union, 2 difference
//   ALGO_MERGE  0 rank, 1 merge path
//   WRITE_STAGED  merge path: the kept tuples compacted in the stage and written out together (else each
//               work-item writes its own)
//   WG_SIZE     work-group size (sizes the scan arrays)
//   EPT         candidates per work-item (1 to 32: a bit mask)
#include "common/portable.h"

#define SET_INTERSECTION 0
#define SET_UNION 1
#define SET_DIFFERENCE 2

#define SCAN_LOCAL WG_SIZE
#define SCAN_ITEMS EPT
#define COMPACT_OFFSETS_KERNEL
#include "common/compact.h"
#include "common/lookback.h"

#define MAX_WIDTH 4

FUNC void load_tuple(CONSTANT_PTR uint* rel, uint i, uint width, uint* t) {
  PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) t[c] = c < width ? rel[(ulong)i * width + c] : 0u;
}

FUNC int tuple_equal(const uint* a, const uint* b) {
  int equal = 1;
  PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) equal &= a[c] == b[c];
  return equal;
}

// a < b lexicographically (the unused words are 0 in both).
FUNC int tuple_less(const uint* a, const uint* b) {
  PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) {
    if (a[c] != b[c]) return a[c] < b[c];
  }
  return 0;
}

// rel[i] < t.
FUNC int below(CONSTANT_PTR uint* rel, uint i, const uint* t, uint width) {
  for (uint c = 0; c < width; ++c) {
    const uint x = rel[(ulong)i * width + c];
    if (x != t[c]) return x < t[c];
  }
  return 0;
}

// rel[i] > t.
FUNC int above(CONSTANT_PTR uint* rel, uint i, const uint* t, uint width) {
  for (uint c = 0; c < width; ++c) {
    const uint x = rel[(ulong)i * width + c];
    if (x != t[c]) return x > t[c];
  }
  return 0;
}

// The first i in [lo, hi) with rel[i] >= t (hi if none).
FUNC uint lower_bound(CONSTANT_PTR uint* rel, uint lo, uint hi, const uint* t, uint width) {
  while (lo < hi) {
    const uint mid = lo + ((hi - lo) >> 1);
    if (below(rel, mid, t, width))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// The first i in [lo, hi) with rel[i] > t (hi if none).
FUNC uint upper_bound(CONSTANT_PTR uint* rel, uint lo, uint hi, const uint* t, uint width) {
  while (lo < hi) {
    const uint mid = lo + ((hi - lo) >> 1);
    if (above(rel, mid, t, width))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// The candidates: rank takes the left tuples (and the right ones for UNION), merge path the merge's steps.
FUNC uint candidates(uint n, uint m) {
#if ALGO_MERGE || SET_OP == SET_UNION
  return n + m;
#else
  (void)m;
  return n;
#endif
}

#if !ALGO_MERGE

// Bit k set where candidate first + k is kept; src[k] = the candidate (left i < n, right n + j).
FUNC uint keep_mask(CONSTANT_PTR uint* left, CONSTANT_PTR uint* right, uint n, uint m, uint width, uint first,
                    uint* src) {
  const uint total = candidates(n, m);
  uint mask = 0;
  uint t[MAX_WIDTH], previous[MAX_WIDTH];
  uint rank = 0, copies = 0;
  int has_previous = 0, previous_left = 0;
  for (uint k = 0; k < EPT; ++k) {
    const uint i = first + k;
    src[k] = i;
    if (i >= total) break;
    const int is_left = i < n;
#if SET_OP == SET_UNION
    if (is_left) {  // every left tuple
      mask |= 1u << k;
      continue;
    }
#endif
    CONSTANT_PTR uint* own = is_left ? left : right;
    CONSTANT_PTR uint* other = is_left ? right : left;
    const uint index = is_left ? i : i - n;
    const uint other_n = is_left ? m : n;
    load_tuple(own, index, width, t);
    if (has_previous && previous_left == is_left && tuple_equal(t, previous)) {
      ++rank;  // the next copy of the same tuple: same count on the other side
    } else {
      rank = index - lower_bound(own, 0, index, t, width);
      const uint lo = lower_bound(other, 0, other_n, t, width);
      copies = upper_bound(other, lo, other_n, t, width) - lo;
    }
    PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) previous[c] = t[c];
    has_previous = 1;
    previous_left = is_left;
#if SET_OP == SET_INTERSECTION
    const int keep = rank < copies;
#else
    const int keep = rank >= copies;  // DIFFERENCE's left tuples, UNION's right ones
#endif
    if (keep) mask |= 1u << k;
  }
  return mask;
}

#define STAGE_WORDS 1  // no stage

FUNC uint tile_keep_mask(CONSTANT_PTR uint* left, CONSTANT_PTR uint* right, uint n, uint m, uint width,
                         CONSTANT_PTR uint* RESTRICT bounds, uint tile, LOCAL uint* stage, uint* src) {
  (void)bounds;
  (void)stage;
  return keep_mask(left, right, n, m, width, compact_first_item(tile), src);
}

#else  // ALGO_MERGE

// The work-group's stage in local memory: per tile, FIRST's and SECOND's slices of the tile's merge path,
// each behind the tuple just before it (slot 0), then the tile's bounds (BOUND_*).
#define TILE_STEPS (WG_SIZE * EPT)
#define STAGE_TUPLE_WORDS ((TILE_STEPS + 2) * MAX_WIDTH)
#define BOUND_F0 (STAGE_TUPLE_WORDS + 0)  // FIRST's slice [f0, f1)
#define BOUND_F1 (STAGE_TUPLE_WORDS + 1)
#define BOUND_F_RUN (STAGE_TUPLE_WORDS + 2)  // where the run of FIRST[f0 - 1] starts
#define BOUND_S_RUN (STAGE_TUPLE_WORDS + 3)  // where the run of SECOND[s0 - 1] starts
#define STAGE_WORDS (STAGE_TUPLE_WORDS + 4)

FUNC void load_staged(LOCAL const uint* stage, uint slot, uint width, uint* t) {
  PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) t[c] = c < width ? stage[slot * width + c] : 0u;
}

// The first `diag` steps of the merge take this many of FIRST's tuples (ties: FIRST first); global memory.
FUNC uint diagonal_search(CONSTANT_PTR uint* fst, uint nf, CONSTANT_PTR uint* snd, uint ns, uint diag,
                          uint width) {
  uint lo = diag > ns ? diag - ns : 0u;
  uint hi = diag < nf ? diag : nf;
  uint probe[MAX_WIDTH];
  while (lo < hi) {
    const uint mid = lo + ((hi - lo) >> 1);
    load_tuple(fst, mid, width, probe);
    if (!below(snd, diag - 1 - mid, probe, width))  // FIRST[mid] <= SECOND[diag - 1 - mid]
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Where the run of equal tuples ending at rel[last] starts: galloping back (runs are mostly short), then
// a binary search in the last gallop's range.
FUNC uint run_start(CONSTANT_PTR uint* rel, uint last, uint width) {
  uint t[MAX_WIDTH];
  load_tuple(rel, last, width, t);
  uint hi = last, step = 1;
  while (hi > 0) {
    const uint probe = hi > step ? hi - step : 0u;
    if (below(rel, probe, t, width)) return lower_bound(rel, probe + 1, hi, t, width);
    hi = probe;
    step <<= 1;
  }
  return 0;
}

// The merge's tile boundaries, one work-item each (before the tiles' kernels): boundary b (0 <= b <= tiles)
// at step min(b x TILE_STEPS, total) takes bounds[3b] of FIRST's tuples before it (a diagonal search), and
// the runs of the tuples just before it start at FIRST's bounds[3b + 1] and SECOND's bounds[3b + 2]
// (galloping back: runs of equal tuples cross tiles). All boundaries are searched at once, in global memory.
FUNC void partition_merge(CONSTANT_PTR uint* fst, uint nf, CONSTANT_PTR uint* snd, uint ns, uint width,
                          GLOBAL uint* RESTRICT bounds, uint tiles) {
  const uint total = nf + ns;
  for (uint b = gid(); b <= tiles; b += gsize()) {
    const uint step = b < tiles ? b * TILE_STEPS : total;
    const uint f = diagonal_search(fst, nf, snd, ns, step, width);
    const uint s = step - f;
    bounds[3 * b] = f;
    bounds[3 * b + 1] = b < tiles && f > 0 ? run_start(fst, f - 1, width) : 0u;
    bounds[3 * b + 2] = b < tiles && s > 0 ? run_start(snd, s - 1, width) : 0u;
  }
}

// The work-group's share of the merge path for tile `tile` into `stage`: its bounds from the partition, then
// both slices loaded with coalesced loads.
FUNC void stage_tile(CONSTANT_PTR uint* fst, uint nf, CONSTANT_PTR uint* snd, uint ns, uint width,
                     CONSTANT_PTR uint* RESTRICT bounds, uint tile, LOCAL uint* stage) {
  const uint total = nf + ns;
  const uint first = tile * TILE_STEPS;
  if (lid() == 0) {
    stage[BOUND_F0] = bounds[3 * tile];
    stage[BOUND_F1] = bounds[3 * tile + 3];
    stage[BOUND_F_RUN] = bounds[3 * tile + 1];
    stage[BOUND_S_RUN] = bounds[3 * tile + 2];
  }
  LOCAL_BARRIER();
  const uint f0 = stage[BOUND_F0], f1 = stage[BOUND_F1];
  const uint steps = total - first > TILE_STEPS ? TILE_STEPS : total - first;
  const uint s0 = first - f0, s1 = first + steps - f1;
  // Slot 0 of each slice: the tuple before it (zeros at the relation's start).
  const uint f_words = (f1 - f0 + 1) * width, s_words = (s1 - s0 + 1) * width;
  for (uint w = lid(); w < f_words; w += WG_SIZE)
    stage[w] = f0 > 0 || w >= width ? fst[(ulong)f0 * width + w - width] : 0u;
  LOCAL uint* s_stage = stage + f_words;
  for (uint w = lid(); w < s_words; w += WG_SIZE)
    s_stage[w] = s0 > 0 || w >= width ? snd[(ulong)s0 * width + w - width] : 0u;
  LOCAL_BARRIER();
}

// Where the run of the tuple in slot `slot` (> 0, or 0 when `start` > 0) of a staged slice starting at
// `start` begins, as an index into its relation: in the slice, or `run_before` (the run of slot 0).
FUNC uint staged_run_start(LOCAL const uint* slice, uint slot, uint start, uint run_before, uint width) {
  uint t[MAX_WIDTH], probe[MAX_WIDTH];
  load_staged(slice, slot, width, t);
  uint lo = start > 0 ? 0u : 1u, hi = slot;
  while (lo < hi) {
    const uint mid = lo + ((hi - lo) >> 1);
    load_staged(slice, mid, width, probe);
    if (tuple_less(probe, t))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == 0 ? run_before : start - 1 + lo;
}

// Bit k set where step first + k of the merge is kept; src[k] = the word in `stage` where the tuple it
// takes starts. The tile must be staged (stage_tile).
FUNC uint keep_mask(uint n, uint m, uint width, uint first, LOCAL const uint* stage, uint* src) {
  const uint total = n + m;
  if (first >= total) return 0;
  const uint tile_first = first - lid() * EPT;
  const uint steps = total - tile_first > TILE_STEPS ? TILE_STEPS : total - tile_first;
  const uint f0 = stage[BOUND_F0], f1 = stage[BOUND_F1];
  const uint s0 = tile_first - f0, s1 = tile_first + steps - f1;
  LOCAL const uint* f_slice = stage;
  LOCAL const uint* s_slice = stage + (f1 - f0 + 1) * width;
  // The diagonal search in the stage: slot 1 + i of a slice is its relation's tuple start + i.
  const uint diag = first - tile_first;
  const uint f_count = f1 - f0, s_count = s1 - s0;
  uint lo = diag > s_count ? diag - s_count : 0u;
  uint hi = diag < f_count ? diag : f_count;
  uint probe[MAX_WIDTH], other[MAX_WIDTH];
  while (lo < hi) {
    const uint mid = lo + ((hi - lo) >> 1);
    load_staged(f_slice, 1 + mid, width, probe);
    load_staged(s_slice, diag - mid, width, other);
    if (!tuple_less(other, probe))  // FIRST[mid] <= SECOND[diag - 1 - mid]
      lo = mid + 1;
    else
      hi = mid;
  }
  uint f = f0 + lo, s = s0 + diag - lo;  // indices into the relations
  // The last tuples merged before the share, and where their runs start.
  uint f_last[MAX_WIDTH], s_last[MAX_WIDTH], f_next[MAX_WIDTH], s_next[MAX_WIDTH];
  PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) f_next[c] = s_next[c] = 0u;
  load_staged(f_slice, f - f0, width, f_last);
  load_staged(s_slice, s - s0, width, s_last);
  uint f_run = f > 0 ? staged_run_start(f_slice, f - f0, f0, stage[BOUND_F_RUN], width) : 0u;
  uint s_run = s > 0 ? staged_run_start(s_slice, s - s0, s0, stage[BOUND_S_RUN], width) : 0u;
  if (f < f1) load_staged(f_slice, f - f0 + 1, width, f_next);
  if (s < s1) load_staged(s_slice, s - s0 + 1, width, s_next);
  uint mask = 0;
  for (uint k = 0; k < EPT && diag + k < steps; ++k) {
    int keep;
    if (f < f1 && (s >= s1 || !tuple_less(s_next, f_next))) {
      if (f == 0 || !tuple_equal(f_next, f_last)) f_run = f;
      src[k] = (f - f0 + 1) * width;
      keep = SET_OP == SET_UNION;
      PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) f_last[c] = f_next[c];
      if (++f < f1) load_staged(f_slice, f - f0 + 1, width, f_next);
    } else {
      if (s == 0 || !tuple_equal(s_next, s_last)) s_run = s;
      const uint rank = s - s_run;
      // Every copy of this tuple in FIRST is merged already: the run ending at f - 1, if it is this tuple.
      const uint copies = f > 0 && tuple_equal(f_last, s_next) ? f - f_run : 0u;
      src[k] = (f1 - f0 + 1 + s - s0 + 1) * width;
#if SET_OP == SET_INTERSECTION
      keep = rank < copies;
#else
      keep = rank >= copies;
#endif
      PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) s_last[c] = s_next[c];
      if (++s < s1) load_staged(s_slice, s - s0 + 1, width, s_next);
    }
    if (keep) mask |= 1u << k;
  }
  return mask;
}

// FIRST and SECOND of the merge: the left relation first for UNION, the right one otherwise.
#if SET_OP == SET_UNION
#define MERGE_RELATIONS(left, n, right, m) left, n, right, m
#else
#define MERGE_RELATIONS(left, n, right, m) right, m, left, n
#endif

// The keep mask of this work-item's steps in tile `tile`, staging the tile first.
FUNC uint tile_keep_mask(CONSTANT_PTR uint* left, CONSTANT_PTR uint* right, uint n, uint m, uint width,
                         CONSTANT_PTR uint* RESTRICT bounds, uint tile, LOCAL uint* stage, uint* src) {
  stage_tile(MERGE_RELATIONS(left, n, right, m), width, bounds, tile, stage);
  return keep_mask(n, m, width, compact_first_item(tile), stage, src);
}

KERNEL void ra_set_partition(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                             GLOBAL uint* RESTRICT bounds, uint n, uint m, uint width, uint tiles) {
  partition_merge(MERGE_RELATIONS(left, n, right, m), width, bounds, tiles);
}

#endif  // ALGO_MERGE

// Tile t's kept tuples from output slot `at` on (nothing at or past out_capacity).
FUNC void scatter_kept(CONSTANT_PTR uint* left, CONSTANT_PTR uint* right, GLOBAL uint* RESTRICT out, uint n,
                       uint width, uint out_capacity, uint mask, const uint* src, LOCAL const uint* stage,
                       uint at) {
  for (uint k = 0; k < EPT; ++k) {
    if ((mask >> k) & 1u) {
      if (at < out_capacity) {
#if ALGO_MERGE
        (void)left;
        (void)right;
        (void)n;
        for (uint c = 0; c < width; ++c) out[(ulong)at * width + c] = stage[src[k] + c];
#else
        (void)stage;
        const uint i = src[k];
        CONSTANT_PTR uint* from = i < n ? left : right;
        const ulong row = i < n ? i : i - n;
        for (uint c = 0; c < width; ++c) out[(ulong)at * width + c] = from[row * width + c];
#endif
      }
      ++at;
    }
  }
}

#if WRITE_STAGED
// The tile's kept tuples compacted in the stage, then copied to the output from slot `first` on in coalesced
// words (write=staged; merge path only): each work-item takes its kept tuples into registers, every work-item
// having merged from the stage, writes them at its place `before` among the tile's `total`, and the
// work-group copies them out together. Nothing is written at or past `out_capacity` tuples. All work-items
// must call it.
FUNC void write_kept_staged(GLOBAL uint* RESTRICT out, uint width, uint out_capacity, uint mask,
                            const uint* src, LOCAL uint* stage, uint before, uint total, uint first) {
  uint kept[EPT][MAX_WIDTH];
  PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) {
    PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) {
      kept[k][c] = ((mask >> k) & 1u) && c < width ? stage[src[k] + c] : 0u;
    }
  }
  LOCAL_BARRIER();
  uint at = before;
  PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) {
    if ((mask >> k) & 1u) {
      PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) {
        if (c < width) stage[at * width + c] = kept[k][c];
      }
      ++at;
    }
  }
  LOCAL_BARRIER();
  const uint slots =
      first >= out_capacity ? 0u : (out_capacity - first < total ? out_capacity - first : total);
  for (uint w = lid(); w < slots * width; w += WG_SIZE) out[(ulong)first * width + w] = stage[w];
}
#endif

// Tile t's kept tuples to the output from slot `first` on, this work-item's after the `before` kept by the
// work-items before it (of the tile's `total`): compacted in the stage first (write=staged), or each
// work-item its own. All work-items must call it.
FUNC void write_kept(CONSTANT_PTR uint* left, CONSTANT_PTR uint* right, GLOBAL uint* RESTRICT out, uint n,
                     uint width, uint out_capacity, uint mask, const uint* src, LOCAL uint* stage,
                     uint before, uint total, uint first) {
#if WRITE_STAGED
  (void)left;
  (void)right;
  (void)n;
  write_kept_staged(out, width, out_capacity, mask, src, stage, before, total, first);
#else
  (void)total;
  scatter_kept(left, right, out, n, width, out_capacity, mask, src, stage, first + before);
#endif
}

KERNEL void ra_set_count(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                         CONSTANT_PTR uint* RESTRICT bounds, GLOBAL uint* RESTRICT tile_counts, uint n,
                         uint m, uint width, uint tiles) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  LOCAL_ARRAY uint stage[STAGE_WORDS];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    uint src[EPT];
    const uint mask = tile_keep_mask(left, right, n, m, width, bounds, t, stage, src);
    const uint total = compact_group_total(part, mask);
    if (lid() == 0) tile_counts[t] = total;
  }
}

KERNEL void ra_set_scatter(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                           CONSTANT_PTR uint* RESTRICT bounds, GLOBAL uint* RESTRICT out,
                           CONSTANT_PTR uint* RESTRICT tile_offsets, uint n, uint m, uint width,
                           uint out_capacity, uint tiles) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  LOCAL_ARRAY uint stage[STAGE_WORDS];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    uint src[EPT];
    const uint mask = tile_keep_mask(left, right, n, m, width, bounds, t, stage, src);
    uint total;
    const uint before = compact_group_slot(part, mask, &total);
    write_kept(left, right, out, n, width, out_capacity, mask, src, stage, before, total, tile_offsets[t]);
    LOCAL_BARRIER();  // the stage is read above before the next tile overwrites it
  }
}

// The single pass (compaction=single_pass): each tile merged once, its place in the output found by a
// decoupled look-back over the tiles before it (common/lookback.h), its kept tuples written there; the
// count into count[0] by the last tile (or 0 without tiles).
KERNEL void ra_set_single(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                          CONSTANT_PTR uint* RESTRICT bounds, GLOBAL uint* RESTRICT out,
                          GLOBAL uint* RESTRICT count, GLOBAL uint* RESTRICT state,
                          GLOBAL uint* RESTRICT ticket, uint n, uint m, uint width, uint out_capacity,
                          uint tiles) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  LOCAL_ARRAY uint stage[STAGE_WORDS];
  LOCAL_ARRAY uint window[LOOKBACK];
  LOCAL_ARRAY uint shared[3];
  if (tiles == 0 && gid() == 0) count[0] = 0;
  for (;;) {
    const uint t = lookback_next_tile(ticket, shared);
    if (t >= tiles) break;
    uint src[EPT];
    const uint mask = tile_keep_mask(left, right, n, m, width, bounds, t, stage, src);
    uint total;
    const uint before = compact_group_slot(part, mask, &total);
    const uint prefix = lookback_exclusive(state, tiles, t, total, window, shared);
    if (lid() == 0 && t == tiles - 1) count[0] = prefix + total;
    write_kept(left, right, out, n, width, out_capacity, mask, src, stage, before, total, prefix);
    LOCAL_BARRIER();  // the stage is read above before the next tile overwrites it
  }
}
