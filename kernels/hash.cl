// Ocelot's hash operators (document 000, sec. 2.2.2, 2.2.3, 3.2, 3.3): the hash join and the hash
// group-by share one open-addressing table of int32 keys, its hash functions and a prefix sum
// (kernels/common/scan.h). One source for OpenCL and CUDA (kernels/common/portable.h); "local memory" is
// shared memory on CUDA, where 64-bit sums use the native 64-bit atomics.
//
// The table has `mask + 1` slots (a power of two) plus one reserved slot at index mask + 1 for the key
// INT_MIN, which doubles as the empty marker: keys[mask + 1] is 0 or 1 (absent or present).
//
// Specialised by defines:
//   HASH_JOIN, HASH_GROUPBY  which operator's kernels to build (1); the table and scan kernels always
//   HASH          1 identity (low bits), 2 multiplicative (Fibonacci), 3 murmur3's finaliser
//   DOUBLE_HASH   0: linear probing; 1: double hashing (Ocelot's hash2/hash3), an odd step per key
//   MAX_LOCAL     the device's largest work-group (sizes local arrays)
//   BATCH         probe rows whose slots a work-item resolves before emitting (join)
//   LOOKUP_LOCAL  1: that batch of slots is staged in local memory, 0: in private memory (join)
//   PREPROCESS    1: hj_count and hj_exec read each probe row's slot from preprocess_ht's output (join)
//   LOCAL_AGG     1: aggregate group ids below LOCAL_GROUPS per work-group in local memory first
//   LOCAL_GROUPS  groups a work-group aggregates locally (group-by)
//   FUSED         1: compute_grouping also aggregates; 0: a separate aggregate kernel does (group-by)
//   SCAN_LOCAL    work-group size of the prefix-sum kernels; SCAN_ITEMS elements per work-item
//   SKETCH_BITS   log2 of the HyperLogLog registers of the group-by's table sizing
//
// Every kernel walks its elements with a work-group-uniform stride loop: a grid that covers the elements
// runs it once, a fixed number of work-groups (Ocelot's `processors`) strides, and the loop's bound is
// the guard that lets the host pad the grid.

// Defaults for the defines the other operator of the family does not set.
#ifndef HASH_JOIN
#define HASH_JOIN 0
#endif
#ifndef HASH_GROUPBY
#define HASH_GROUPBY 0
#endif
#ifndef BATCH
#define BATCH 1
#endif
#ifndef LOOKUP_LOCAL
#define LOOKUP_LOCAL 0
#endif
#ifndef PREPROCESS
#define PREPROCESS 0
#endif
#ifndef LOCAL_AGG
#define LOCAL_AGG 0
#endif
#ifndef LOCAL_GROUPS
#define LOCAL_GROUPS 1024
#endif
#ifndef FUSED
#define FUSED 0
#endif

#include "common/portable.h"
// The prefix sum's kernels: scan_tiles, scan_sums, scan_add (harness/primitives/scan.hpp launches them).
#include "common/scan_kernels.h"

// The join keeps each slot's key and the start of its build rows side by side (one memory sector per
// probe); the group-by's table holds keys only.
#if HASH_JOIN
#define KEY_STRIDE 2
#else
#define KEY_STRIDE 1
#endif
#define KEY(s) keys[(s)*KEY_STRIDE]

#define EMPTY_KEY (-2147483647 - 1)
#define KEY_MAX 2147483647
#define NOT_FOUND 0xffffffffu

// CUDA re-reads words other threads write (through a volatile pointer) where the loop or the test
// depends on them; OpenCL C reads them plainly.
#if VAREX_CUDA
#define READ_SHARED(T, p) (*(volatile T*)(p))
#else
#define READ_SHARED(T, p) (*(p))
#endif

FUNC uint hash_slot(int key, uint mask, uint shift) {
  const uint k = (uint)key;
#if HASH == 1
  return k & mask;
#elif HASH == 2
  return (k * 0x9E3779B1u) >> shift;
#else
  uint h = k;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h & mask;
#endif
}

FUNC uint probe_step(int key, uint shift) {
#if DOUBLE_HASH
  return (((uint)key * 0xCC9E2D51u) >> shift) | 1u;
#else
  return 1u;
#endif
}

// Inserts `key` (Ocelot's pessimistic build: compare-and-swap per slot) and returns its slot, or
// NOT_FOUND when every slot was tried (a table sized from an estimate can be too small).
FUNC uint insert_key(GLOBAL int* keys, int key, uint mask, uint shift) {
  if (key == EMPTY_KEY) {
    KEY(mask + 1) = 1;
    return mask + 1;
  }
  uint s = hash_slot(key, mask, shift);
  const uint step = probe_step(key, shift);
  for (uint probes = 0; probes <= mask; ++probes) {
    const int current = READ_SHARED(int, &KEY(s));
    if (current == key) return s;
    if (current == EMPTY_KEY) {
      const int old = atomic_cas_i32(&KEY(s), EMPTY_KEY, key);
      if (old == EMPTY_KEY || old == key) return s;
    }
    s = (s + step) & mask;
  }
  return NOT_FOUND;
}

// The slot of `key`, or NOT_FOUND. Also finds keys placed by the optimistic build (they sit in their
// first slot).
FUNC uint find_key(GLOBAL const int* RESTRICT keys, int key, uint mask, uint shift) {
  if (key == EMPTY_KEY) return KEY(mask + 1) ? mask + 1 : NOT_FOUND;
  uint s = hash_slot(key, mask, shift);
  const uint step = probe_step(key, shift);
  for (uint probes = 0; probes <= mask; ++probes) {
    const int current = KEY(s);
    if (current == key) return s;
    if (current == EMPTY_KEY) return NOT_FOUND;
    s = (s + step) & mask;
  }
  return NOT_FOUND;
}

#define FOR_EACH(i, n) for (uint i = gid(); i < (n); i += gsize())

// ---- shared by both operators ----

// init_zero_int in the source: every slot empty, the reserved slot absent.
KERNEL void init_table(GLOBAL int* keys, const uint mask) {
  FOR_EACH(i, mask + 1) KEY(i) = EMPTY_KEY;
  if (gid() == 0) KEY(mask + 1) = 0;
}

KERNEL void fill_int(GLOBAL int* out, const int value, const uint n) {
  FOR_EACH(i, n) out[i] = value;
}

// status[1] counts keys that found no free slot.
KERNEL void build_pessimistic(GLOBAL int* keys, GLOBAL const int* RESTRICT in, GLOBAL uint* status,
                              const uint n, const uint mask, const uint shift) {
  FOR_EACH(i, n) {
    if (insert_key(keys, in[i], mask, shift) == NOT_FOUND) atomic_inc_u32(&status[1]);
  }
}

#if HASH_JOIN
// ---- hash join ----

// The start of slot s's build rows in the lookup table, beside its key; slot s has BEGIN(s + 1) - BEGIN(s).
#define BEGIN(s) keys[2 * (s) + 1]

// countKeyCardinality: build rows per slot.
KERNEL void count_cardinality(GLOBAL const int* RESTRICT keys, GLOBAL const int* RESTRICT build,
                              GLOBAL uint* counts, const uint n, const uint mask, const uint shift) {
  FOR_EACH(i, n) atomic_inc_u32(&counts[find_key(keys, build[i], mask, shift)]);
}

// The prefix sums of the counts (n = slots + 2 of them, the total last) into the slots' BEGIN.
KERNEL void place_offsets(GLOBAL int* keys, GLOBAL const uint* RESTRICT offsets, const uint n) {
  FOR_EACH(s, n) BEGIN(s) = (int)offsets[s];
}

// buildLookupTable: build row ids grouped by slot; counts runs down to zero as the positions are taken.
KERNEL void build_lookup(GLOBAL const int* RESTRICT keys, GLOBAL const int* RESTRICT build,
                         GLOBAL uint* counts, GLOBAL uint* RESTRICT lookup, const uint n, const uint mask,
                         const uint shift) {
  FOR_EACH(i, n) {
    const uint s = find_key(keys, build[i], mask, shift);
    lookup[(uint)BEGIN(s) + atomic_dec_u32(&counts[s]) - 1] = i;
  }
}

// PreprocessHT: the slot of every probe row, read by hj_count and hj_exec instead of probing twice.
KERNEL void preprocess_ht(GLOBAL const int* RESTRICT keys, GLOBAL const int* RESTRICT probe,
                          GLOBAL uint* RESTRICT slots, const uint n, const uint mask, const uint shift) {
  FOR_EACH(i, n) slots[i] = find_key(keys, probe[i], mask, shift);
}

#if PREPROCESS
#define PROBE_SLOT(j) (slots[j])
#define PROBE_INPUT GLOBAL const uint* RESTRICT slots
#else
#define PROBE_SLOT(j) find_key(keys, probe[j], mask, shift)
#define PROBE_INPUT GLOBAL const int* RESTRICT probe
#endif

// A work-item handles probe rows j, j + stride, …; BATCH of them at a time: their slots are resolved
// into the lookup array first (private or local memory), then used.
#if LOOKUP_LOCAL
#define LOOKUP_DECL LOCAL_ARRAY uint lookup_cache[MAX_LOCAL * BATCH];
#define LOOKUP(b) lookup_cache[(b)*lsize() + lid()]
#else
#define LOOKUP_DECL uint lookup_cache[BATCH];
#define LOOKUP(b) lookup_cache[b]
#endif

// The slots of the probe rows first, first + stride, … of one batch.
#define RESOLVE_BATCH(first, stride, n)              \
  PRAGMA_UNROLL for (uint b = 0; b < BATCH; ++b) {   \
    const uint j = (first) + b * (stride);           \
    LOOKUP(b) = j < (n) ? PROBE_SLOT(j) : NOT_FOUND; \
  }

// hj_count: matches per probe row.
KERNEL void hj_count(GLOBAL const int* RESTRICT keys, PROBE_INPUT, GLOBAL uint* RESTRICT matches,
                     const uint n, const uint mask, const uint shift) {
  LOOKUP_DECL
  const uint stride = gsize();
  for (uint first = gid(); first < n; first += BATCH * stride) {
    RESOLVE_BATCH(first, stride, n);
    PRAGMA_UNROLL for (uint b = 0; b < BATCH; ++b) {
      const uint j = first + b * stride;
      const uint s = LOOKUP(b);
      if (j < n) matches[j] = s == NOT_FOUND ? 0u : (uint)(BEGIN(s + 1) - BEGIN(s));
    }
  }
}

// hj_exec: the pairs (build row, probe row), probe rows in order, from the exclusive sums of the matches.
KERNEL void hj_exec(GLOBAL const int* RESTRICT keys, PROBE_INPUT, GLOBAL const uint* RESTRICT lookup,
                    GLOBAL const uint* RESTRICT positions, GLOBAL uint* RESTRICT out_build,
                    GLOBAL uint* RESTRICT out_probe, const uint n, const uint mask, const uint shift) {
  LOOKUP_DECL
  const uint stride = gsize();
  for (uint first = gid(); first < n; first += BATCH * stride) {
    RESOLVE_BATCH(first, stride, n);
    PRAGMA_UNROLL for (uint b = 0; b < BATCH; ++b) {
      const uint j = first + b * stride;
      const uint s = LOOKUP(b);
      if (j >= n || s == NOT_FOUND) continue;
      const uint begin = (uint)BEGIN(s);
      const uint count = (uint)BEGIN(s + 1) - begin;
      const uint at = positions[j];
      for (uint k = 0; k < count; ++k) {
        out_build[at + k] = lookup[begin + k];
        out_probe[at + k] = j;
      }
    }
  }
}

#endif  // HASH_JOIN

#if HASH_GROUPBY
// ---- group-by ----

// HyperLogLog over the keys (2^SKETCH_BITS registers of the largest rank seen), from which the host sizes
// the group-by's table by the number of distinct keys instead of the number of rows. murmur3's finaliser
// is a bijection, so distinct keys never share a hash.
KERNEL void sketch(GLOBAL const int* RESTRICT in, GLOBAL uint* registers, const uint n) {
  FOR_EACH(i, n) {
    uint h = (uint)in[i];
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    const uint bucket = h >> (32 - SKETCH_BITS);
    const uint rank = clz_u32((h << SKETCH_BITS) | (1u << (SKETCH_BITS - 1))) + 1;
    if (rank > READ_SHARED(uint, &registers[bucket])) atomic_max_u32(&registers[bucket], rank);
  }
}

// buildHashTableOptimistic: every key written to its first slot without atomics; collisions are found by
// validateHashTable, after which the host rebuilds pessimistically.
KERNEL void build_optimistic(GLOBAL int* keys, GLOBAL const int* RESTRICT in, const uint n, const uint mask,
                             const uint shift) {
  FOR_EACH(i, n) {
    const int key = in[i];
    if (key == EMPTY_KEY) {
      keys[mask + 1] = 1;
    } else {
      // Reading first keeps a slot that already holds the key from being written again.
      const uint s = hash_slot(key, mask, shift);
      if (keys[s] != key) keys[s] = key;
    }
  }
}

// status[0] counts rows whose key lost its slot to another key.
KERNEL void validate_table(GLOBAL const int* RESTRICT keys, GLOBAL const int* RESTRICT in,
                           GLOBAL uint* status, const uint n, const uint mask, const uint shift) {
  FOR_EACH(i, n) {
    const int key = in[i];
    if (key != EMPTY_KEY && keys[hash_slot(key, mask, shift)] != key) atomic_inc_u32(&status[0]);
  }
}

// prepareIDTable: 1 for every occupied slot (the reserved one included), scanned into group ids.
KERNEL void prepare_ids(GLOBAL const int* RESTRICT keys, GLOBAL uint* RESTRICT flags, const uint mask) {
  FOR_EACH(s, mask + 1) flags[s] = keys[s] != EMPTY_KEY;
  if (gid() == 0) flags[mask + 1] = keys[mask + 1] != 0;
}

// The key of every group, from its slot.
KERNEL void assign_groups(GLOBAL const int* RESTRICT keys, GLOBAL const uint* RESTRICT ids,
                          GLOBAL int* RESTRICT group_keys, const uint mask) {
  FOR_EACH(s, mask + 1) {
    if (keys[s] != EMPTY_KEY) group_keys[ids[s]] = keys[s];
  }
  if (gid() == 0 && keys[mask + 1]) group_keys[ids[mask + 1]] = EMPTY_KEY;
}

// Aggregates start empty: count 0, sum 0, min INT_MAX, max INT_MIN.
KERNEL void init_aggregates(GLOBAL uint* counts, GLOBAL slong* sums, GLOBAL int* mins, GLOBAL int* maxs,
                            const uint groups) {
  FOR_EACH(g, groups) {
    counts[g] = 0;
    sums[g] = 0;
    mins[g] = KEY_MAX;
    maxs[g] = EMPTY_KEY;
  }
}

// 64-bit sums: `space` is the address space of `sums` (LOCAL or GLOBAL).
#if VAREX_CUDA
#define SUM_ADD(space, sums, g, value) atomic_add_u64((ulong*)(sums) + (g), (ulong)(slong)(value))
#elif VAREX_HAVE_ATOMIC_U64
#define SUM_ADD(space, sums, g, value) atom_add((volatile space long*)(sums) + (g), (long)(value))
#else
// A 64-bit sum as two 32-bit words (little-endian: low, high). Adding the low word returns its old value,
// from which the carry into the high word follows exactly, so the pair ends as the correct 64-bit total.
#define SUM_ADD(space, sums, g, value)                                       \
  do {                                                                       \
    const ulong v64 = (ulong)(long)(value);                                  \
    const uint lo = (uint)v64;                                               \
    const uint old = atomic_add((volatile space uint*)(sums) + 2 * (g), lo); \
    const uint hi = (uint)(v64 >> 32) + (old + lo < old ? 1u : 0u);          \
    if (hi) atomic_add((volatile space uint*)(sums) + 2 * (g) + 1, hi);      \
  } while (0)
#endif

// Min and max are read first: most rows do not move them, and those need no atomic.
#define AGG_ROW(space, counts, sums, mins, maxs, g, value)                                 \
  do {                                                                                     \
    atomic_inc_u32((counts) + (g));                                                        \
    SUM_ADD(space, sums, g, value);                                                        \
    if ((value) < ((volatile space int*)(mins))[g]) atomic_min_i32((mins) + (g), (value)); \
    if ((value) > ((volatile space int*)(maxs))[g]) atomic_max_i32((maxs) + (g), (value)); \
  } while (0)

#if LOCAL_AGG
// Group ids below LOCAL_GROUPS are aggregated per work-group in local memory, the rest directly.
#define LOCAL_AGG_DECL                                   \
  LOCAL_ARRAY uint l_counts[LOCAL_GROUPS];               \
  LOCAL_ARRAY slong l_sums[LOCAL_GROUPS];                \
  LOCAL_ARRAY int l_mins[LOCAL_GROUPS];                  \
  LOCAL_ARRAY int l_maxs[LOCAL_GROUPS];                  \
  for (uint g = lid(); g < LOCAL_GROUPS; g += lsize()) { \
    l_counts[g] = 0;                                     \
    l_sums[g] = 0;                                       \
    l_mins[g] = KEY_MAX;                                 \
    l_maxs[g] = EMPTY_KEY;                               \
  }                                                      \
  LOCAL_BARRIER();
#define AGGREGATE(g, value)                                       \
  do {                                                            \
    if ((g) < LOCAL_GROUPS)                                       \
      AGG_ROW(LOCAL, l_counts, l_sums, l_mins, l_maxs, g, value); \
    else                                                          \
      AGG_ROW(GLOBAL, counts, sums, mins, maxs, g, value);        \
  } while (0)
// The work-group's totals go into the global ones: one atomic per touched group and aggregate.
#define LOCAL_AGG_MERGE                                  \
  LOCAL_BARRIER();                                       \
  for (uint g = lid(); g < LOCAL_GROUPS; g += lsize()) { \
    if (l_counts[g] == 0) continue;                      \
    atomic_add_u32(counts + g, l_counts[g]);             \
    SUM_ADD(GLOBAL, sums, g, l_sums[g]);                 \
    atomic_min_i32(mins + g, l_mins[g]);                 \
    atomic_max_i32(maxs + g, l_maxs[g]);                 \
  }
#else
#define LOCAL_AGG_DECL
#define AGGREGATE(g, value) AGG_ROW(GLOBAL, counts, sums, mins, maxs, g, value)
#define LOCAL_AGG_MERGE
#endif

// computeGroupingHt: the group id of every row; with FUSED the aggregates are updated in the same pass.
KERNEL void compute_grouping(GLOBAL const int* RESTRICT keys, GLOBAL const uint* RESTRICT ids,
                             GLOBAL const int* RESTRICT in, GLOBAL const int* RESTRICT values,
                             GLOBAL uint* RESTRICT gids, GLOBAL uint* counts, GLOBAL slong* sums,
                             GLOBAL int* mins, GLOBAL int* maxs, const uint n, const uint mask,
                             const uint shift) {
#if FUSED
  LOCAL_AGG_DECL
#endif
  FOR_EACH(i, n) {
    const uint g = ids[find_key(keys, in[i], mask, shift)];
    gids[i] = g;
#if FUSED
    const int value = values[i];
    AGGREGATE(g, value);
#endif
  }
#if FUSED
  LOCAL_AGG_MERGE
#endif
}

// The aggregates from the group ids, when not fused into compute_grouping.
KERNEL void aggregate(GLOBAL const uint* RESTRICT gids, GLOBAL const int* RESTRICT values,
                      GLOBAL uint* counts, GLOBAL slong* sums, GLOBAL int* mins, GLOBAL int* maxs,
                      const uint n){LOCAL_AGG_DECL FOR_EACH(i, n){const uint g = gids[i];
const int value = values[i];
AGGREGATE(g, value);
}
LOCAL_AGG_MERGE
}

// generateExtentsTable: one representative row per group. Rows past the input (host padding) carry the
// id of a spare slot.
KERNEL void extents(GLOBAL const uint* RESTRICT gids, GLOBAL uint* RESTRICT out, const uint n) {
  FOR_EACH(i, n) out[gids[i]] = i;
}
#endif  // HASH_GROUPBY
