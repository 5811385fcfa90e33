// A single pass over tiles taken in order, each finding the exclusive prefix of a count over the tiles before
// it by a decoupled look-back (Merrill and Garland's single-pass scan, as CUB's single_pass_scan_operators),
// written once for OpenCL and CUDA. Work-groups take tiles in order from an atomic ticket; a tile publishes
// its count (its aggregate) at once, then walks back over its predecessors in windows of LOOKBACK, adding
// their aggregates until it meets one that has published its inclusive prefix, and publishes its own. A
// predecessor has taken its ticket before, so it is running and its aggregate comes.
//
// `state` has 2 x tiles words, zero before the launch: state[t] holds tile t's aggregate + 1 and
// state[tiles + t] its inclusive prefix + 1 (0: not yet), so each word goes from 0 to its value once.
// `ticket` is one word, zero before the launch. The includer defines WG_SIZE; the work-group's local words
// are a window of LOOKBACK and 3 shared words. Prefixes stay below 2^31.
#ifndef VAREX_LOOKBACK_H
#define VAREX_LOOKBACK_H

#include "common/portable.h"

// Predecessors the look-back reads at once (at most the work-group).
#define LOOKBACK (WG_SIZE < 32 ? WG_SIZE : 32)

// The work-group's next tile (every work-item gets it). shared[0] holds it until the next call.
FUNC uint lookback_next_tile(GLOBAL uint* RESTRICT ticket, LOCAL uint* shared) {
  if (lid() == 0) shared[0] = atomic_inc_u32(ticket);
  LOCAL_BARRIER();
  return shared[0];
}

// Tile t's exclusive prefix (every work-item gets it), `total` being the tile's own count (every work-item's
// the same); publishes the tile's aggregate at once and its inclusive prefix at the end. Each window: the
// first LOOKBACK work-items read their predecessor's words into `window` as 0 (not yet) or 2 x value + (1 if
// it is an inclusive prefix) + 1; work-item 0 adds the window up to the first inclusive prefix, or up to the
// first tile not yet published (the next window starts there). shared[1] and [2] hold the prefix found so
// far and the tiles still to be added.
FUNC uint lookback_exclusive(GLOBAL uint* RESTRICT state, uint tiles, uint t, uint total, LOCAL uint* window,
                             LOCAL uint* shared) {
  GLOBAL uint* aggregate = state;
  GLOBAL uint* inclusive = state + tiles;
  if (lid() == 0) {
    if (t > 0) atomic_add_u32(&aggregate[t], total + 1u);  // tile 0's inclusive prefix is its aggregate
    shared[1] = 0;
    shared[2] = t;
  }
  LOCAL_BARRIER();
  for (uint p = t; p > 0; p = shared[2]) {
    if (lid() < LOOKBACK) {
      uint word = 0;
      if (lid() < p) {
        const uint q = p - 1 - lid();
        const uint done = atomic_add_u32(&inclusive[q], 0u);
        const uint partial = done ? 0u : atomic_add_u32(&aggregate[q], 0u);
        word = done ? 2u * (done - 1u) + 2u : partial ? 2u * (partial - 1u) + 1u : 0u;
      }
      window[lid()] = word;
    }
    LOCAL_BARRIER();
    if (lid() == 0) {
      uint prefix = shared[1], left = p;
      for (uint k = 0; k < LOOKBACK && k < p; ++k) {
        const uint word = window[k];
        if (word == 0) break;  // not published yet: the next window starts here
        prefix += (word - 1u) >> 1;
        --left;
        if (((word - 1u) & 1u) == 1u) {  // an inclusive prefix: nothing before it is needed
          left = 0;
          break;
        }
      }
      shared[1] = prefix;
      shared[2] = left;
    }
    LOCAL_BARRIER();
  }
  const uint prefix = shared[1];
  if (lid() == 0) atomic_add_u32(&inclusive[t], prefix + total + 1u);
  LOCAL_BARRIER();  // every work-item has read shared[1] before the next tile's look-back resets it
  return prefix;
}

// The look-back of one counter among several per tile, by one work-item (the radix sort's onesweep pass
// keeps one per digit, as CUB's Onesweep): `state` has `stride` words per tile, zero before the launch, each
// 0 (not yet), LOOKBACK_AGGREGATE | the tile's count or LOOKBACK_INCLUSIVE | its inclusive prefix, so one
// word carries flag and value and goes from 0 to its value in at most two steps. A tile publishes its
// count first (lookback_counter_publish), as early as it knows it: the sooner it is seen, the shorter the
// walks of the tiles after it. lookback_counter_exclusive then walks back over the tile's predecessors one
// by one until it meets an inclusive prefix, publishes the tile's own and returns the exclusive one. The
// walk polls with volatile loads: atomics (adding 0) took a tenth of the pass (333 against 302 us on the
// H100). Prefixes stay below 2^30.
#define LOOKBACK_AGGREGATE (1u << 30)
#define LOOKBACK_INCLUSIVE (2u << 30)
#define LOOKBACK_VALUE (LOOKBACK_AGGREGATE - 1u)

FUNC void lookback_counter_publish(GLOBAL uint* RESTRICT state, uint stride, uint t, uint counter, uint count) {
  atomic_add_u32(&state[t * stride + counter], (t == 0 ? LOOKBACK_INCLUSIVE : LOOKBACK_AGGREGATE) | count);
}

FUNC uint lookback_counter_exclusive(GLOBAL uint* RESTRICT state, uint stride, uint t, uint counter) {
  if (t == 0) return 0u;  // its count is its inclusive prefix
  uint prefix = 0;
  for (uint q = t; q > 0;) {
    const uint word = *(volatile GLOBAL uint*)&state[(q - 1u) * stride + counter];
    if (word == 0u) continue;  // not published yet
    prefix += word & LOOKBACK_VALUE;
    if (word & LOOKBACK_INCLUSIVE) break;
    --q;
  }
  atomic_add_u32(&state[t * stride + counter], (LOOKBACK_INCLUSIVE - LOOKBACK_AGGREGATE) + prefix);
  return prefix;
}

#endif  // VAREX_LOOKBACK_H
