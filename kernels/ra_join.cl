// Red Fox INNER JOIN (document 002, sec. 3.2.4, alg. 6 and 7) of two relations sorted by key: every pair
// of a left and a right tuple with equal keys (the full product of each key's tuples on both sides). Output
// tuple (key, left values, right values): 2 x width - 1 words; its order is the variant's (the output is
// compared as a multiset). The output's size is not known beforehand: the kernels count it, scan the
// counts, write the total to count[0] and the tuples at their offsets, never at or past out_capacity.
//
// ALGO_MERGE_PATH=0, the source's partition, compute and gather:
//   1 ra_join_partition  the left relation cut into partitions of PART tuples; each
//                        partition's right range by binary search: [lower bound of its first key, upper
//                        bound of its last key). Duplicate keys that cross a left partition edge: both
//                        partitions' right ranges hold all of that key's right tuples (the ranges overlap),
//                        and each left tuple belongs to one partition, so every pair is made exactly once.
//   2 ra_join_count      a work-group per partition: the partition's keys staged in local memory, each
//                        work-item takes a right tuple of the range (in chunks of lsize(), the source's
//                        "multiple iterations") and counts its matches by two binary searches
//                        (foundCountReg); the work-group's sum is the partition's output size
//   3 scan_tiles/_sums/_add  the exclusive sums of the partition sizes (common/scan_kernels.h)
//   4 ra_join_write      as 2 with the whole left tuples staged; a work-group prefix sum of the found counts
//                        places each right tuple's pairs; they are staged in local memory OUT_STAGE at
//                        a time and written in bulk to the partition's offset (alg. 7's outputLocal, "in
//                        multiple iterations" when they do not fit)
//   Where this differs from the source: its partition kernel "predicts" each partition's output size and
//   the compute kernel writes to an intermediate buffer of that size, which the gather (SELECT's last
//   kernels) compacts; a join's output per partition has no useful bound short of |left| x |right|, so
//   varex counts it exactly (kernel 2) and writes straight to the final offsets (the gather fused into
//   kernel 4). Alg. 6 also stages the right partition in local memory and skips chunks whose key ranges do
//   not overlap; here each work-item holds its right tuple in registers (the only one it reads: alg. 7's
//   rightReg), and the binary-searched ranges make the skips unnecessary (every right tuple of a range lies
//   between the partition's first and last key).
//
// ALGO_MERGE_PATH=1, balanced whatever the skew (merge path: a diagonal binary search over two sorted
// sequences, then EPT merge steps per work-item):
//   1 ra_join_bounds (upper=0)  the merge of the left and the right keys, ties to the left: when left
//                        tuple i is taken, j right keys are behind, j = lower_bound(right, key_i) -> lower[i]
//   2 ra_join_bounds (upper=1)  the same with ties to the right: j = upper_bound -> counts[i] = j - lower[i]
//                        (both balanced over the n + m keys)
//   3 scan_tiles/_sums/_add  offsets[i]: the exclusive sums of the counts, the total at offsets[n]
//   4 ra_join_expand     the merge of the left tuples' ends (offsets[i + 1]) with the output positions
//                        0 .. total (a load-balanced search): EPT steps per work-item, each step either
//                        finishes a left tuple or writes output o = (left tuple i, right tuple lower[i] + o -
//                        offsets[i]); balanced over n + total steps, so one key with many tuples on both
//                        sides spreads over all work-items
//
//   PART         partition: left tuples per partition (sizes the local arrays; any work-group size of at
//                most MAX_LOCAL takes a partition)
//   EPT          merge path: merge steps per work-item
//   LAYOUT_SOA   0: packed tuples (attribute c of tuple i at i * width + c); 1: one array per attribute
//                (at c * capacity + i), in the inputs and the output
//   SCAN_LOCAL, SCAN_ITEMS  the shape of the shared device scan
// `width` (words per input tuple, 2 to 4) is an argument: the workload decides it, not the variant.
#include "common/portable.h"
#include "common/reduce.h"
#include "common/scan_kernels.h"

#define MAX_WIDTH 4
#define MAX_OUT_WIDTH (2 * MAX_WIDTH - 1)
// The largest work-group (relation_local's cap) and the output tuples staged at a time.
#define MAX_LOCAL 1024
#define OUT_STAGE 256

#if LAYOUT_SOA
#define AT(i, c, width, capacity) ((ulong)(c) * (capacity) + (i))
#else
#define AT(i, c, width, capacity) ((ulong)(i) * (width) + (c))
#endif

FUNC uint key_at(CONSTANT_PTR uint* RESTRICT in, uint i, uint width, uint capacity) {
  return in[AT(i, 0, width, capacity)];
}

// The first index in [lo, hi) of the sorted keys whose key is above `key` (upper) or not below it (lower).
FUNC uint search_global(CONSTANT_PTR uint* RESTRICT in, uint lo, uint hi, uint key, uint upper, uint width,
                        uint capacity) {
  while (lo < hi) {
    const uint mid = lo + (hi - lo) / 2;
    const uint k = key_at(in, mid, width, capacity);
    if (upper ? k <= key : k < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

#if !ALGO_MERGE_PATH

// The same over keys staged in local memory, [0, hi).
FUNC uint search_local(LOCAL const uint* keys, uint hi, uint key, uint upper) {
  uint lo = 0;
  while (lo < hi) {
    const uint mid = lo + (hi - lo) / 2;
    if (upper ? keys[mid] <= key : keys[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Stages the first `words` attributes of partition p in local memory, attribute c of tuple k at
// staged[c * PART + k] (keys contiguous for the searches); its number of tuples.
FUNC uint stage_partition(CONSTANT_PTR uint* RESTRICT left, uint p, uint n, uint width, uint capacity,
                          LOCAL uint* staged, uint words) {
  const uint first = p * PART;
  const uint rows = n - first < PART ? n - first : PART;
  for (uint c = 0; c < words; ++c)
    for (uint k = lid(); k < rows; k += lsize())
      staged[c * PART + k] = left[AT(first + k, c, width, capacity)];
  LOCAL_BARRIER();
  return rows;
}

// Any grid: bounds[2p], bounds[2p + 1] = partition p's right range.
KERNEL void ra_join_partition(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                              GLOBAL uint* RESTRICT bounds, uint n, uint m, uint width, uint left_capacity,
                              uint right_capacity, uint parts) {
  for (uint p = gid(); p < parts; p += gsize()) {
    const uint first = p * PART;
    const uint last = (n - first < PART ? n : first + PART) - 1;
    const uint lo =
        search_global(right, 0, m, key_at(left, first, width, left_capacity), 0, width, right_capacity);
    bounds[2 * p] = lo;
    bounds[2 * p + 1] =
        search_global(right, lo, m, key_at(left, last, width, left_capacity), 1, width, right_capacity);
  }
}

KERNEL void ra_join_count(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                          CONSTANT_PTR uint* RESTRICT bounds, GLOBAL uint* RESTRICT counts, uint n,
                          uint width, uint left_capacity, uint right_capacity, uint parts) {
  LOCAL_ARRAY uint keys[PART];
  LOCAL_ARRAY uint sum[MAX_LOCAL];
  for (uint p = group_id(); p < parts; p += num_groups()) {
    LOCAL_BARRIER();  // the previous partition's searches are done with the keys
    const uint rows = stage_partition(left, p, n, width, left_capacity, keys, 1);
    uint found = 0;
    for (uint j = bounds[2 * p] + lid(); j < bounds[2 * p + 1]; j += lsize()) {
      const uint key = key_at(right, j, width, right_capacity);
      found += search_local(keys, rows, key, 1) - search_local(keys, rows, key, 0);
    }
    const uint total = wg_reduce_add_u32(sum, found);
    if (lid() == 0) counts[p] = total;
  }
}

KERNEL void ra_join_write(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                          CONSTANT_PTR uint* RESTRICT bounds, CONSTANT_PTR uint* RESTRICT offsets,
                          GLOBAL uint* RESTRICT out, GLOBAL uint* RESTRICT count, uint n, uint width,
                          uint left_capacity, uint right_capacity, uint out_capacity, uint parts) {
  LOCAL_ARRAY uint staged[MAX_WIDTH * PART];
  LOCAL_ARRAY uint pairs[MAX_OUT_WIDTH * OUT_STAGE];
  LOCAL_ARRAY uint scan[MAX_LOCAL];
  const uint out_width = 2 * width - 1;
  if (gid() == 0) count[0] = offsets[parts];
  for (uint p = group_id(); p < parts; p += num_groups()) {
    LOCAL_BARRIER();
    const uint rows = stage_partition(left, p, n, width, left_capacity, staged, width);
    const uint hi = bounds[2 * p + 1];
    uint at = offsets[p];  // the partition's next output tuple
    for (uint j0 = bounds[2 * p]; j0 < hi; j0 += lsize()) {
      const uint j = j0 + lid();
      uint mine[MAX_WIDTH];
      uint first = 0, found = 0;
      if (j < hi) {
        for (uint c = 0; c < width; ++c) mine[c] = right[AT(j, c, width, right_capacity)];
        first = search_local(staged, rows, mine[0], 0);
        found = search_local(staged, rows, mine[0], 1) - first;
      }
      // Each work-item's first pair within the chunk's, and the chunk's pairs (the shared scan and sum).
      const uint before = wg_scan_exclusive_u32(scan, found, lsize());
      const uint total = wg_reduce_add_u32(scan, found);
      // The chunk's pairs, OUT_STAGE at a time: staged in local memory, then written in bulk.
      for (uint round = 0; round < total; round += OUT_STAGE) {
        const uint from = before > round ? before : round;
        const uint to = before + found < round + OUT_STAGE ? before + found : round + OUT_STAGE;
        for (uint q = from; q < to; ++q) {
          const uint i = first + (q - before);
          LOCAL uint* pair = pairs + (q - round) * out_width;
          pair[0] = mine[0];
          for (uint c = 1; c < width; ++c) {
            pair[c] = staged[c * PART + i];
            pair[width - 1 + c] = mine[c];
          }
        }
        LOCAL_BARRIER();
        const uint batch = total - round < OUT_STAGE ? total - round : OUT_STAGE;
        const uint base = at + round;
        for (uint w = lid(); w < batch * out_width; w += lsize()) {
          const uint k = w / out_width, c = w % out_width;
          if (base + k < out_capacity) out[AT(base + k, c, out_width, out_capacity)] = pairs[w];
        }
        LOCAL_BARRIER();
      }
      at += total;
    }
  }
}

#else

// Merge path: the number of left keys among the first d items of the merge of the left and the right keys
// (ties to the left when `left_first`, else to the right).
FUNC uint diagonal_search(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right, ulong d,
                          uint n, uint m, uint left_first, uint width, uint left_capacity,
                          uint right_capacity) {
  uint lo = d > m ? (uint)(d - m) : 0;
  uint hi = d < n ? (uint)d : n;
  while (lo < hi) {
    const uint mid = lo + (hi - lo) / 2;
    const uint a = key_at(left, mid, width, left_capacity);
    const uint b = key_at(right, (uint)(d - 1 - mid), width, right_capacity);
    if (left_first ? a <= b : a < b)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Any grid, EPT merge steps per work-item. upper=0: lower[i] = the right keys below left key i; upper=1:
// counts[i] = the right keys equal to it (reads lower, written by the upper=0 launch).
KERNEL void ra_join_bounds(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                           GLOBAL uint* RESTRICT lower, GLOBAL uint* RESTRICT counts, uint n, uint m,
                           uint width, uint left_capacity, uint right_capacity, uint upper) {
  const ulong steps = (ulong)n + m;
  for (ulong d = (ulong)gid() * EPT; d < steps; d += (ulong)gsize() * EPT) {
    uint i = diagonal_search(left, right, d, n, m, !upper, width, left_capacity, right_capacity);
    uint j = (uint)(d - i);
    for (uint s = 0; s < EPT && (ulong)i + j < steps; ++s) {
      const uint a = i < n ? key_at(left, i, width, left_capacity) : 0;
      const uint b = j < m ? key_at(right, j, width, right_capacity) : 0;
      if (i < n && (j >= m || (upper ? a < b : a <= b))) {
        if (upper)
          counts[i] = j - lower[i];
        else
          lower[i] = j;
        ++i;
      } else {
        ++j;
      }
    }
  }
}

// Any grid, EPT merge steps per work-item over the left tuples' ends and the output positions.
KERNEL void ra_join_expand(CONSTANT_PTR uint* RESTRICT left, CONSTANT_PTR uint* RESTRICT right,
                           CONSTANT_PTR uint* RESTRICT lower, CONSTANT_PTR uint* RESTRICT offsets,
                           GLOBAL uint* RESTRICT out, GLOBAL uint* RESTRICT count, uint n, uint width,
                           uint left_capacity, uint right_capacity, uint out_capacity) {
  const uint total = offsets[n];
  const uint out_width = 2 * width - 1;
  if (gid() == 0) count[0] = total;
  const ulong steps = (ulong)n + total;
  for (ulong d = (ulong)gid() * EPT; d < steps; d += (ulong)gsize() * EPT) {
    // The left tuples finished within the first d steps: left tuple k's end comes before output o when
    // offsets[k + 1] <= o.
    uint lo = d > total ? (uint)(d - total) : 0;
    uint hi = d < n ? (uint)d : n;
    while (lo < hi) {
      const uint mid = lo + (hi - lo) / 2;
      if (offsets[mid + 1] <= d - 1 - mid)
        lo = mid + 1;
      else
        hi = mid;
    }
    uint i = lo;
    uint o = (uint)(d - i);
    for (uint s = 0; s < EPT && (ulong)i + o < steps && i < n; ++s) {
      if (o >= total || offsets[i + 1] <= o) {
        ++i;
        continue;
      }
      const uint j = lower[i] + (o - offsets[i]);
      if (o < out_capacity) {
        out[AT(o, 0, out_width, out_capacity)] = key_at(left, i, width, left_capacity);
        for (uint c = 1; c < width; ++c) {
          out[AT(o, c, out_width, out_capacity)] = left[AT(i, c, width, left_capacity)];
          out[AT(o, width - 1 + c, out_width, out_capacity)] = right[AT(j, c, width, right_capacity)];
        }
      }
      ++o;
    }
  }
}

#endif
