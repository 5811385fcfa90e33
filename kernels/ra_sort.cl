// Red Fox SORT (document 002, sec. 3.2.6): a relation's tuples in ascending lexicographic order of (key, v0,
// v1, v2), or of the key alone (by=key: the host runs only the key's radix passes; the merge sort compares
// the first `keys` words), stable, dense. The source took VexCL's merge sort (after Sean Baxter's Modern
// GPU); varex has that shape of merge sort and an LSD radix sort. Tiles hold WG_SIZE x EPT tuples; tile t
// starts at tuple t x TILE. Work-groups walk the tiles (or the merge partitions) in a group-stride loop, so
// any grid works.
//
// ALGO_MERGE=0, the LSD radix sort: one pass per BITS-bit digit of each 32-bit word, the last value's words
// first and the key's last (each pass stable, so the result is in whole-tuple order); the host drops
// passes whose digit is the same in every tuple (skip=on, from ra_sort_bits) and ping-pongs the passes
// between a scratch buffer and the output so that the last one writes the output.
//   ra_sort_bits     the OR of every word and of its complement, per attribute: the bits that vary
//   ra_sort_count    per tile, how many of its tuples have each digit: counts[d x tiles + t]
//   scan_tiles, scan_sums, scan_add   the shared device-wide exclusive scan of those counts
//                    (common/scan_kernels.h): offsets[d x tiles + t] = where tile t's digit-d tuples go
//   ra_sort_scatter  per tile, the tuples ranked stably by digit (common/radix_rank.h), then written to
//                    their offsets in digit order
// ALGO_MERGE=1, the merge sort:
//   ra_sort_block      per tile, the tuples staged in local memory and merge-sorted there (log2 TILE
//                      rounds; an element's place in the merged pair is its index plus its rank in the
//                      other run, found by binary search: lower bound from the first run, upper bound from
//                      the second, which keeps equal tuples in order)
//   ra_sort_partition  per pass (sorted runs of `run` tuples merged in pairs), the merge path's split of
//                      every output tile: how many of its tuples come from the pair's first run
//   ra_sort_merge      per output tile, the two input ranges staged in local memory; each work-item finds
//                      its EPT outputs' start on the merge path and merges them; written coalesced
// ALGO_ONESWEEP=1 (with ALGO_MERGE=0), the one-sweep radix sort: the same passes, one kernel each
//   ra_sort_histograms  every digit's histogram of every attribute in one read of the relation
//   ra_sort_bin_starts  each histogram into where its digits' tuples start
//   ra_sort_onesweep    per pass: tiles ranked by digit (common/radix_rank.h), placed by a look-back per
//                       digit (common/lookback.h), written out in digit order from local memory
// ra_sort_copy copies the relation when nothing is left to sort (one tuple; every radix pass skipped).
//
//   WG_SIZE     work-group size (sizes the local arrays)
//   EPT         tuples per work-item and tile
//   LAYOUT_SOA  0: packed tuples (attribute c of tuple i at i x width + c); 1: one array per attribute (at
//               c x capacity + i), in the input, the scratch buffer and the output
//   BITS        (radix, onesweep) bits per digit: 2^BITS digits
//   VAREX_MAX_REGS  (onesweep) 0, or the registers a work-item may take: on CUDA, enough work-groups of
//               WG_SIZE for the SM's 65,536 registers are asked to fit (__launch_bounds__); NVIDIA's OpenCL
//               gets -cl-nv-maxrregcount from the engine
//   SCAN_LOCAL, SCAN_ITEMS  (radix) the shape of the shared device-wide scan
#include "common/portable.h"
// Outside the algorithms' #if: the kernel source's includes are inlined once, where they first appear.
#include "common/histogram.h"
#include "common/scan.h"

#define TILE (WG_SIZE * EPT)
#define MAX_WIDTH 4

#if LAYOUT_SOA
#define AT(i, c, width, capacity) ((ulong)(c) * (capacity) + (i))
#else
#define AT(i, c, width, capacity) ((ulong)(i) * (width) + (c))
#endif

// out[i] = in[i] for the n tuples; any grid.
KERNEL void ra_sort_copy(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out, uint n, uint width,
                         uint in_capacity, uint out_capacity) {
  for (uint i = gid(); i < n; i += gsize())
    for (uint c = 0; c < width; ++c) out[AT(i, c, width, out_capacity)] = in[AT(i, c, width, in_capacity)];
}

#if !ALGO_MERGE

#define BINS (1u << BITS)

FUNC uint digit_of(uint word, uint shift) {
  return (word >> shift) & (BINS - 1u);
}

#include "common/radix_rank.h"

#endif

#if ALGO_ONESWEEP

#include "common/lookback.h"

// Digits per 32-bit word.
#define DIGITS ((32 + BITS - 1) / BITS)

// hist[(c x DIGITS + k) x BINS + d]: the tuples whose digit k (bits from k x BITS) of attribute c is d, for
// every digit of every attribute in one read of the relation. A work-item loads HIST_ITEMS words before it
// counts them, so that loads are in flight while it counts. The host clears hist[] first; any grid.
#define HIST_ITEMS 4
KERNEL void ra_sort_histograms(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT hist, uint n, uint width,
                               uint capacity) {
  LOCAL_ARRAY uint bins[MAX_WIDTH * DIGITS * BINS];
  hist_local_clear(bins, width * DIGITS * BINS);
  for (uint i0 = gid(); i0 < n; i0 += HIST_ITEMS * gsize()) {
    for (uint c = 0; c < width; ++c) {
      uint x[HIST_ITEMS];
      PRAGMA_UNROLL for (uint u = 0; u < HIST_ITEMS; ++u) {
        const uint i = i0 + u * gsize();
        x[u] = i < n ? in[AT(i, c, width, capacity)] : 0u;
      }
      PRAGMA_UNROLL for (uint u = 0; u < HIST_ITEMS; ++u) {
        if (i0 + u * gsize() < n) {
          PRAGMA_UNROLL for (uint k = 0; k < DIGITS; ++k)
              hist_local_add(bins, (c * DIGITS + k) * BINS + digit_of(x[u], k * BITS));
        }
      }
    }
  }
  hist_merge(bins, hist, width * DIGITS * BINS);
}

// Each of the `histograms` histograms into the exclusive prefix sums of its bins: where each digit's tuples
// start in a pass's output. One work-group per histogram (WG_SIZE >= BINS); any grid.
KERNEL void ra_sort_bin_starts(GLOBAL uint* RESTRICT hist, uint histograms) {
  LOCAL_ARRAY uint scan[WG_SIZE];
  for (uint h = group_id(); h < histograms; h += num_groups()) {
    const uint count = lid() < BINS ? hist[h * BINS + lid()] : 0u;
    const uint start = wg_scan_exclusive_u32(scan, count, WG_SIZE);
    if (lid() < BINS) hist[h * BINS + lid()] = start;
  }
}

// One pass of the one-sweep radix sort (as CUB's Onesweep): tiles taken in order from tickets[pass]; each
// ranks its tuples by the digit (attribute `word`, bits from `shift`), publishes its count of every digit and
// finds, by a look-back per digit over the tiles before it (state: BINS words per tile, zero before the
// launch), where its tuples of that digit go after the start of the digit's bin (starts[histogram x BINS +
// digit]). The tile's tuples are put in digit order in local memory, whole (key, v0) pairs under aos or one
// attribute at a time (the digit's first), and written out from there, consecutive work-items to consecutive
// places of each digit's run.
#if VAREX_MAX_REGS
KERNEL_BOUNDED(WG_SIZE, 65536 / (WG_SIZE * VAREX_MAX_REGS))
#else
KERNEL
#endif
void ra_sort_onesweep(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out,
                      CONSTANT_PTR uint* RESTRICT starts, GLOBAL uint* RESTRICT state,
                      GLOBAL uint* RESTRICT tickets, uint pass, uint histogram, uint n, uint width,
                      uint in_capacity, uint out_capacity, uint word, uint shift, uint tiles) {
  LOCAL_ARRAY uint rank_mem[RANK_LOCAL_WORDS];
  LOCAL_ARRAY uint scan[WG_SIZE + 1];
  LOCAL_ARRAY uint count[BINS];
  LOCAL_ARRAY uint first[BINS];
  LOCAL_ARRAY uint base[BINS];
  LOCAL_ARRAY uint2 stage_pairs[TILE];  // a tile of (key, v0) pairs, or one attribute's words
  LOCAL_ARRAY uint shared[1];
  LOCAL uint* stage = (LOCAL uint*)stage_pairs;
  // Packed pairs move as one 64-bit word each, loaded and stored whole; other tuples one attribute at a time.
  const uint pairs = !LAYOUT_SOA && width == 2;
  for (uint t = lookback_next_tile(&tickets[pass], shared); t < tiles;
       t = lookback_next_tile(&tickets[pass], shared)) {
    const uint tile_base = t * TILE;
    const uint valid = n - tile_base < TILE ? n - tile_base : TILE;
    uint2 pair[EPT];
    uint digit[EPT];
    uint place[EPT];
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint p = rank_item(j);
      uint key = 0u;
      if (p < valid) {
        if (pairs) {
          pair[j] = ((CONSTANT_PTR uint2*)in)[tile_base + p];
          key = word ? pair[j].y : pair[j].x;
        } else {
          key = in[AT(tile_base + p, word, width, in_capacity)];
        }
      }
      digit[j] = digit_of(key, shift);
    }
    rank_tile(rank_mem, scan, count, first, digit, valid, place);
    if (lid() < BINS) lookback_counter_publish(state, BINS, t, lid(), count[lid()]);
    // The tile goes into digit order in local memory before the look-back: the predecessors have that long
    // to publish their prefixes.
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint p = rank_item(j);
      if (p < valid) {
        if (pairs)
          stage_pairs[place[j]] = pair[j];
        else
          stage[place[j]] = in[AT(tile_base + p, word, width, in_capacity)];
      }
    }
    if (lid() < BINS) {
      const uint before = lookback_counter_exclusive(state, BINS, t, lid());
      base[lid()] = starts[histogram * BINS + lid()] + before - first[lid()];
    }
    LOCAL_BARRIER();
    if (pairs) {
      PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) {
        const uint q = k * WG_SIZE + lid();
        if (q < valid) {
          const uint2 x = stage_pairs[q];
          ((GLOBAL uint2*)out)[base[digit_of(word ? x.y : x.x, shift)] + q] = x;
        }
      }
      LOCAL_BARRIER();
      continue;
    }
    // The digit's attribute first: the places it is written to are every attribute's.
    uint dst[EPT];
    for (uint a = 0; a < width; ++a) {
      const uint c = a == 0 ? word : (a <= word ? a - 1u : a);
      if (a > 0) {  // the digit's attribute is staged already
        PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
          const uint p = rank_item(j);
          if (p < valid) stage[place[j]] = in[AT(tile_base + p, c, width, in_capacity)];
        }
        LOCAL_BARRIER();
      }
      PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) {
        const uint q = k * WG_SIZE + lid();
        if (q < valid) {
          const uint x = stage[q];
          if (a == 0) dst[k] = base[digit_of(x, shift)] + q;
          out[AT(dst[k], c, width, out_capacity)] = x;
        }
      }
      LOCAL_BARRIER();
    }
  }
}

#elif !ALGO_MERGE

#include "common/scan_kernels.h"

// bits[c]: the OR of attribute c over the tuples; bits[MAX_WIDTH + c]: the OR of its complement. A bit that
// is set in both varies. The host clears bits[] first; any grid.
KERNEL void ra_sort_bits(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT bits, uint n, uint width,
                         uint capacity) {
  LOCAL_ARRAY uint acc[2 * MAX_WIDTH];
  if (lid() < 2 * MAX_WIDTH) acc[lid()] = 0u;
  LOCAL_BARRIER();
  uint ones[MAX_WIDTH];
  uint zeros[MAX_WIDTH];
  PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) {
    ones[c] = 0u;
    zeros[c] = 0u;
  }
  for (uint i = gid(); i < n; i += gsize()) {
    PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) {
      if (c < width) {
        const uint x = in[AT(i, c, width, capacity)];
        ones[c] |= x;
        zeros[c] |= ~x;
      }
    }
  }
  PRAGMA_UNROLL for (uint c = 0; c < MAX_WIDTH; ++c) {
    if (ones[c]) atomic_or_u32(&acc[c], ones[c]);
    if (zeros[c]) atomic_or_u32(&acc[MAX_WIDTH + c], zeros[c]);
  }
  LOCAL_BARRIER();
  if (lid() < 2 * MAX_WIDTH && acc[lid()]) atomic_or_u32(&bits[lid()], acc[lid()]);
}

// counts[d * tiles + t]: the tuples of tile t whose digit (attribute `word`, bits from `shift`) is d.
KERNEL void ra_sort_count(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT counts, uint n, uint width,
                          uint capacity, uint word, uint shift, uint tiles) {
  LOCAL_ARRAY uint bins[BINS];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    hist_local_clear(bins, BINS);
    const uint base = t * TILE;
    PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) {
      const uint i = base + k * WG_SIZE + lid();
      if (i < n) hist_local_add(bins, digit_of(in[AT(i, word, width, capacity)], shift));
    }
    LOCAL_BARRIER();
    for (uint d = lid(); d < BINS; d += WG_SIZE) counts[d * tiles + t] = bins[d];
    LOCAL_BARRIER();
  }
}

// Each tuple of tile t to offsets[d * tiles + t] + its rank among the tile's digit-d tuples (stable): the
// tile ranked by digit (common/radix_rank.h), each tuple's digit << 16 | position in the tile put at its
// place in local memory, then the tuples written in that order, consecutive work-items to consecutive places.
KERNEL void ra_sort_scatter(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out,
                            CONSTANT_PTR uint* RESTRICT offsets, uint n, uint width, uint in_capacity,
                            uint out_capacity, uint word, uint shift, uint tiles) {
  LOCAL_ARRAY uint rank_mem[RANK_LOCAL_WORDS];
  LOCAL_ARRAY uint scan[WG_SIZE + 1];
  LOCAL_ARRAY uint count[BINS];
  LOCAL_ARRAY uint first[BINS];
  LOCAL_ARRAY uint order[TILE];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    const uint base = t * TILE;
    const uint valid = n - base < TILE ? n - base : TILE;
    uint digit[EPT];
    uint place[EPT];
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint p = rank_item(j);
      digit[j] = p < valid ? digit_of(in[AT(base + p, word, width, in_capacity)], shift) : 0u;
    }
    rank_tile(rank_mem, scan, count, first, digit, valid, place);
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint p = rank_item(j);
      if (p < valid) order[place[j]] = (digit[j] << 16) | p;
    }
    LOCAL_BARRIER();
    for (uint q = lid(); q < valid; q += WG_SIZE) {
      const uint key = order[q];
      const uint d = key >> 16;
      const uint src = base + (key & 0xFFFFu);
      const uint dst = offsets[d * tiles + t] + (q - first[d]);
      for (uint c = 0; c < width; ++c)
        out[AT(dst, c, width, out_capacity)] = in[AT(src, c, width, in_capacity)];
    }
    LOCAL_BARRIER();
  }
}

#else  // ALGO_MERGE

// Tuple x of a local stage (MAX_WIDTH words per tuple) before tuple y, lexicographically over their first
// `keys` words (the whole tuple, or the key alone).
FUNC int stage_less(LOCAL const uint* stage, uint x, uint y, uint keys) {
  for (uint c = 0; c < keys; ++c) {
    const uint a = stage[x * MAX_WIDTH + c];
    const uint b = stage[y * MAX_WIDTH + c];
    if (a != b) return a < b;
  }
  return 0;
}

// Tuple x of `data` (tuples of `width` words) before tuple y, over their first `keys` words.
FUNC int global_less(CONSTANT_PTR uint* data, uint x, uint y, uint width, uint keys, uint capacity) {
  for (uint c = 0; c < keys; ++c) {
    const uint a = data[AT(x, c, width, capacity)];
    const uint b = data[AT(y, c, width, capacity)];
    if (a != b) return a < b;
  }
  return 0;
}

// The pair of sorted runs (`run` tuples each, the second possibly short or empty) that output position o
// belongs to: first run [pair, pair + a_len), second [pair + a_len, pair + a_len + b_len).
FUNC void pair_of(uint o, uint n, uint run, uint* pair, uint* a_len, uint* b_len) {
  *pair = o - o % (2u * run);
  *a_len = n - *pair < run ? n - *pair : run;
  const uint rest = n - *pair - *a_len;
  *b_len = rest < run ? rest : run;
}

KERNEL void ra_sort_block(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out, uint n, uint width,
                          uint keys, uint in_capacity, uint out_capacity, uint tiles) {
  LOCAL_ARRAY uint stage[TILE * MAX_WIDTH];
  LOCAL_ARRAY uint order0[TILE];
  LOCAL_ARRAY uint order1[TILE];
  for (uint t = group_id(); t < tiles; t += num_groups()) {
    const uint base = t * TILE;
    const uint valid = n - base < TILE ? n - base : TILE;
    PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) {
      const uint p = k * WG_SIZE + lid();
      if (p < valid) {
        for (uint c = 0; c < width; ++c) stage[p * MAX_WIDTH + c] = in[AT(base + p, c, width, in_capacity)];
        order0[p] = p;
      }
    }
    LOCAL_BARRIER();
    LOCAL uint* src = order0;
    LOCAL uint* dst = order1;
    for (uint run = 1; run < valid; run <<= 1) {
      PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) {
        const uint p = k * WG_SIZE + lid();
        if (p < valid) {
          const uint pair = p & ~(2u * run - 1u);
          const uint a_len = valid - pair < run ? valid - pair : run;
          const uint b_start = pair + a_len;
          const uint b_len = valid - b_start < run ? valid - b_start : run;
          const uint x = src[p];
          uint lo = 0;
          uint hi;
          uint rank;
          if (p < b_start) {  // first run: the second run's tuples below x
            hi = b_len;
            while (lo < hi) {
              const uint mid = (lo + hi) >> 1;
              if (stage_less(stage, src[b_start + mid], x, keys))
                lo = mid + 1;
              else
                hi = mid;
            }
            rank = p - pair + lo;
          } else {  // second run: the first run's tuples at or below x
            hi = a_len;
            while (lo < hi) {
              const uint mid = (lo + hi) >> 1;
              if (!stage_less(stage, x, src[pair + mid], keys))
                lo = mid + 1;
              else
                hi = mid;
            }
            rank = p - b_start + lo;
          }
          dst[pair + rank] = x;
        }
      }
      LOCAL_BARRIER();
      LOCAL uint* swap = src;
      src = dst;
      dst = swap;
    }
    PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) {
      const uint p = k * WG_SIZE + lid();
      if (p < valid) {
        const uint x = src[p];
        for (uint c = 0; c < width; ++c) out[AT(base + p, c, width, out_capacity)] = stage[x * MAX_WIDTH + c];
      }
    }
    LOCAL_BARRIER();
  }
}

// splits[q]: how many of output tile q's predecessors in its pair come from the pair's first run (the
// merge path's split at the tile's start; equal tuples are taken from the first run first). Any grid.
KERNEL void ra_sort_partition(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT splits, uint n,
                              uint width, uint keys, uint capacity, uint run, uint parts) {
  for (uint q = gid(); q < parts; q += gsize()) {
    const uint o = q * TILE;
    uint pair, a_len, b_len;
    pair_of(o, n, run, &pair, &a_len, &b_len);
    const uint diag = o - pair;
    const uint b_start = pair + a_len;
    uint lo = diag > b_len ? diag - b_len : 0u;
    uint hi = diag < a_len ? diag : a_len;
    while (lo < hi) {
      const uint mid = (lo + hi) >> 1;
      if (!global_less(in, b_start + diag - 1 - mid, pair + mid, width, keys, capacity))
        lo = mid + 1;
      else
        hi = mid;
    }
    splits[q] = lo;
  }
}

// Output tile q of the pass: its share of the two runs staged in local memory, merged, written in order.
KERNEL void ra_sort_merge(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out,
                          CONSTANT_PTR uint* RESTRICT splits, uint n, uint width, uint keys, uint capacity,
                          uint run, uint parts) {
  LOCAL_ARRAY uint stage[TILE * MAX_WIDTH];
  LOCAL_ARRAY uint order[TILE];
  for (uint q = group_id(); q < parts; q += num_groups()) {
    const uint o = q * TILE;
    uint pair, a_len, b_len;
    pair_of(o, n, run, &pair, &a_len, &b_len);
    const uint b_start = pair + a_len;
    const uint diag0 = o - pair;
    const uint pair_len = a_len + b_len;
    const uint diag1 = pair_len - diag0 < TILE ? pair_len : diag0 + TILE;
    const uint a0 = splits[q];
    const uint a1 = diag1 == pair_len ? a_len : splits[q + 1];
    const uint la = a1 - a0;
    const uint lb = (diag1 - a1) - (diag0 - a0);
    const uint total = la + lb;
    const uint b0 = b_start + (diag0 - a0);
    for (uint p = lid(); p < total; p += WG_SIZE) {
      const uint src = p < la ? pair + a0 + p : b0 + (p - la);
      for (uint c = 0; c < width; ++c) stage[p * MAX_WIDTH + c] = in[AT(src, c, width, capacity)];
    }
    LOCAL_BARRIER();
    // Stage: the first run's tuples at [0, la), the second's at [la, total).
    const uint d = lid() * EPT;
    if (d < total) {
      uint lo = d > lb ? d - lb : 0u;
      uint hi = d < la ? d : la;
      while (lo < hi) {
        const uint mid = (lo + hi) >> 1;
        if (!stage_less(stage, la + d - 1 - mid, mid, keys))
          lo = mid + 1;
        else
          hi = mid;
      }
      uint a = lo;
      uint b = d - lo;
      for (uint k = 0; k < EPT && d + k < total; ++k) {
        if (a < la && (b >= lb || !stage_less(stage, la + b, a, keys))) {
          order[d + k] = a;
          ++a;
        } else {
          order[d + k] = la + b;
          ++b;
        }
      }
    }
    LOCAL_BARRIER();
    for (uint p = lid(); p < total; p += WG_SIZE) {
      const uint x = order[p];
      for (uint c = 0; c < width; ++c) out[AT(o + p, c, width, capacity)] = stage[x * MAX_WIDTH + c];
    }
    LOCAL_BARRIER();
  }
}

#endif  // ALGO_MERGE
