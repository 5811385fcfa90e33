// The device digest of an output (harness/primitives/digest.hpp): the sum, modulo 2^64, over the output's
// tuples of a 64-bit mix of the tuple's words, started from its position where the order counts. A sum, so
// that work-items may take the tuples in any order; mixed, so that errors do not cancel out as they can in a
// linear checksum (a dropped row beside a duplicated one, two attributes swapped).
//   digest_start(position)  the mix a tuple starts from: position + 1 where order counts, else 0
//   digest_add(h, word)     the mix after one more 32-bit word of the tuple
#ifndef VAREX_DIGEST_H
#define VAREX_DIGEST_H

#include "common/portable.h"

// SplitMix64's finaliser: every input bit reaches every output bit.
FUNC ulong digest_mix(ulong x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9UL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBUL;
  x ^= x >> 31;
  return x;
}

FUNC ulong digest_start(ulong position) {
  return digest_mix(position * 0x9E3779B97F4A7C15UL + 0x632BE59BD9B4E019UL);
}

FUNC ulong digest_add(ulong h, uint word) {
  return digest_mix(h ^ (ulong)word);
}

#endif  // VAREX_DIGEST_H
