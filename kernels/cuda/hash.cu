// Ocelot's hash operators: the hash join and the hash group-by on one open-addressing table of int32
// keys. Same kernels, defines and semantics as kernels/opencl/hash.cl (HASH, DOUBLE_HASH, MAX_LOCAL,
// BATCH, LOOKUP_LOCAL, PREPROCESS, LOCAL_AGG, LOCAL_GROUPS, FUSED, SCAN_LOCAL, SCAN_ITEMS, SKETCH_BITS);
// "local memory" there is shared memory here, and 64-bit sums use CUDA's native 64-bit atomics.

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
// The join keeps each slot's key and the start of its build rows side by side (one memory sector per
// probe); the group-by's table holds keys only.
#if HASH_JOIN
#define KEY_STRIDE 2
#else
#define KEY_STRIDE 1
#endif
#define KEY(s) keys[(s)*KEY_STRIDE]

#define EMPTY_KEY (-2147483647 - 1)
#define INT_MAX_ 2147483647
#define NOT_FOUND 0xffffffffu

__device__ __forceinline__ unsigned hash_slot(int key, unsigned mask, unsigned shift) {
  const unsigned k = (unsigned)key;
#if HASH == 1
  return k & mask;
#elif HASH == 2
  return (k * 0x9E3779B1u) >> shift;
#else
  unsigned h = k;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h & mask;
#endif
}

__device__ __forceinline__ unsigned probe_step(int key, unsigned shift) {
#if DOUBLE_HASH
  return (((unsigned)key * 0xCC9E2D51u) >> shift) | 1u;
#else
  return 1u;
#endif
}

__device__ __forceinline__ unsigned insert_key(int* keys, int key, unsigned mask, unsigned shift) {
  if (key == EMPTY_KEY) {
    KEY(mask + 1) = 1;
    return mask + 1;
  }
  unsigned s = hash_slot(key, mask, shift);
  const unsigned step = probe_step(key, shift);
  for (unsigned probes = 0; probes <= mask; ++probes) {
    const int current = *(volatile int*)&KEY(s);
    if (current == key) return s;
    if (current == EMPTY_KEY) {
      const int old = atomicCAS(&KEY(s), EMPTY_KEY, key);
      if (old == EMPTY_KEY || old == key) return s;
    }
    s = (s + step) & mask;
  }
  return NOT_FOUND;
}

__device__ __forceinline__ unsigned find_key(const int* __restrict__ keys, int key, unsigned mask,
                                             unsigned shift) {
  if (key == EMPTY_KEY) return KEY(mask + 1) ? mask + 1 : NOT_FOUND;
  unsigned s = hash_slot(key, mask, shift);
  const unsigned step = probe_step(key, shift);
  for (unsigned probes = 0; probes <= mask; ++probes) {
    const int current = KEY(s);
    if (current == key) return s;
    if (current == EMPTY_KEY) return NOT_FOUND;
    s = (s + step) & mask;
  }
  return NOT_FOUND;
}

#define GLOBAL_ID (blockIdx.x * blockDim.x + threadIdx.x)
#define GLOBAL_SIZE (gridDim.x * blockDim.x)
#define FOR_EACH(i, n) for (unsigned i = GLOBAL_ID; i < (n); i += GLOBAL_SIZE)

// ---- shared by both operators ----

extern "C" __global__ void init_table(int* keys, unsigned mask) {
  FOR_EACH(i, mask + 1) KEY(i) = EMPTY_KEY;
  if (GLOBAL_ID == 0) KEY(mask + 1) = 0;
}

extern "C" __global__ void fill_int(int* out, int value, unsigned n) {
  FOR_EACH(i, n) out[i] = value;
}

extern "C" __global__ void build_pessimistic(int* keys, const int* __restrict__ in, unsigned* status,
                                             unsigned n, unsigned mask, unsigned shift) {
  FOR_EACH(i, n) {
    if (insert_key(keys, in[i], mask, shift) == NOT_FOUND) atomicAdd(&status[1], 1u);
  }
}

// Prefix sum in three kernels (the source's prefixsum_seq/par/inc): exclusive sums of `in` into `out`,
// which has n + 1 entries, the last one the total (kernels/common/scan.h; launched by
// harness/primitives/scan.hpp).
#include "common/scan_kernels.h"

#if HASH_JOIN
// ---- hash join ----

#define BEGIN(s) keys[2 * (s) + 1]

extern "C" __global__ void count_cardinality(const int* __restrict__ keys, const int* __restrict__ build,
                                             unsigned* counts, unsigned n, unsigned mask, unsigned shift) {
  FOR_EACH(i, n) atomicAdd(&counts[find_key(keys, build[i], mask, shift)], 1u);
}

extern "C" __global__ void place_offsets(int* keys, const unsigned* __restrict__ offsets, unsigned n) {
  FOR_EACH(s, n) BEGIN(s) = (int)offsets[s];
}

extern "C" __global__ void build_lookup(const int* __restrict__ keys, const int* __restrict__ build,
                                        unsigned* counts, unsigned* __restrict__ lookup, unsigned n,
                                        unsigned mask, unsigned shift) {
  FOR_EACH(i, n) {
    const unsigned s = find_key(keys, build[i], mask, shift);
    lookup[(unsigned)BEGIN(s) + atomicSub(&counts[s], 1u) - 1] = i;
  }
}

extern "C" __global__ void preprocess_ht(const int* __restrict__ keys, const int* __restrict__ probe,
                                         unsigned* __restrict__ slots, unsigned n, unsigned mask,
                                         unsigned shift) {
  FOR_EACH(i, n) slots[i] = find_key(keys, probe[i], mask, shift);
}

#if PREPROCESS
#define PROBE_SLOT(j) (slots[j])
#define PROBE_INPUT const unsigned* __restrict__ slots
#else
#define PROBE_SLOT(j) find_key(keys, probe[j], mask, shift)
#define PROBE_INPUT const int* __restrict__ probe
#endif

#if LOOKUP_LOCAL
#define LOOKUP_DECL __shared__ unsigned lookup_cache[MAX_LOCAL * BATCH];
#define LOOKUP(b) lookup_cache[(b)*blockDim.x + threadIdx.x]
#else
#define LOOKUP_DECL unsigned lookup_cache[BATCH];
#define LOOKUP(b) lookup_cache[b]
#endif

// The slots of the probe rows first, first + stride, … of one batch.
#define RESOLVE_BATCH(first, stride, n)                    \
  _Pragma("unroll") for (unsigned b = 0; b < BATCH; ++b) { \
    const unsigned j = (first) + b * (stride);             \
    LOOKUP(b) = j < (n) ? PROBE_SLOT(j) : NOT_FOUND;       \
  }

extern "C" __global__ void hj_count(const int* __restrict__ keys, PROBE_INPUT, unsigned* __restrict__ matches,
                                    unsigned n, unsigned mask, unsigned shift) {
  LOOKUP_DECL
  const unsigned stride = GLOBAL_SIZE;
  for (unsigned first = GLOBAL_ID; first < n; first += BATCH * stride) {
    RESOLVE_BATCH(first, stride, n);
#pragma unroll
    for (unsigned b = 0; b < BATCH; ++b) {
      const unsigned j = first + b * stride;
      const unsigned s = LOOKUP(b);
      if (j < n) matches[j] = s == NOT_FOUND ? 0u : (unsigned)(BEGIN(s + 1) - BEGIN(s));
    }
  }
}

extern "C" __global__ void hj_exec(const int* __restrict__ keys, PROBE_INPUT,
                                   const unsigned* __restrict__ lookup,
                                   const unsigned* __restrict__ positions, unsigned* __restrict__ out_build,
                                   unsigned* __restrict__ out_probe, unsigned n, unsigned mask,
                                   unsigned shift) {
  LOOKUP_DECL
  const unsigned stride = GLOBAL_SIZE;
  for (unsigned first = GLOBAL_ID; first < n; first += BATCH * stride) {
    RESOLVE_BATCH(first, stride, n);
#pragma unroll
    for (unsigned b = 0; b < BATCH; ++b) {
      const unsigned j = first + b * stride;
      const unsigned s = LOOKUP(b);
      if (j >= n || s == NOT_FOUND) continue;
      const unsigned begin = (unsigned)BEGIN(s);
      const unsigned count = (unsigned)BEGIN(s + 1) - begin;
      const unsigned at = positions[j];
      for (unsigned k = 0; k < count; ++k) {
        out_build[at + k] = lookup[begin + k];
        out_probe[at + k] = j;
      }
    }
  }
}

#endif  // HASH_JOIN

#if HASH_GROUPBY
// ---- group-by ----

extern "C" __global__ void sketch(const int* __restrict__ in, unsigned* registers, unsigned n) {
  FOR_EACH(i, n) {
    unsigned h = (unsigned)in[i];
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    const unsigned bucket = h >> (32 - SKETCH_BITS);
    const unsigned rank = __clz((h << SKETCH_BITS) | (1u << (SKETCH_BITS - 1))) + 1;
    if (rank > *(volatile unsigned*)&registers[bucket]) atomicMax(&registers[bucket], rank);
  }
}

extern "C" __global__ void build_optimistic(int* keys, const int* __restrict__ in, unsigned n, unsigned mask,
                                            unsigned shift) {
  FOR_EACH(i, n) {
    const int key = in[i];
    if (key == EMPTY_KEY) {
      keys[mask + 1] = 1;
    } else {
      const unsigned s = hash_slot(key, mask, shift);
      if (keys[s] != key) keys[s] = key;
    }
  }
}

extern "C" __global__ void validate_table(const int* __restrict__ keys, const int* __restrict__ in,
                                          unsigned* status, unsigned n, unsigned mask, unsigned shift) {
  FOR_EACH(i, n) {
    const int key = in[i];
    if (key != EMPTY_KEY && keys[hash_slot(key, mask, shift)] != key) atomicAdd(&status[0], 1u);
  }
}

extern "C" __global__ void prepare_ids(const int* __restrict__ keys, unsigned* __restrict__ flags,
                                       unsigned mask) {
  FOR_EACH(s, mask + 1) flags[s] = keys[s] != EMPTY_KEY;
  if (GLOBAL_ID == 0) flags[mask + 1] = keys[mask + 1] != 0;
}

extern "C" __global__ void assign_groups(const int* __restrict__ keys, const unsigned* __restrict__ ids,
                                         int* __restrict__ group_keys, unsigned mask) {
  FOR_EACH(s, mask + 1) {
    if (keys[s] != EMPTY_KEY) group_keys[ids[s]] = keys[s];
  }
  if (GLOBAL_ID == 0 && keys[mask + 1]) group_keys[ids[mask + 1]] = EMPTY_KEY;
}

extern "C" __global__ void init_aggregates(unsigned* counts, long long* sums, int* mins, int* maxs,
                                           unsigned groups) {
  FOR_EACH(g, groups) {
    counts[g] = 0;
    sums[g] = 0;
    mins[g] = INT_MAX_;
    maxs[g] = EMPTY_KEY;
  }
}

// Min and max are read first: most rows do not move them, and those need no atomic.
__device__ __forceinline__ void agg_row(unsigned* counts, long long* sums, int* mins, int* maxs, unsigned g,
                                        int value) {
  atomicAdd(&counts[g], 1u);
  atomicAdd(reinterpret_cast<unsigned long long*>(&sums[g]), (unsigned long long)(long long)value);
  if (value < *(volatile int*)&mins[g]) atomicMin(&mins[g], value);
  if (value > *(volatile int*)&maxs[g]) atomicMax(&maxs[g], value);
}

#if LOCAL_AGG
#define LOCAL_AGG_DECL                                                \
  __shared__ unsigned l_counts[LOCAL_GROUPS];                         \
  __shared__ long long l_sums[LOCAL_GROUPS];                          \
  __shared__ int l_mins[LOCAL_GROUPS];                                \
  __shared__ int l_maxs[LOCAL_GROUPS];                                \
  for (unsigned g = threadIdx.x; g < LOCAL_GROUPS; g += blockDim.x) { \
    l_counts[g] = 0;                                                  \
    l_sums[g] = 0;                                                    \
    l_mins[g] = INT_MAX_;                                             \
    l_maxs[g] = EMPTY_KEY;                                            \
  }                                                                   \
  __syncthreads();
#define AGGREGATE(g, value)                                \
  do {                                                     \
    if ((g) < LOCAL_GROUPS)                                \
      agg_row(l_counts, l_sums, l_mins, l_maxs, g, value); \
    else                                                   \
      agg_row(counts, sums, mins, maxs, g, value);         \
  } while (0)
#define LOCAL_AGG_MERGE                                                                        \
  __syncthreads();                                                                             \
  for (unsigned g = threadIdx.x; g < LOCAL_GROUPS; g += blockDim.x) {                          \
    if (l_counts[g] == 0) continue;                                                            \
    atomicAdd(&counts[g], l_counts[g]);                                                        \
    atomicAdd(reinterpret_cast<unsigned long long*>(&sums[g]), (unsigned long long)l_sums[g]); \
    atomicMin(&mins[g], l_mins[g]);                                                            \
    atomicMax(&maxs[g], l_maxs[g]);                                                            \
  }
#else
#define LOCAL_AGG_DECL
#define AGGREGATE(g, value) agg_row(counts, sums, mins, maxs, g, value)
#define LOCAL_AGG_MERGE
#endif

extern "C" __global__ void compute_grouping(const int* __restrict__ keys, const unsigned* __restrict__ ids,
                                            const int* __restrict__ in, const int* __restrict__ values,
                                            unsigned* __restrict__ gids, unsigned* counts, long long* sums,
                                            int* mins, int* maxs, unsigned n, unsigned mask, unsigned shift) {
#if FUSED
  LOCAL_AGG_DECL
#endif
  FOR_EACH(i, n) {
    const unsigned g = ids[find_key(keys, in[i], mask, shift)];
    gids[i] = g;
#if FUSED
    AGGREGATE(g, values[i]);
#endif
  }
#if FUSED
  LOCAL_AGG_MERGE
#endif
}

extern "C" __global__ void aggregate(const unsigned* __restrict__ gids, const int* __restrict__ values,
                                     unsigned* counts, long long* sums, int* mins, int* maxs, unsigned n) {
  LOCAL_AGG_DECL
  FOR_EACH(i, n) AGGREGATE(gids[i], values[i]);
  LOCAL_AGG_MERGE
}

extern "C" __global__ void extents(const unsigned* __restrict__ gids, unsigned* __restrict__ out,
                                   unsigned n) {
  FOR_EACH(i, n) out[gids[i]] = i;
}
#endif  // HASH_GROUPBY
