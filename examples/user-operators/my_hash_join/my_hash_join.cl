// A hash join with open addressing, written for hashjoin's contract (docs/USER-OPERATORS.md). Slot s of the
// table is two words: 1 + the build row that took it (0: empty), and that row's key; a build row takes the
// first empty slot from its key's hash on (linear probing), so rows of equal keys take a slot each, and a
// probe row walks from its key's hash to the first empty slot, emitting a pair for every equal key.
#include "common/portable.h"

FUNC uint hash_key(int key) {  // MurmurHash3's finaliser: every bit of the key reaches the low bits
  uint h = (uint)key;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}

KERNEL void build_table(CONSTANT_PTR int* RESTRICT build, GLOBAL uint* RESTRICT table, uint rows, uint mask) {
  const uint r = gid();
  if (r >= rows) return;
  const int key = build[r];
  for (uint s = hash_key(key) & mask;; s = (s + 1) & mask) {
    if (atomic_cas_u32(&table[2 * s], 0u, r + 1) == 0u) {
      table[2 * s + 1] = (uint)key;
      return;
    }
  }
}

// Each work-item looks up `ept` probe rows, gsize() apart so that neighbours read neighbouring rows.
KERNEL void probe_table(CONSTANT_PTR int* RESTRICT probe, CONSTANT_PTR uint* RESTRICT table,
                        GLOBAL uint* RESTRICT left, GLOBAL uint* RESTRICT right, GLOBAL uint* RESTRICT count,
                        uint rows, uint capacity, uint mask) {
  for (uint j = 0; j < ept; ++j) {
    const uint p = j * gsize() + gid();
    if (p >= rows) return;
    const int key = probe[p];
    for (uint s = hash_key(key) & mask;; s = (s + 1) & mask) {
      const uint row = table[2 * s];
      if (row == 0u) break;
      if ((int)table[2 * s + 1] == key) {
        const uint at = atomic_inc_u32(count);
        if (at < capacity) {
          left[at] = row - 1u;
          right[at] = p;
        }
      }
    }
  }
}
