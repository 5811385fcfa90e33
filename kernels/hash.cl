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
//   APPEND_GROUP  1: one atomic per work-group tile appends the single pass's pairs; 0: one per work-item
//   LOCAL_AGG     1: aggregate group ids below LOCAL_GROUPS per work-group in local memory first
//   LOCAL_GROUPS  groups a work-group aggregates locally (group-by)
//   FUSED         1: compute_grouping also aggregates; 0: a separate aggregate kernel does (group-by)
//   VOTE          1: lanes of a CUDA warp with the same group combine before local memory (group-by)
//   REGISTER_AGG  1: each work-item aggregates the first REGISTER_GROUPS groups in registers (group-by)
//   SCAN_LOCAL    work-group size of the prefix-sum kernels; SCAN_ITEMS elements per work-item
//   SKETCH_BITS   log2 of the HyperLogLog registers of the group-by's table sizing
//   MAX_PARTS     the most radix partitions (local counters per work-group) of the partitioned variants
//   JOIN_SLOTS    entries of the partitioned join's local-memory table (a power of two)
//   AGG_TILE      rows per tile of the partitioned group-by's aggregation
//   PART_BUFFERED 1: the partitioned variants partition in passes of BITS bits through local memory
//                 (radix_scatter_tiles, in work-groups of WG_SIZE with EPT rows each); 0: in one pass
//                 (radix_scatter)
//
// Beside the source's kernels, the family holds varex's own faster variants: the single-pass join for
// unique build keys (build_unique, probe_unique), the radix-partitioned join (radix_count, radix_scatter or
// radix_scatter_tiles and partition_starts, join_partitions), warp votes or registers before local
// aggregation and the partitioned aggregation of many groups (aggregate_tiles).
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
#ifndef MAX_PARTS
#define MAX_PARTS 4096
#endif
#ifndef JOIN_SLOTS
#define JOIN_SLOTS 4096
#endif
#ifndef VOTE
#define VOTE 0
#endif
#ifndef APPEND_GROUP
#define APPEND_GROUP 1
#endif
#ifndef REGISTER_AGG
#define REGISTER_AGG 0
#endif
#ifndef REGISTER_GROUPS
#define REGISTER_GROUPS 16
#endif
#ifndef AGG_TILE
#define AGG_TILE 65536
#endif
#ifndef PART_BUFFERED
#define PART_BUFFERED 0
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

// murmur3's finaliser: a bijection of 32-bit words whose every output bit depends on every input bit.
FUNC uint murmur_mix(uint h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

FUNC uint hash_slot(int key, uint mask, uint shift) {
  const uint k = (uint)key;
#if HASH == 1
  return k & mask;
#elif HASH == 2
  return (k * 0x9E3779B1u) >> shift;
#else
  return murmur_mix(k) & mask;
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
// NOT_FOUND when every slot was tried (a table sized from an estimate can be too small). *inserted says
// whether this call placed the key (other rows of the key find it there).
//
// Slots are read plainly, not through volatile (which on CUDA sends every read to L2): a slot changes
// once, from empty to its key, so a stale read can only say "empty", and the compare-and-swap that follows
// returns the truth.
FUNC uint insert_key(GLOBAL int* keys, int key, uint mask, uint shift, bool* inserted) {
  *inserted = false;
  if (key == EMPTY_KEY) {
    *inserted = KEY(mask + 1) == 0 && atomic_cas_i32(&KEY(mask + 1), 0, 1) == 0;
    return mask + 1;
  }
  uint s = hash_slot(key, mask, shift);
  const uint step = probe_step(key, shift);
  for (uint probes = 0; probes <= mask; ++probes) {
    int current = KEY(s);
    if (current == EMPTY_KEY) {
      current = atomic_cas_i32(&KEY(s), EMPTY_KEY, key);
      if (current == EMPTY_KEY) {
        *inserted = true;
        return s;
      }
    }
    if (current == key) return s;
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

// status[1] counts keys that found no free slot. With `slot_rows` (the group-by's extents at build time),
// the row that placed a key is recorded for its slot: one row of every key, at no extra pass.
KERNEL void build_pessimistic(GLOBAL int* keys, GLOBAL const int* RESTRICT in, GLOBAL uint* status,
                              GLOBAL uint* RESTRICT slot_rows, const uint record_rows, const uint n,
                              const uint mask, const uint shift) {
  FOR_EACH(i, n) {
    bool inserted;
    const uint s = insert_key(keys, in[i], mask, shift, &inserted);
    if (s == NOT_FOUND) atomic_inc_u32(&status[1]);
    if (inserted && record_rows) slot_rows[s] = i;
  }
}

// ---- radix partitioning (the partitioned join and the partitioned group-by) ----
// Work-group w of the W launched takes chunk w of the rows, [w * C, (w + 1) * C) with C = ceil(n / W). A
// row's partition is (key * multiply) >> shift, below `parts` (at most MAX_PARTS). radix_count stores the
// rows of chunk w in partition p at counts[p * W + w]; scanned, that is where chunk w writes partition p,
// and partition p spans [offsets[p * W], offsets[(p + 1) * W]). Within a partition the rows' order is free.

FUNC uint partition_of(int key, uint multiply, uint shift) {
  return ((uint)key * multiply) >> shift;
}

FUNC uint chunk_begin(uint n, uint w) {
  const uint per = (n + num_groups() - 1) / num_groups();
  return min(n, w * per);
}

// `low` and `mask` pick the digit of a partitioning pass (partition >> low & mask): all of the partition in
// one pass (0, ~0), BITS of it in one of several (radix_scatter_tiles).
KERNEL void radix_count(GLOBAL const int* RESTRICT keys, GLOBAL uint* RESTRICT counts, const uint n,
                        const uint multiply, const uint shift, const uint parts, const uint low,
                        const uint mask) {
  LOCAL_ARRAY uint hist[MAX_PARTS];
  for (uint p = lid(); p < parts; p += lsize()) hist[p] = 0u;
  LOCAL_BARRIER();
  const uint end = chunk_begin(n, group_id() + 1);
  for (uint i = chunk_begin(n, group_id()) + lid(); i < end; i += lsize())
    atomic_inc_u32(&hist[(partition_of(keys[i], multiply, shift) >> low) & mask]);
  LOCAL_BARRIER();
  for (uint p = lid(); p < parts; p += lsize()) counts[p * num_groups() + group_id()] = hist[p];
}

// Each row and its payload to its partition: the payload is payload[i], or the row's index i with
// `row_payload`.
KERNEL void radix_scatter(GLOBAL const int* RESTRICT keys, GLOBAL const int* RESTRICT payload,
                          GLOBAL const uint* RESTRICT offsets, GLOBAL int* RESTRICT out_keys,
                          GLOBAL int* RESTRICT out_payload, const uint n, const uint multiply,
                          const uint shift, const uint parts, const uint row_payload) {
  LOCAL_ARRAY uint cursor[MAX_PARTS];
  for (uint p = lid(); p < parts; p += lsize()) cursor[p] = offsets[p * num_groups() + group_id()];
  LOCAL_BARRIER();
  const uint end = chunk_begin(n, group_id() + 1);
  for (uint i = chunk_begin(n, group_id()) + lid(); i < end; i += lsize()) {
    const int key = keys[i];
    const uint at = atomic_inc_u32(&cursor[partition_of(key, multiply, shift)]);
    out_keys[at] = key;
    out_payload[at] = row_payload ? (int)i : payload[i];
  }
}

#if PART_BUFFERED
// ---- buffered radix partitioning in passes ----
// After Sioulas et al. (ICDE 2019) and Stehle and Jacobsen (SIGMOD 2017). radix_scatter writes every row to
// its own place: to many partitions at once, each write is a sector of its own (34 ms for 2^28 rows into 8192
// partitions on the H200). Here the partition's bits are taken BITS at a time, lowest first, one pass each,
// and a work-group walks its chunk in tiles of TILE rows: the tile ranked by its digit (common/radix_rank.h),
// its keys and payloads staged in local memory in digit order, then written out run by run, consecutive
// work-items to consecutive places. Every pass is stable (tiles in chunk order, ranks stable within a tile),
// so after the last one the rows are ordered by partition. The host defines WG_SIZE (the partitioning
// work-group), EPT, BITS and BINS (2^BITS).
#define TILE (WG_SIZE * EPT)
#include "common/radix_rank.h"
#define STAGE_WORDS (RANK_LOCAL_WORDS > 2 * TILE ? RANK_LOCAL_WORDS : 2 * TILE)

FUNC uint pass_digit(int key, uint multiply, uint shift, uint low) {
  return (partition_of(key, multiply, shift) >> low) & (BINS - 1u);
}

// The rows of chunk w (radix_count's chunks) with digit d go from offsets[d * W + w] on.
KERNEL void radix_scatter_tiles(GLOBAL const int* RESTRICT keys, GLOBAL const int* RESTRICT payload,
                                GLOBAL const uint* RESTRICT offsets, GLOBAL int* RESTRICT out_keys,
                                GLOBAL int* RESTRICT out_payload, const uint n, const uint multiply,
                                const uint shift, const uint low, const uint row_payload) {
  // The ranking's words, then (the ranking done with them) the staged keys and payloads.
  LOCAL_ARRAY uint mem[STAGE_WORDS];
  LOCAL_ARRAY uint scan[WG_SIZE + 1];
  LOCAL_ARRAY uint count[BINS];
  LOCAL_ARRAY uint first[BINS];
  LOCAL_ARRAY uint cursor[BINS];
  LOCAL int* stage_keys = (LOCAL int*)mem;
  LOCAL int* stage_payload = (LOCAL int*)(mem + TILE);
  for (uint d = lid(); d < BINS; d += WG_SIZE) cursor[d] = offsets[d * num_groups() + group_id()];
  const uint end = chunk_begin(n, group_id() + 1);
  for (uint base = chunk_begin(n, group_id()); base < end; base += TILE) {
    const uint valid = min(end - base, (uint)TILE);
    int key[EPT];
    int pay[EPT];
    uint digit[EPT];
    uint place[EPT];
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      const uint p = rank_item(j);
      key[j] = p < valid ? keys[base + p] : 0;
      pay[j] = p < valid ? (row_payload ? (int)(base + p) : payload[base + p]) : 0;
      digit[j] = p < valid ? pass_digit(key[j], multiply, shift, low) : 0u;
    }
    rank_tile(mem, scan, count, first, digit, valid, place);  // ends with a barrier: cursor[] is set
    PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
      if (rank_item(j) < valid) {
        stage_keys[place[j]] = key[j];
        stage_payload[place[j]] = pay[j];
      }
    }
    LOCAL_BARRIER();
    for (uint q = lid(); q < valid; q += WG_SIZE) {
      const int k = stage_keys[q];
      const uint d = pass_digit(k, multiply, shift, low);
      const uint at = cursor[d] + (q - first[d]);
      out_keys[at] = k;
      out_payload[at] = stage_payload[q];
    }
    LOCAL_BARRIER();
    for (uint d = lid(); d < BINS; d += WG_SIZE) cursor[d] += count[d];
    // The next tile's ranking clears mem and ends with a barrier before cursor[] is read again.
  }
}

// After the last pass the rows are ordered by partition: starts[q] becomes the first row of a partition at or
// above q, for q in [0, parts], from the boundaries between neighbouring rows (every q written once; an empty
// partition starts where the next one does). No local counters: as many partitions as the passes make.
KERNEL void partition_starts(GLOBAL const int* RESTRICT keys, GLOBAL uint* RESTRICT starts, const uint n,
                             const uint multiply, const uint shift, const uint parts) {
  FOR_EACH(i, n + 1) {
    const uint lo = i == 0 ? 0u : partition_of(keys[i - 1], multiply, shift) + 1u;
    const uint hi = i == n ? parts : partition_of(keys[i], multiply, shift);
    for (uint q = lo; q <= hi; ++q) starts[q] = i;
  }
}
#endif  // PART_BUFFERED

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

// ---- the single-pass join for unique build keys ----
// The packed table: slot s is {key, build row} in one 8-byte entry (one memory sector per probe); the
// reserved slot mask + 1 holds {present, row} of the key INT_MIN.
#define ROW(s) keys[2 * (s) + 1]

// Places every build row's {key, row}. A key already present is a duplicate: status[0] is set and the
// host falls back to the source's sequence (unique keys cannot be assumed). status[1] counts rows that
// found no free slot.
KERNEL void build_unique(GLOBAL int* keys, GLOBAL const int* RESTRICT in, GLOBAL uint* status, const uint n,
                         const uint mask, const uint shift) {
  FOR_EACH(i, n) {
    bool inserted;
    const uint s = insert_key(keys, in[i], mask, shift, &inserted);
    if (s == NOT_FOUND) {
      atomic_inc_u32(&status[1]);
    } else if (inserted) {
      ROW(s) = (int)i;
    } else {
      status[0] = 1u;  // every writer stores the same word
    }
  }
}

// The build row of `key` in the packed table, or NOT_FOUND; `entry` is its first slot, already loaded
// (the loads of a batch of probe rows are issued before any is resolved).
FUNC uint resolve_row(GLOBAL const int* RESTRICT keys, int key, uint s, int2 entry, uint mask, uint shift) {
  if (key == EMPTY_KEY) return KEY(mask + 1) ? (uint)ROW(mask + 1) : NOT_FOUND;
  const uint step = probe_step(key, shift);
  for (uint probes = 0; probes <= mask; ++probes) {
    if (entry.x == key) return (uint)entry.y;
    if (entry.x == EMPTY_KEY) return NOT_FOUND;
    s = (s + step) & mask;
    entry = ((GLOBAL const int2*)keys)[s];
  }
  return NOT_FOUND;
}

// One pass over the probe rows: each work-group takes tiles of BATCH rows per work-item, resolves them,
// and appends its pairs through one atomic on counter[0] per tile (wg_reserve; APPEND_GROUP) or per
// work-item and tile (no barrier: a CPU's atomics are cheap, and PoCL 5.0's kernel compiler aborts on the
// work-group scan inside this loop). Pairs past `capacity` are counted, not written.
KERNEL void probe_unique(GLOBAL const int* RESTRICT keys, GLOBAL const int* RESTRICT probe,
                         GLOBAL uint* RESTRICT out_build, GLOBAL uint* RESTRICT out_probe,
                         GLOBAL uint* counter, const uint n, const uint mask, const uint shift,
                         const uint capacity) {
#if APPEND_GROUP
  LOCAL_ARRAY uint scratch[MAX_LOCAL];
  LOCAL_ARRAY uint base[1];
#endif
  const uint tile = lsize() * BATCH;
  for (uint first = group_id() * tile; first < n; first += num_groups() * tile) {
    int key[BATCH];
    uint slot[BATCH];
    int2 entry[BATCH];
    PRAGMA_UNROLL for (uint b = 0; b < BATCH; ++b) {
      const uint j = first + b * lsize() + lid();
      key[b] = j < n ? probe[j] : 0;
      slot[b] = hash_slot(key[b], mask, shift);
      entry[b] = ((GLOBAL const int2*)keys)[slot[b]];
    }
    uint row[BATCH];
    uint count = 0;
    PRAGMA_UNROLL for (uint b = 0; b < BATCH; ++b) {
      const uint j = first + b * lsize() + lid();
      row[b] = j < n ? resolve_row(keys, key[b], slot[b], entry[b], mask, shift) : NOT_FOUND;
      count += row[b] != NOT_FOUND;
    }
#if APPEND_GROUP
    uint at = wg_reserve(scratch, base, count, counter);
#else
    uint at = count ? atomic_add_u32(counter, count) : 0u;
#endif
    PRAGMA_UNROLL for (uint b = 0; b < BATCH; ++b) {
      if (row[b] == NOT_FOUND) continue;
      if (at < capacity) {
        out_build[at] = row[b];
        out_probe[at] = first + b * lsize() + lid();
      }
      ++at;
    }
  }
}

// ---- the radix-partitioned join (after Sioulas et al., ICDE 2019) ----
// Both sides are partitioned by the same radix of their keys (radix_count, radix_scatter: key and row
// id). A work-group then joins one partition at a time: it loads up to JOIN_CHUNK build rows into a
// local-memory table of JOIN_SLOTS entries, streams the partition's probe rows past it, and repeats for
// the next chunk of a partition too large for one (duplicates and skew stay correct, only slower).
#define EMPTY_ROW 0xffffffffu
#define JOIN_CHUNK (JOIN_SLOTS / 4 * 3)

FUNC uint local_slot(int key) {
  return murmur_mix((uint)key) & (JOIN_SLOTS - 1);
}

// Matches of `key` in the local table; with `emit`, they are written as pairs from `at` on.
FUNC uint walk_local(LOCAL const int* t_key, LOCAL const uint* t_row, int key, bool emit, uint at,
                     uint probe_row, GLOBAL uint* out_build, GLOBAL uint* out_probe, uint capacity) {
  uint matches = 0;
  for (uint s = local_slot(key); t_row[s] != EMPTY_ROW; s = (s + 1) & (JOIN_SLOTS - 1)) {
    if (t_key[s] != key) continue;
    if (emit && at + matches < capacity) {
      out_build[at + matches] = t_row[s];
      out_probe[at + matches] = probe_row;
    }
    ++matches;
  }
  return matches;
}

KERNEL void join_partitions(GLOBAL const int* RESTRICT build_keys, GLOBAL const int* RESTRICT build_rows,
                            GLOBAL const uint* RESTRICT build_offsets, const uint build_stride,
                            GLOBAL const int* RESTRICT probe_keys, GLOBAL const int* RESTRICT probe_rows,
                            GLOBAL const uint* RESTRICT probe_offsets, const uint probe_stride,
                            GLOBAL uint* RESTRICT out_build, GLOBAL uint* RESTRICT out_probe,
                            GLOBAL uint* counter, const uint capacity, const uint parts) {
  LOCAL_ARRAY int t_key[JOIN_SLOTS];
  LOCAL_ARRAY uint t_row[JOIN_SLOTS];
  LOCAL_ARRAY uint scratch[MAX_LOCAL];
  LOCAL_ARRAY uint base[1];
  for (uint p = group_id(); p < parts; p += num_groups()) {
    const uint build_end = build_offsets[(p + 1) * build_stride];
    const uint probe_begin = probe_offsets[p * probe_stride],
               probe_end = probe_offsets[(p + 1) * probe_stride];
    // A partition without probe rows loads no table. (No `continue` here: PoCL's barrier regions want the
    // loops around barriers plain.)
    const uint build_begin = probe_begin == probe_end ? build_end : build_offsets[p * build_stride];
    for (uint c = build_begin; c < build_end; c += JOIN_CHUNK) {
      const uint chunk_end = min(c + JOIN_CHUNK, build_end);
      for (uint s = lid(); s < JOIN_SLOTS; s += lsize()) t_row[s] = EMPTY_ROW;
      LOCAL_BARRIER();
      for (uint i = c + lid(); i < chunk_end; i += lsize()) {
        const int key = build_keys[i];
        uint s = local_slot(key);
        while (atomic_cas_u32(&t_row[s], EMPTY_ROW, (uint)build_rows[i]) != EMPTY_ROW)
          s = (s + 1) & (JOIN_SLOTS - 1);
        t_key[s] = key;
      }
      LOCAL_BARRIER();
      for (uint first = probe_begin; first < probe_end; first += lsize() * BATCH) {
        uint count = 0;
        PRAGMA_UNROLL for (uint b = 0; b < BATCH; ++b) {
          const uint j = first + b * lsize() + lid();
          if (j < probe_end)
            count += walk_local(t_key, t_row, probe_keys[j], false, 0, 0, out_build, out_probe, 0);
        }
        uint at = wg_reserve(scratch, base, count, counter);
        PRAGMA_UNROLL for (uint b = 0; b < BATCH; ++b) {
          const uint j = first + b * lsize() + lid();
          if (j < probe_end)
            at += walk_local(t_key, t_row, probe_keys[j], true, at, (uint)probe_rows[j], out_build, out_probe,
                             capacity);
        }
      }
      LOCAL_BARRIER();
    }
  }
}

#endif  // HASH_JOIN

#if HASH_GROUPBY
// ---- group-by ----

// HyperLogLog over the keys (2^SKETCH_BITS registers of the largest rank seen), from which the host sizes
// the group-by's table by the number of distinct keys instead of the number of rows. murmur3's finaliser
// is a bijection, so distinct keys never share a hash.
// A register is read plainly before its atomic (a volatile read on CUDA went to L2 for every row, 6.7 ms
// at 2^28 rows against 0.54 ms through OpenCL): a stale value only costs an atomic_max that changes nothing.
KERNEL void sketch(GLOBAL const int* RESTRICT in, GLOBAL uint* registers, const uint n) {
  FOR_EACH(i, n) {
    const uint h = murmur_mix((uint)in[i]);
    const uint bucket = h >> (32 - SKETCH_BITS);
    const uint rank = clz_u32((h << SKETCH_BITS) | (1u << (SKETCH_BITS - 1))) + 1;
    if (rank > registers[bucket]) atomic_max_u32(&registers[bucket], rank);
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

// The key of every group, from its slot; with `slot_rows` (extents recorded by the build) also its
// extent, which then needs no pass over the rows.
KERNEL void assign_groups(GLOBAL const int* RESTRICT keys, GLOBAL const uint* RESTRICT ids,
                          GLOBAL int* RESTRICT group_keys, GLOBAL const uint* RESTRICT slot_rows,
                          GLOBAL uint* RESTRICT extents, const uint with_extents, const uint mask) {
  FOR_EACH(s, mask + 1) {
    if (keys[s] == EMPTY_KEY) continue;
    group_keys[ids[s]] = keys[s];
    if (with_extents) extents[ids[s]] = slot_rows[s];
  }
  if (gid() == 0 && keys[mask + 1]) {
    group_keys[ids[mask + 1]] = EMPTY_KEY;
    if (with_extents) extents[ids[mask + 1]] = slot_rows[mask + 1];
  }
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

// `count` rows of group g with that sum, min and max. Min and max are read first: most rows do not move
// them, and those need no atomic.
#define AGG_ADD(space, counts, sums, mins, maxs, g, count, sum, lo, hi)              \
  do {                                                                               \
    atomic_add_u32((counts) + (g), (count));                                         \
    SUM_ADD(space, sums, g, sum);                                                    \
    if ((lo) < ((volatile space int*)(mins))[g]) atomic_min_i32((mins) + (g), (lo)); \
    if ((hi) > ((volatile space int*)(maxs))[g]) atomic_max_i32((maxs) + (g), (hi)); \
  } while (0)
#define AGG_ROW(space, counts, sums, mins, maxs, g, value) \
  AGG_ADD(space, counts, sums, mins, maxs, g, 1u, value, value, value)

// A work-group's aggregates of LOCAL_GROUPS groups in local memory: declared, cleared (ends with a
// barrier) and merged into the global ones from group `first` on (starts with a barrier; one atomic per
// touched group and aggregate).
#define LOCAL_AGG_ARRAYS                   \
  LOCAL_ARRAY uint l_counts[LOCAL_GROUPS]; \
  LOCAL_ARRAY slong l_sums[LOCAL_GROUPS];  \
  LOCAL_ARRAY int l_mins[LOCAL_GROUPS];    \
  LOCAL_ARRAY int l_maxs[LOCAL_GROUPS];
#define LOCAL_AGG_CLEAR                                  \
  for (uint g = lid(); g < LOCAL_GROUPS; g += lsize()) { \
    l_counts[g] = 0;                                     \
    l_sums[g] = 0;                                       \
    l_mins[g] = KEY_MAX;                                 \
    l_maxs[g] = EMPTY_KEY;                               \
  }                                                      \
  LOCAL_BARRIER();
#define LOCAL_AGG_MERGE_FROM(first, groups)                                        \
  LOCAL_BARRIER();                                                                 \
  for (uint g = lid(); g < LOCAL_GROUPS && (first) + g < (groups); g += lsize()) { \
    if (l_counts[g] == 0) continue;                                                \
    atomic_add_u32(counts + (first) + g, l_counts[g]);                             \
    SUM_ADD(GLOBAL, sums, (first) + g, l_sums[g]);                                 \
    atomic_min_i32(mins + (first) + g, l_mins[g]);                                 \
    atomic_max_i32(maxs + (first) + g, l_maxs[g]);                                 \
  }

#if VOTE && VAREX_CUDA && __CUDA_ARCH__ >= 800
// The lanes of a warp with the same group combine first (__match_any_sync, then one-instruction warp
// reductions over those peers): the lowest of them updates the local aggregates once for all. The sum is
// reduced in two halves of the value so that no 32-bit partial sum can overflow.
#define LOCAL_ROW(g, value)                                                                   \
  do {                                                                                        \
    const uint peers = __match_any_sync(__activemask(), (g));                                 \
    const int lo = __reduce_min_sync(peers, (value)), hi = __reduce_max_sync(peers, (value)); \
    const slong sum = (slong)__reduce_add_sync(peers, (value) >> 16) * 65536 +                \
                      (slong)__reduce_add_sync(peers, (uint)(value)&0xFFFFu);                 \
    if ((threadIdx.x & 31) == __ffs(peers) - 1)                                               \
      AGG_ADD(LOCAL, l_counts, l_sums, l_mins, l_maxs, g, (uint)__popc(peers), sum, lo, hi);  \
  } while (0)
#else
#define LOCAL_ROW(g, value) AGG_ROW(LOCAL, l_counts, l_sums, l_mins, l_maxs, g, value)
#endif

#if REGISTER_AGG
// Group ids below REGISTER_GROUPS are aggregated by each work-item in registers first: the unrolled
// comparisons keep every accumulator at a fixed index, so none leaves the register file. The totals go
// into local memory once, at the end.
#define REGISTER_DECL                                        \
  uint r_counts[REGISTER_GROUPS];                            \
  slong r_sums[REGISTER_GROUPS];                             \
  int r_mins[REGISTER_GROUPS], r_maxs[REGISTER_GROUPS];      \
  PRAGMA_UNROLL for (uint k = 0; k < REGISTER_GROUPS; ++k) { \
    r_counts[k] = 0;                                         \
    r_sums[k] = 0;                                           \
    r_mins[k] = KEY_MAX;                                     \
    r_maxs[k] = EMPTY_KEY;                                   \
  }
#define IN_REGISTERS(g) ((g) < REGISTER_GROUPS)
#define REGISTER_ROW(g, value)                                       \
  do {                                                               \
    PRAGMA_UNROLL for (uint k = 0; k < REGISTER_GROUPS; ++k) {       \
      const bool mine = (g) == k;                                    \
      r_counts[k] += mine ? 1u : 0u;                                 \
      r_sums[k] += mine ? (slong)(value) : 0;                        \
      r_mins[k] = mine && (value) < r_mins[k] ? (value) : r_mins[k]; \
      r_maxs[k] = mine && (value) > r_maxs[k] ? (value) : r_maxs[k]; \
    }                                                                \
  } while (0)
#define REGISTER_FLUSH                                                                                   \
  PRAGMA_UNROLL for (uint k = 0; k < REGISTER_GROUPS; ++k) {                                             \
    if (r_counts[k])                                                                                     \
      AGG_ADD(LOCAL, l_counts, l_sums, l_mins, l_maxs, k, r_counts[k], r_sums[k], r_mins[k], r_maxs[k]); \
  }
#else
#define REGISTER_DECL
#define IN_REGISTERS(g) false
#define REGISTER_ROW(g, value) \
  do {                         \
  } while (0)
#define REGISTER_FLUSH
#endif

#if LOCAL_AGG
// Group ids below LOCAL_GROUPS are aggregated per work-group in local memory (the first REGISTER_GROUPS
// in registers before that), the rest directly.
#define LOCAL_AGG_DECL LOCAL_AGG_ARRAYS LOCAL_AGG_CLEAR REGISTER_DECL
#define AGGREGATE(g, value)                                \
  do {                                                     \
    if (IN_REGISTERS(g))                                   \
      REGISTER_ROW(g, value);                              \
    else if ((g) < LOCAL_GROUPS)                           \
      LOCAL_ROW(g, value);                                 \
    else                                                   \
      AGG_ROW(GLOBAL, counts, sums, mins, maxs, g, value); \
  } while (0)
#define LOCAL_AGG_MERGE REGISTER_FLUSH LOCAL_AGG_MERGE_FROM(0u, LOCAL_GROUPS)
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

// The partitioned aggregation of many groups: the rows' (group id, value) pairs arrive partitioned by
// group id >> shift (radix_scatter), so a tile of AGG_TILE consecutive pairs holds few groups. A work-group
// aggregates each tile's groups from the tile's first partition's first id on in local memory (the rest,
// past a partition boundary or LOCAL_GROUPS, directly) and merges them once per tile.
KERNEL void aggregate_tiles(GLOBAL const uint* RESTRICT gids, GLOBAL const int* RESTRICT values,
                            GLOBAL uint* counts, GLOBAL slong* sums, GLOBAL int* mins, GLOBAL int* maxs,
                            const uint n, const uint shift, const uint groups) {
  LOCAL_AGG_ARRAYS
  for (uint begin = group_id() * AGG_TILE; begin < n; begin += num_groups() * AGG_TILE) {
    const uint end = min(n, begin + AGG_TILE);
    const uint first = (gids[begin] >> shift) << shift;
    LOCAL_AGG_CLEAR
    for (uint i = begin + lid(); i < end; i += lsize()) {
      const uint g = gids[i] - first;  // a group before `first` wraps round and goes direct
      const int value = values[i];
      if (g < LOCAL_GROUPS)
        LOCAL_ROW(g, value);
      else
        AGG_ROW(GLOBAL, counts, sums, mins, maxs, g + first, value);
    }
    LOCAL_AGG_MERGE_FROM(first, groups)
    LOCAL_BARRIER();
  }
}

// generateExtentsTable: one representative row per group. Rows past the input (host padding) carry the
// id of a spare slot.
KERNEL void extents(GLOBAL const uint* RESTRICT gids, GLOBAL uint* RESTRICT out, const uint n) {
  FOR_EACH(i, n) out[gids[i]] = i;
}
#endif  // HASH_GROUPBY
