// The shared device primitives of kernels/common/ as kernels of their own, for harness/primitives/ and
// their tests. One source for OpenCL and CUDA.
//
// Defines (defaults below):
//   SCAN_LOCAL, SCAN_ITEMS  work-group size and items per work-item of the scan and the compaction
//   MAX_LOCAL               the largest work-group the reduction is launched with (sizes its scratch)
//   HIST_BINS               bins of histogram_keys (keys at or above it are not counted)
#ifndef SCAN_LOCAL
#define SCAN_LOCAL 128
#endif
#ifndef SCAN_ITEMS
#define SCAN_ITEMS 8
#endif
#ifndef MAX_LOCAL
#define MAX_LOCAL 1024
#endif
#ifndef HIST_BINS
#define HIST_BINS 256
#endif

#include "common/compact.h"
#include "common/digest.h"
#include "common/histogram.h"
#include "common/portable.h"
#include "common/reduce.h"
#include "common/scan.h"
#include "common/scan_kernels.h"

// ---- stable compaction: compact_count, scan_sums over the tile counts, compact_scatter ----

// Grid: one work-group of SCAN_LOCAL per tile. tile_counts[g]: the items of tile g with a non-zero flag.
KERNEL void compact_count(GLOBAL const uint* flags, GLOBAL uint* tile_counts, const uint n) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  const uint mask = compact_flag_mask(flags, compact_first_item(group_id()), n);
  const uint total = compact_group_total(part, mask);
  if (lid() == 0) tile_counts[group_id()] = total;
}

// Same grid. out: in[i] for every i with flags[i] != 0, in order, from the scanned tile counts.
KERNEL void compact_scatter(GLOBAL const uint* in, GLOBAL const uint* flags, GLOBAL const uint* tile_offsets,
                            GLOBAL uint* out, const uint n) {
  LOCAL_ARRAY uint part[SCAN_LOCAL];
  const uint first = compact_first_item(group_id());
  const uint mask = compact_flag_mask(flags, first, n);
  uint at = compact_first_slot(part, mask, tile_offsets[group_id()]);
  PRAGMA_UNROLL for (uint k = 0; k < SCAN_ITEMS; ++k) {
    if (mask & (1u << k)) out[at++] = in[first + k];
  }
}

// ---- sum of uint to a 64-bit total (out[0], cleared by the host) ----

KERNEL void reduce_sum(GLOBAL const uint* in, GLOBAL ulong* out, const uint n) {
  LOCAL_ARRAY ulong scratch[MAX_LOCAL];
  ulong sum = 0;
  for (uint i = gid(); i < n; i += gsize()) sum += in[i];
  sum = wg_reduce_add_u64(scratch, sum);
  if (lid() == 0 && sum) global_add_u64(out, sum);
}

// The same through the 32-bit work-group sum (each work-group's total below 2^32).
KERNEL void reduce_sum_u32(GLOBAL const uint* in, GLOBAL ulong* out, const uint n) {
  LOCAL_ARRAY uint scratch[MAX_LOCAL];
  uint sum = 0;
  for (uint i = gid(); i < n; i += gsize()) sum += in[i];
  sum = wg_reduce_add_u32(scratch, sum);
  if (lid() == 0 && sum) global_add_u64(out, (ulong)sum);
}

// ---- output digests (common/digest.h; out[0] cleared by the host) ----

// Tuple i < n is the words of every column in turn: column j holds width_j consecutive words per tuple
// (`widths`: 4 bits per column, column 0 lowest, a width of 0 ends the list). With `soa` non-zero every
// column lies in c0, column j from word j * soa on. Unused column arguments may repeat c0.
KERNEL void digest_columns(GLOBAL const uint* c0, GLOBAL const uint* c1, GLOBAL const uint* c2,
                           GLOBAL const uint* c3, GLOBAL const uint* c4, GLOBAL ulong* out, const uint n,
                           const uint widths, const uint soa, const uint ordered) {
  LOCAL_ARRAY ulong scratch[MAX_LOCAL];
  ulong sum = 0;
  for (ulong i = gid(); i < n; i += gsize()) {
    ulong h = digest_start(ordered ? i + 1 : 0);
    for (uint j = 0; j < 5; ++j) {
      const uint width = (widths >> (4 * j)) & 15u;
      if (width == 0) break;
      GLOBAL const uint* column = soa      ? c0 + (ulong)j * soa
                                  : j == 0 ? c0
                                  : j == 1 ? c1
                                  : j == 2 ? c2
                                  : j == 3 ? c3
                                           : c4;
      for (uint k = 0; k < width; ++k) h = digest_add(h, column[i * width + k]);
    }
    sum += h;
  }
  sum = wg_reduce_add_u64(scratch, sum);
  if (lid() == 0) global_add_u64(out, sum);
}

// Tuple i < n is (own[i] where has_own, table[index[i]]), started from position i + 1 where ordered. An
// index at or past `limit` names no row of the table: its tuple mixes the index with a different finish.
KERNEL void digest_gather(GLOBAL const uint* index, GLOBAL const uint* table, GLOBAL const uint* own,
                          GLOBAL ulong* out, const uint n, const uint limit, const uint has_own,
                          const uint ordered) {
  LOCAL_ARRAY ulong scratch[MAX_LOCAL];
  ulong sum = 0;
  for (ulong i = gid(); i < n; i += gsize()) {
    ulong h = digest_start(ordered ? i + 1 : 0);
    if (has_own) h = digest_add(h, own[i]);
    const uint at = index[i];
    sum += at < limit ? digest_add(h, table[at]) : ~digest_add(h, at);
  }
  sum = wg_reduce_add_u64(scratch, sum);
  if (lid() == 0) global_add_u64(out, sum);
}

// ---- histograms (bins cleared by the host) ----

KERNEL void histogram_bytes(GLOBAL const uchar* in, GLOBAL uint* bins, const uint n) {
  LOCAL_ARRAY uint local_bins[256];
  hist_local_clear(local_bins, 256u);
  for (uint i = gid(); i < n; i += gsize()) hist_local_add(local_bins, in[i]);
  hist_merge(local_bins, bins, 256u);
}

// Local bins: at least 32 (PoCL 3.1's work-group compiler fails on a merge loop over one bin); the bins at or
// above HIST_BINS stay zero and are never merged.
#define HIST_LOCAL_BINS (HIST_BINS < 32 ? 32 : HIST_BINS)

KERNEL void histogram_keys(GLOBAL const uint* in, GLOBAL uint* bins, const uint n) {
  LOCAL_ARRAY uint local_bins[HIST_LOCAL_BINS];
  hist_local_clear(local_bins, HIST_LOCAL_BINS);
  for (uint i = gid(); i < n; i += gsize()) {
    const uint key = in[i];
    if (key < HIST_BINS) hist_local_add(local_bins, key);
  }
  hist_merge(local_bins, bins, HIST_LOCAL_BINS);
}
