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
// mask of EPT candidates kept, and share one stable compaction (common/compact.h):
//   1 ra_set_count    the kept candidates per tile of WG_SIZE x EPT (compact_group_total)
//   2 ra_set_offsets  one work-group: their exclusive sums, the number kept into count[0] (scan_totals)
//   3 ra_set_scatter  every kept tuple written to its output position (compact_first_slot)
// ALGO_MERGE=0, rank (the source's rule): candidate i is left tuple i (i < n) or, for UNION, right tuple
//   i - n. Its rank is its index minus the lower bound of its own tuple in its own relation, the copies on
//   the other side upper bound minus lower bound there (binary searches over the whole relation); a
//   candidate equal to the work-item's previous one takes its rank + 1 and its count without searching.
// ALGO_MERGE=1, merge path: candidate d is step d of the merge of both relations (n + m steps), ties taken
//   from the FIRST relation (the right one for INTERSECTION and DIFFERENCE, the left one for UNION): then
//   every copy of a tuple in FIRST precedes its copies in SECOND, so when SECOND's copy of rank r is merged
//   the copies in FIRST are all behind it and counted. Each work-item finds where its EPT steps start on
//   the merge path (a diagonal binary search) and the run starts of the last FIRST and SECOND tuples before
//   them (two lower bounds: runs of equal tuples cross the shares), then merges sequentially, counting
//   runs as it goes. A FIRST step is kept for UNION only; a SECOND step of rank r against c copies in FIRST
//   is kept iff r < c (INTERSECTION) or r >= c (UNION, DIFFERENCE).
//
//   SET_OP      0 intersection, 1 union, 2 difference
//   ALGO_MERGE  0 rank, 1 merge path
//   WG_SIZE     work-group size (sizes the scan arrays)
//   EPT         candidates per work-item (1 to 32: a bit mask)
#include "common/portable.h"

#define SET_INTERSECTION 0
#define SET_UNION 1
#define SET_DIFFERENCE 2

#define SCAN_LOCAL WG_SIZE
#define SCAN_ITEMS EPT
#include "common/compact.h"

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

#else  // ALGO_MERGE

// Bit k set where step first + k of the merge is kept; src[k] = the tuple it takes (left i, right n + j).
FUNC uint keep_mask(CONSTANT_PTR uint* left, CONSTANT_PTR uint* right, uint n, uint m, uint width, uint first,
                    uint* src) {
#if SET_OP == SET_UNION
  CONSTANT_PTR uint* fst = left;
  CONSTANT_PTR uint* snd = right;
  const uint nf = n, ns = m, f_base = 0, s_base = n;
#else
  CONSTANT_PTR uint* fst = right;
  CONSTANT_PTR uint* snd = left;
  const uint nf = m, ns = n, f_base = n, s_base = 0;
#endif
  const uint total = n + m;
  if (first >= total) return 0;
  // The diagonal search: f of the first `first` steps take FIRST's tuples (ties: FIRST first).
  uint lo = first > ns ? first - ns : 0u;
  uint hi = first < nf ? first : nf;
  uint probe[MAX_WIDTH];
  while (lo < hi) {
    const uint mid = lo + ((hi - lo) >> 1);
    load_tuple(fst, mid, width, probe);
    if (!below(snd, first - 1 - mid, probe, width))  // FIRST[mid] <= SECOND[first - 1 - mid]
      lo = mid + 1;
    else
      hi = mid;
  }
  uint f = lo, s = first - lo;
  // The last tuples merged before the share, and where their runs start.
  uint f_last[MAX_WIDTH], s_last[MAX_WIDTH], f_next[MAX_WIDTH], s_next[MAX_WIDTH];
  PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) f_last[c] = s_last[c] = f_next[c] = s_next[c] = 0u;
  if (f > 0) load_tuple(fst, f - 1, width, f_last);
  if (s > 0) load_tuple(snd, s - 1, width, s_last);
  uint f_run = f > 0 ? lower_bound(fst, 0, f - 1, f_last, width) : 0u;
  uint s_run = s > 0 ? lower_bound(snd, 0, s - 1, s_last, width) : 0u;
  if (f < nf) load_tuple(fst, f, width, f_next);
  if (s < ns) load_tuple(snd, s, width, s_next);
  uint mask = 0;
  for (uint k = 0; k < EPT && first + k < total; ++k) {
    int keep;
    if (f < nf && (s >= ns || !tuple_less(s_next, f_next))) {
      if (f == 0 || !tuple_equal(f_next, f_last)) f_run = f;
      src[k] = f_base + f;
      keep = SET_OP == SET_UNION;
      PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) f_last[c] = f_next[c];
      if (++f < nf) load_tuple(fst, f, width, f_next);
    } else {
      if (s == 0 || !tuple_equal(s_next, s_last)) s_run = s;
      const uint rank = s - s_run;
      // Every copy of this tuple in FIRST is merged already: the run ending at f - 1, if it is this tuple.
      const uint copies = f > 0 && tuple_equal(f_last, s_next) ? f - f_run : 0u;
      src[k] = s_base + s;
#if SET_OP == SET_INTERSECTION
      keep = rank < copies;
#else
      keep = rank >= copies;
#endif
      PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) s_last[c] = s_next[c];
      if (++s < ns) load_tuple(snd, s, width, s_next);
    }
    if (keep) mask |= 1u << k;
  }
  return mask;
}

#endif  // ALGO_MERGE

KERNEL void ra_set_count(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                         GLOBAL uint* RESTRICT tile_counts, uint n, uint m, uint width, uint tiles) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    uint src[EPT];
    const uint mask = keep_mask(left, right, n, m, width, compact_first_item(t), src);
    const uint total = compact_group_total(part, mask);
    if (lid() == 0) tile_counts[t] = total;
  }
}

// One work-group: the tile counts' exclusive sums in place, the number kept into count[0].
KERNEL void ra_set_offsets(GLOBAL uint* RESTRICT tile_counts, GLOBAL uint* RESTRICT count, uint tiles) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  scan_totals(tile_counts, tiles, part);
  if (lid() == 0) count[0] = tile_counts[tiles];
}

KERNEL void ra_set_scatter(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                           GLOBAL uint* RESTRICT out, CONSTANT_PTR uint* RESTRICT tile_offsets, uint n,
                           uint m, uint width, uint out_capacity, uint tiles) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    uint src[EPT];
    const uint mask = keep_mask(left, right, n, m, width, compact_first_item(t), src);
    uint at = compact_first_slot(part, mask, tile_offsets[t]);
    for (uint k = 0; k < EPT; ++k) {
      if ((mask >> k) & 1u) {
        if (at < out_capacity) {
          const uint i = src[k];
          CONSTANT_PTR uint* from = i < n ? left : right;
          const ulong row = i < n ? i : i - n;
          for (uint c = 0; c < width; ++c) out[(ulong)at * width + c] = from[row * width + c];
        }
        ++at;
      }
    }
  }
}
