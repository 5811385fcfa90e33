// A hash group-by written for groupby's contract (docs/USER-OPERATORS.md): COUNT, SUM, MIN and MAX of the
// values per distinct key, in two kernels.
// 1. find_groups: each row claims its key's slot in an open-addressing table of keys (linear probing, the key
//    written over EMPTY by compare-and-swap). The row that claims a slot first numbers a new group and sets
//    it up: its key, its first row as the extent, and the aggregates' starting values. The key EMPTY itself
//    has the slot past the table's, claimed through a flag of its own.
// 2. aggregate: each row finds its key's slot again (the table is complete now), takes the slot's group as
//    its group id and adds itself to the group's aggregates with atomics.
// Each work-item handles `ept` rows, gsize() apart.
#include "common/portable.h"

#define EMPTY 0x80000000u
#define INT32_LEAST (-2147483647 - 1)
#define INT32_MOST 2147483647

#if !VAREX_HAVE_ATOMIC_U64
#error "my_group_by adds 64-bit sums with atomics: the device must have 64-bit atomics"
#endif

FUNC uint hash_key(uint key) {  // MurmurHash3's finaliser
  key ^= key >> 16;
  key *= 0x85ebca6bu;
  key ^= key >> 13;
  key *= 0xc2b2ae35u;
  return key ^ (key >> 16);
}

KERNEL void find_groups(CONSTANT_PTR int* RESTRICT keys, GLOBAL uint* RESTRICT table,
                        GLOBAL uint* RESTRICT slot_group, GLOBAL uint* RESTRICT empty_key_seen,
                        GLOBAL int* RESTRICT group_keys, GLOBAL uint* RESTRICT counts,
                        GLOBAL ulong* RESTRICT sums, GLOBAL int* RESTRICT mins, GLOBAL int* RESTRICT maxs,
                        GLOBAL uint* RESTRICT extents, GLOBAL uint* RESTRICT groups, uint rows, uint capacity,
                        uint mask) {
  for (uint j = 0; j < ept; ++j) {
    const uint r = j * gsize() + gid();
    if (r >= rows) return;
    const uint key = (uint)keys[r];
    uint slot = mask + 1;
    int first = 0;
    if (key == EMPTY) {
      first = atomic_cas_u32(empty_key_seen, 0u, 1u) == 0u;
    } else {
      for (slot = hash_key(key) & mask;; slot = (slot + 1) & mask) {
        const uint seen = atomic_cas_u32(&table[slot], EMPTY, key);
        if (seen == EMPTY || seen == key) {
          first = seen == EMPTY;
          break;
        }
      }
    }
    if (!first) continue;
    const uint g = atomic_inc_u32(groups);
    slot_group[slot] = g;
    if (g >= capacity) continue;  // more groups than the contract's arrays hold: counted, not written
    group_keys[g] = (int)key;
    extents[g] = r;
    counts[g] = 0u;
    sums[g] = 0;
    mins[g] = INT32_MOST;
    maxs[g] = INT32_LEAST;
  }
}

KERNEL void aggregate(CONSTANT_PTR int* RESTRICT keys, CONSTANT_PTR int* RESTRICT values,
                      CONSTANT_PTR uint* RESTRICT table, CONSTANT_PTR uint* RESTRICT slot_group,
                      GLOBAL uint* RESTRICT group_ids, GLOBAL uint* RESTRICT counts,
                      GLOBAL ulong* RESTRICT sums, GLOBAL int* RESTRICT mins, GLOBAL int* RESTRICT maxs,
                      uint rows, uint capacity, uint mask) {
  for (uint j = 0; j < ept; ++j) {
    const uint r = j * gsize() + gid();
    if (r >= rows) return;
    const uint key = (uint)keys[r];
    uint slot = mask + 1;
    if (key != EMPTY) {
      for (slot = hash_key(key) & mask; table[slot] != key; slot = (slot + 1) & mask) {
      }
    }
    const uint g = slot_group[slot];
    group_ids[r] = g;
    if (g >= capacity) continue;
    const int value = values[r];
    atomic_inc_u32(&counts[g]);
    atomic_add_u64(&sums[g], (ulong)(slong)value);
    atomic_min_i32(&mins[g], value);
    atomic_max_i32(&maxs[g], value);
  }
}
