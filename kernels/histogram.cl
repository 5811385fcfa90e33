// An equi-width histogram of int32 values: 2^k buckets over int32's whole range, a value's bucket its top k
// bits with the sign flipped, so that buckets follow the values' order (what a database's column statistics
// keep). One tile of lsize() x EPT rows per work-group and round; a row's index is tile + j * lsize() +
// lid(). Work-groups stride over the tiles (a fixed grid) or cover them once.
//   EPT         rows per work-item and tile
//   LOCAL_BINS  0: every row adds one to its bucket in global memory (a global atomic per row);
//               1: each work-group counts into a sub-histogram in local memory (common/histogram.h) and
//               adds it to the global counts: one slice of HIST_SLICE buckets per pass over its rows, so
//               more buckets than a slice read the rows again
#include "common/histogram.h"

#define HIST_SLICE 1024u

FUNC uint bucket_of(int value, uint shift) {
  return ((uint)value ^ 0x80000000u) >> shift;
}

KERNEL void histogram(CONSTANT_PTR int* RESTRICT in, GLOBAL uint* RESTRICT counts, uint n, uint shift,
                      uint buckets) {
  const uint tile = lsize() * EPT;
#if LOCAL_BINS
  LOCAL_ARRAY uint bins[HIST_SLICE];
  for (uint first = 0; first < buckets; first += HIST_SLICE) {
    const uint count = buckets - first < HIST_SLICE ? buckets - first : HIST_SLICE;
    hist_local_clear(bins, count);
    for (uint base = group_id() * tile; base < n; base += num_groups() * tile) {
      for (uint j = 0; j < EPT; ++j) {
        const uint i = base + j * lsize() + lid();
        if (i < n) {
          const uint b = bucket_of(in[i], shift) - first;  // wraps past count below the slice
          if (b < count) hist_local_add(bins, b);
        }
      }
    }
    hist_merge(bins, counts + first, count);
    LOCAL_BARRIER();  // every work-item has read its bins before the next slice clears them
  }
#else
  (void)buckets;
  for (uint base = group_id() * tile; base < n; base += num_groups() * tile) {
    for (uint j = 0; j < EPT; ++j) {
      const uint i = base + j * lsize() + lid();
      if (i < n) atomic_inc_u32(&counts[bucket_of(in[i], shift)]);
    }
  }
#endif
}
