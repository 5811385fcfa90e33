// Work-group histograms, written once for OpenCL and CUDA: each work-group counts into its own bins in
// local memory with local atomics, then adds its non-zero bins to the global ones with global atomics.
//   hist_local_clear(bins, count)   every work-item calls it; ends with a barrier
//   hist_local_add(bins, bin)       one local atomic increment
//   hist_merge(bins, out, count)    every work-item calls it; starts with a barrier
#ifndef VAREX_HISTOGRAM_H
#define VAREX_HISTOGRAM_H

#include "common/portable.h"

FUNC void hist_local_clear(LOCAL uint* bins, uint count) {
  for (uint b = lid(); b < count; b += lsize()) bins[b] = 0u;
  LOCAL_BARRIER();
}

FUNC void hist_local_add(LOCAL uint* bins, uint bin) {
  atomic_inc_u32(&bins[bin]);
}

FUNC void hist_merge(LOCAL uint* bins, GLOBAL uint* out, uint count) {
  LOCAL_BARRIER();
  for (uint b = lid(); b < count; b += lsize()) {
    const uint c = bins[b];
    if (c) atomic_add_u32(&out[b], c);
  }
}

#endif  // VAREX_HISTOGRAM_H
