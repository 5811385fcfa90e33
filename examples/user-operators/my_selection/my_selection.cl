// A range selection into a bitmap, written for selection's contract (docs/USER-OPERATORS.md): bit r % 32
// of word r / 32 is set where lo <= column[r] <= hi, or the opposite where negate is 1.
#include "common/portable.h"

FUNC uint passes(int v, int lo, int hi, uint negate) {
  return (uint)((lo <= v && v <= hi) != (negate != 0));
}

KERNEL void select_bitmap(CONSTANT_PTR int* RESTRICT column, GLOBAL uint* RESTRICT bitmap, uint rows, int lo,
                          int hi, uint negate) {
  const uint word_count = (rows + 31) / 32;
#if LOCAL_BITS
  // The work-group's rows, read coalesced: row base + k * lsize() + lid(); their bits gathered in local
  // memory, then written out a word per work-item per step.
  LOCAL_ARRAY uint bits[MAX_BLOCK * words];
  const uint first_word = group_id() * lsize() * words;
  for (uint w = lid(); w < lsize() * words; w += lsize()) bits[w] = 0;
  LOCAL_BARRIER();
  const uint base = first_word * 32;
  for (uint k = 0; k < 32 * words; ++k) {
    const uint r = base + k * lsize() + lid();
    if (r < rows && passes(column[r], lo, hi, negate)) atomic_or_u32(&bits[(r - base) / 32], 1u << (r % 32));
  }
  LOCAL_BARRIER();
  for (uint w = lid(); w < lsize() * words; w += lsize()) {
    if (first_word + w < word_count) bitmap[first_word + w] = bits[w];
  }
#else
  // Each work-item its own words, 32 rows each.
  for (uint w = gid() * words; w < gid() * words + words && w < word_count; ++w) {
    uint word = 0;
    for (uint b = 0; b < 32; ++b) word |= passes(column[w * 32 + b], lo, hi, negate) << b;
    bitmap[w] = word;
  }
#endif
}
