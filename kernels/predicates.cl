// Govindaraju's predicates and aggregates (document 004, sec. 4), re-expressed as compute kernels over
// records of signed 32-bit attributes. One source for OpenCL and CUDA (kernels/common/portable.h).
//
// The records lie by column: attribute c of row r at cols[c * capacity + r]; A(c) reads it for the row r
// at hand. The host turns a query into expressions over A(c) and passes them as defines:
//   KEEP          the whole filter (the fused kernel, and the `where` of the aggregates); absent: every row
//   CLAUSE_<i>    clause i alone (the clause-by-clause passes), CLAUSES of them
// Specialised further by:
//   WG_SIZE       the work-group size (a multiple of 32; sizes the work-group arrays)
//   EPT           rows per work-item and tile: a work-group takes WG_SIZE x EPT consecutive rows at a time,
//                 work-item l the rows tile + j * WG_SIZE + l (coalesced), striding by the grid
//   PRED_FILTER / PRED_AGGREGATE / PRED_SELECT   which kernels the program holds
//   PACK_BALLOT   the filter packs its mask by warp ballots (needs VAREX_WARP_BALLOT), else through local
//                 memory
#include "common/portable.h"
#include "common/reduce.h"

#ifndef KEEP
#define KEEP 1u
#endif
#define A(c) cols[(ulong)(c)*capacity + r]
#define TILE_ROWS (WG_SIZE * EPT)
// The widest digit of the k-th largest (routine 4.5 takes 1 bit per pass).
#define MAX_RADIX_BITS 11
#define FOR_TILES(tile) for (uint tile = group_id() * TILE_ROWS; tile < n; tile += num_groups() * TILE_ROWS)

#if PRED_FILTER
#define CLAUSE_CASE(i) \
  case i:              \
    return CLAUSE_##i;

// Clause `clause` of the query on row r.
FUNC uint clause_holds(GLOBAL const int* RESTRICT cols, ulong capacity, uint r, uint clause) {
  switch (clause) {
#if CLAUSES > 0
    CLAUSE_CASE(0)
#endif
#if CLAUSES > 1
    CLAUSE_CASE(1)
#endif
#if CLAUSES > 2
    CLAUSE_CASE(2)
#endif
#if CLAUSES > 3
    CLAUSE_CASE(3)
#endif
#if CLAUSES > 4
    CLAUSE_CASE(4)
#endif
#if CLAUSES > 5
    CLAUSE_CASE(5)
#endif
#if CLAUSES > 6
    CLAUSE_CASE(6)
#endif
#if CLAUSES > 7
    CLAUSE_CASE(7)
#endif
  }
  return 1u;
}

#ifndef PACK_BALLOT
#define PACK_BALLOT 0
#endif
#if PACK_BALLOT && !VAREX_WARP_BALLOT
#error "PACK_BALLOT needs warp ballots (CUDA, or NVIDIA's OpenCL with VAREX_WARP_PTX)"
#endif

// Row j of a work-item's share of a tile. Ballots: each warp takes 32 x EPT consecutive rows, 32 at a time,
// so that its EPT words of the mask are consecutive (one coalesced store). Local memory: the work-group's
// rows j * WG_SIZE + lid().
#if PACK_BALLOT
#define FILTER_ROW(tile, j) ((tile) + (lid() & ~31u) * EPT + (j)*32u + (lid() & 31u))
#else
#define FILTER_ROW(tile, j) ((tile) + (j)*WG_SIZE + lid())
#endif

// pass 0: the fused filter (KEEP); 1: the first clause-by-clause pass (clause `clause` alone); 2: a later
// pass, clause `clause` on the rows the mask still holds (routine 4.3's stencil: rows already out are not
// evaluated). count_only: instead of writing the mask, add the kept rows and the sum of their indices to
// result[0] and result[1] (the count the paper takes with an occlusion query).
// The bits become whole 32-bit words of the mask: by a warp ballot per row of the tile, or through a byte per
// row of the tile in local memory, packed once per tile (two barriers per tile, none inside the unrolled
// rows: PoCL compiles barriers in unrolled loops very slowly).
KERNEL void filter(GLOBAL const int* RESTRICT cols, GLOBAL uint* RESTRICT mask, GLOBAL ulong* RESTRICT result,
                   const uint n, const ulong capacity, const uint clause, const uint pass,
                   const uint count_only) {
#if !PACK_BALLOT
  LOCAL_ARRAY uchar parts[TILE_ROWS];
#endif
  LOCAL_ARRAY uint count_scratch[WG_SIZE];
  LOCAL_ARRAY ulong sum_scratch[WG_SIZE];
  const uint nwords = (n + 31) / 32;
  uint count = 0;
  ulong index_sum = 0;
  FOR_TILES(tile) {
    // First every row's bit (all loads of the tile in flight at once), then the words: a ballot between
    // the loads would keep one load per work-item in flight.
    uint bits[EPT];
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint r = FILTER_ROW(tile, j);
      uint bit = 0;
      if (r < n) {
        if (pass == 0) {
          bit = (uint)(KEEP);
        } else if (pass == 1 || ((mask[r >> 5] >> (r & 31u)) & 1u)) {
          bit = clause_holds(cols, capacity, r, clause);
        }
      }
      bits[j] = bit;
      count += bit;
      index_sum += bit ? r : 0;
    }
#if PACK_BALLOT
    if (!count_only) {
      // The warp's EPT words are consecutive: lane j keeps word j, and the warp stores them at once.
      uint mine = 0;
      PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
        const uint word = warp_ballot(bits[j]);
        if ((lid() & 31u) == j) mine = word;
      }
      const uint index = (FILTER_ROW(tile, 0) >> 5) + (lid() & 31u);
      if ((lid() & 31u) < EPT && index < nwords) mask[index] = mine;
    }
#else
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) parts[j * WG_SIZE + lid()] = (uchar)bits[j];
    LOCAL_BARRIER();
    for (uint w = lid(); w < TILE_ROWS / 32 && !count_only; w += WG_SIZE) {
      uint word = 0;
      for (uint b = 0; b < 32; ++b) word |= (uint)parts[w * 32 + b] << b;
      if ((tile >> 5) + w < nwords) mask[(tile >> 5) + w] = word;
    }
    LOCAL_BARRIER();
#endif
  }
  if (count_only) {
    count = wg_reduce_add_u32(count_scratch, count);
    index_sum = wg_reduce_add_u64(sum_scratch, index_sum);
    if (lid() == 0 && count) {
      global_add_u64(result, (ulong)count);
      global_add_u64(result + 1, index_sum);
    }
  }
}
#endif  // PRED_FILTER

#if PRED_AGGREGATE || PRED_SELECT
// The accumulators of the aggregates: [0] rows kept, [1] their sum, [2] min and max as two ints, [3 + i]
// rows whose value has bit i set (i < 32).
#define ACC_WORDS 35
KERNEL void aggregate_init(GLOBAL ulong* RESTRICT acc) {
  for (uint i = lid(); i < ACC_WORDS; i += lsize()) acc[i] = 0;
  GLOBAL_BARRIER();
  if (lid() == 0) {
    ((GLOBAL int*)acc)[4] = 2147483647;
    ((GLOBAL int*)acc)[5] = -2147483647 - 1;
  }
}
#endif

#if PRED_AGGREGATE
#ifndef AGG_EXTREMES
#define AGG_EXTREMES 1  // whether MIN and MAX are wanted (their atomics cost where they are not)
#endif
// COUNT, SUM (64-bit), MIN and MAX of attribute `attr` over the rows KEEP holds, in one pass.
KERNEL void aggregate_direct(GLOBAL const int* RESTRICT cols, GLOBAL ulong* RESTRICT acc, const uint n,
                             const ulong capacity, const uint attr) {
  LOCAL_ARRAY uint count_scratch[WG_SIZE];
  LOCAL_ARRAY ulong sum_scratch[WG_SIZE];
  LOCAL_ARRAY int extremes[2];
  GLOBAL const int* values = cols + (ulong)attr * capacity;
  if (lid() == 0) {
    extremes[0] = 2147483647;
    extremes[1] = -2147483647 - 1;
  }
  LOCAL_BARRIER();
  uint count = 0;
  ulong sum = 0;
  int lo = 2147483647, hi = -2147483647 - 1;
  FOR_TILES(tile) {
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint r = tile + j * WG_SIZE + lid();
      if (r < n && (KEEP)) {
        const int v = values[r];
        ++count;
        sum += (ulong)(slong)v;
        lo = min(lo, v);
        hi = max(hi, v);
      }
    }
  }
  count = wg_reduce_add_u32(count_scratch, count);
  sum = wg_reduce_add_u64(sum_scratch, sum);
  if (AGG_EXTREMES) {
    atomic_min_i32(&extremes[0], lo);
    atomic_max_i32(&extremes[1], hi);
  }
  LOCAL_BARRIER();
  if (lid() == 0 && count) {
    global_add_u64(acc, (ulong)count);
    global_add_u64(acc + 1, sum);
    if (AGG_EXTREMES) {
      atomic_min_i32((GLOBAL int*)acc + 4, extremes[0]);
      atomic_max_i32((GLOBAL int*)acc + 5, extremes[1]);
    }
  }
}

// Routine 4.6's counting: for bits first_bit .. first_bit + nbits - 1 of attribute `attr` (nbits <= 32),
// how many kept rows have the bit set (the paper: one occlusion query per bit); the first pass also counts
// the kept rows.
KERNEL void aggregate_bits(GLOBAL const int* RESTRICT cols, GLOBAL ulong* RESTRICT acc, const uint n,
                           const ulong capacity, const uint attr, const uint first_bit, const uint nbits) {
  LOCAL_ARRAY uint counts[33];
  GLOBAL const int* values = cols + (ulong)attr * capacity;
  for (uint i = lid(); i < 33; i += WG_SIZE) counts[i] = 0;
  LOCAL_BARRIER();
  uint kept = 0;
  uint set[32];
  PRAGMA_UNROLL for (uint b = 0; b < 32; ++b) set[b] = 0;
  FOR_TILES(tile) {
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint r = tile + j * WG_SIZE + lid();
      if (r < n && (KEEP)) {
        const uint v = (uint)values[r] >> first_bit;
        ++kept;
        PRAGMA_UNROLL for (uint b = 0; b < 32; ++b) if (b < nbits) set[b] += (v >> b) & 1u;
      }
    }
  }
  if (kept) {
    atomic_add_u32(&counts[0], kept);
    PRAGMA_UNROLL for (uint b = 0; b < 32; ++b) if (b < nbits && set[b])
        atomic_add_u32(&counts[1 + b], set[b]);
  }
  LOCAL_BARRIER();
  for (uint i = lid(); i <= nbits; i += WG_SIZE) {
    if (counts[i] && (i > 0 || first_bit == 0)) {
      global_add_u64(i == 0 ? acc : acc + 3 + first_bit + i - 1, (ulong)counts[i]);
    }
  }
}

// out[0] = rows aggregated, out[1] = the result as a signed 64-bit value (fn 0 count, 1 sum, 2 min, 3 max;
// `from_bits`: the sum is Σ 2^i count(bit i), bit 31 weighing -2^31). Over no rows every result is 0.
KERNEL void aggregate_finish(GLOBAL const ulong* RESTRICT acc, GLOBAL ulong* RESTRICT out, const uint fn,
                             const uint from_bits) {
  if (gid() != 0) return;
  const ulong rows = acc[0];
  ulong value = 0;
  if (fn == 0) {
    value = rows;
  } else if (fn == 1 && !from_bits) {
    value = acc[1];
  } else if (fn == 1) {
    for (uint i = 0; i < 31; ++i) value += acc[3 + i] << i;
    value -= acc[3 + 31] << 31;
  } else if (rows) {
    value = (ulong)(slong)((GLOBAL const int*)acc)[fn == 2 ? 4 : 5];
  }
  out[0] = rows;
  out[1] = value;
}
#endif  // PRED_AGGREGATE

#if PRED_SELECT
// The k-th largest (routine 4.5), one digit per pass from the most significant, on the order-preserving
// unsigned form of the values (the sign bit flipped). state: [0] the digits chosen so far, [1] k among the
// rows that still match them, [2] rows kept.
FUNC uint ordered(int v) {
  return (uint)v ^ 0x80000000u;
}

KERNEL void select_init(GLOBAL uint* RESTRICT state, const uint k) {
  if (gid() == 0) {
    state[0] = 0;
    state[1] = k;
    state[2] = 0;
  }
}

// Counts, per value of the digit at bits shift .. shift + width - 1, the kept rows whose higher bits equal
// the digits chosen so far.
KERNEL void select_histogram(GLOBAL const int* RESTRICT cols, GLOBAL const uint* RESTRICT state,
                             GLOBAL uint* RESTRICT hist, const uint n, const ulong capacity, const uint attr,
                             const uint shift, const uint width) {
  LOCAL_ARRAY uint bins[1 << MAX_RADIX_BITS];
  GLOBAL const int* values = cols + (ulong)attr * capacity;
  const uint nbins = 1u << width;
  for (uint i = lid(); i < nbins; i += WG_SIZE) bins[i] = 0;
  LOCAL_BARRIER();
  const uint above = shift + width;
  const uint prefix = state[0];
  FOR_TILES(tile) {
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint r = tile + j * WG_SIZE + lid();
      if (r < n && (KEEP)) {
        const uint u = ordered(values[r]);
        if (above == 32 || (u >> above) == prefix) atomic_inc_u32(&bins[(u >> shift) & (nbins - 1u)]);
      }
    }
  }
  LOCAL_BARRIER();
  for (uint i = lid(); i < nbins; i += WG_SIZE) {
    if (bins[i]) atomic_add_u32(&hist[i], bins[i]);
  }
}

// One work-group: the first work-item walks the histogram from the largest digit until k rows are
// passed and appends that digit; then the group clears the histogram for the next pass.
KERNEL void select_pick(GLOBAL uint* RESTRICT state, GLOBAL uint* RESTRICT hist, const uint width,
                        const uint first) {
  const uint nbins = 1u << width;
  if (lid() == 0) {
    if (first) {
      uint total = 0;
      for (uint d = 0; d < nbins; ++d) total += hist[d];
      state[2] = total;
    }
    uint k = state[1];
    if (first && k == 0) k = state[2];  // k = 0 asks for the smallest: the k-th largest of all kept rows
    uint d = nbins - 1u;
    for (; d > 0u && k > hist[d]; --d) k -= hist[d];
    state[0] = (state[0] << width) | d;
    state[1] = k;
  }
  GLOBAL_BARRIER();
  for (uint i = lid(); i < nbins; i += lsize()) hist[i] = 0;
}

KERNEL void select_finish(GLOBAL const uint* RESTRICT state, GLOBAL ulong* RESTRICT out) {
  if (gid() != 0) return;
  out[0] = state[2];
  out[1] = state[2] ? (ulong)(slong)(int)(state[0] ^ 0x80000000u) : 0;
}

// For the sorting variant: the ordered form of every value, kept rows only (the others become 0, the
// smallest, which leaves the k-th largest of the kept rows where it was for k <= rows kept); the kept rows
// counted into acc[0].
KERNEL void select_keys(GLOBAL const int* RESTRICT cols, GLOBAL uint* RESTRICT keys,
                        GLOBAL ulong* RESTRICT acc, const uint n, const ulong capacity, const uint attr) {
  LOCAL_ARRAY uint count_scratch[WG_SIZE];
  GLOBAL const int* values = cols + (ulong)attr * capacity;
  uint kept = 0;
  FOR_TILES(tile) {
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint r = tile + j * WG_SIZE + lid();
      if (r < n) {
        const uint keep = (uint)(KEEP);
        kept += keep;
        keys[r] = keep ? ordered(values[r]) : 0u;
      }
    }
  }
  kept = wg_reduce_add_u32(count_scratch, kept);
  if (lid() == 0 && kept) global_add_u64(acc, (ulong)kept);
}

// The k-th largest of the sorted keys (ascending): keys[n - k].
KERNEL void select_sorted_finish(GLOBAL const uint* RESTRICT sorted, GLOBAL const ulong* RESTRICT acc,
                                 GLOBAL ulong* RESTRICT out, const uint n, const uint k) {
  if (gid() != 0) return;
  out[0] = acc[0];
  out[1] = acc[0] ? (ulong)(slong)(int)(sorted[n - k] ^ 0x80000000u) : 0;
}
#endif  // PRED_SELECT
