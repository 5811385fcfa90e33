// A tile's stable ranking by digit, written once for OpenCL and CUDA: where each of a work-item's EPT items
// goes when the tile is ordered by digit, keeping the input order among equal digits, with the tile's count
// and first place of every digit. Two ways, picked by what the device has:
//   - warp ballots (VAREX_WARP_BALLOT, a work-group of whole warps, at least one work-item per digit), as
//     CUB's BlockRadixRankMatch: each warp ranks its own 32 x EPT items, warp-striped (item j of a lane is
//     j x 32 + lane of the warp's share), one digit of 32 lanes at a time: BITS ballots find the lanes with
//     the same digit, the lowest of them adds their number to the warp's counter of that digit; then the
//     warps' counters are added per digit;
//   - everywhere else: the items sorted by digit in local memory, one stable split per digit bit (a
//     work-group prefix sum of the zeros each), then each item's place read back.
// The includer defines WG_SIZE, EPT, BITS and BINS (2^BITS); TILE is WG_SIZE x EPT, at most 2^16.
#ifndef VAREX_RADIX_RANK_H
#define VAREX_RADIX_RANK_H

#include "common/portable.h"
#include "common/scan.h"

#if VAREX_WARP_BALLOT && WG_SIZE % 32 == 0 && WG_SIZE >= BINS
#define RANK_BY_BALLOTS 1
// Local words of rank_tile's `mem`: each warp's counter of each digit.
#define RANK_LOCAL_WORDS ((WG_SIZE / 32) * BINS)
#else
#define RANK_BY_BALLOTS 0
// The items' sort keys (digit << 16 | place in the tile) and each item's place in digit order.
#define RANK_LOCAL_WORDS (2 * WG_SIZE * EPT)
#endif

// The place in the tile of a work-item's item j (the ranking's arrangement: the caller loads item j from it).
FUNC uint rank_item(uint j) {
#if RANK_BY_BALLOTS
  return (lid() / 32u) * 32u * EPT + j * 32u + lid() % 32u;
#else
  return j * WG_SIZE + lid();
#endif
}

// place[j]: where item j (digit[j], taken from place rank_item(j)) goes in the tile ordered by digit; only
// items at places below `valid` count (the others' digit must still be below BINS). count[d] and first[d]:
// the tile's items of digit d and where the first of them goes. `scan` has WG_SIZE + 1 words. Every
// work-item calls it; it ends with a barrier.
FUNC void rank_tile(LOCAL uint* mem, LOCAL uint* scan, LOCAL uint* count, LOCAL uint* first, const uint* digit,
                    uint valid, uint* place) {
#if RANK_BY_BALLOTS
  for (uint w = lid(); w < RANK_LOCAL_WORDS; w += WG_SIZE) mem[w] = 0u;
  LOCAL_BARRIER();
  const uint warp = lid() / 32u;
  const uint below = (1u << (lid() % 32u)) - 1u;  // the lanes before this one
  LOCAL uint* counter = mem + warp * BINS;
  PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
    const uint d = digit[j];
    const uint in = rank_item(j) < valid;
    // BITS ballots: __match_any_sync in their place made the passes take 19% longer on the H100.
    uint peers = warp_ballot(in);
    PRAGMA_UNROLL for (uint b = 0; b < BITS; ++b) {
      const uint bit = (d >> b) & 1u;
      const uint set = warp_ballot(bit);
      peers &= bit ? set : ~set;
    }
    const uint before = in ? counter[d] : 0u;
    place[j] = before + popcount_u32(peers & below);
    warp_sync();  // every lane has read the counter before the lowest peer moves it
    if (in && (peers & below) == 0u) counter[d] = before + popcount_u32(peers);
    warp_sync();
  }
  LOCAL_BARRIER();
  // Per digit, the warps' counters become their exclusive prefixes over the warps; the total is the tile's.
  uint total = 0;
  if (lid() < BINS) {
    for (uint w = 0; w < WG_SIZE / 32u; ++w) {
      const uint c = mem[w * BINS + lid()];
      mem[w * BINS + lid()] = total;
      total += c;
    }
  }
  // The digits' totals scanned by warp shuffles, then over the warps' sums: two barriers (a work-group scan
  // through local memory took sixteen, and the passes 19% longer under aos).
  uint inclusive = total;
  PRAGMA_UNROLL for (uint o = 1; o < 32u; o <<= 1) {
    const uint up = warp_shfl_up(inclusive, o);
    if (lid() % 32u >= o) inclusive += up;
  }
  if (lid() % 32u == 31u) scan[warp] = inclusive;
  LOCAL_BARRIER();
  uint start = inclusive - total;
  for (uint w = 0; w < warp; ++w) start += scan[w];
  LOCAL_BARRIER();
  if (lid() < BINS) {
    count[lid()] = total;
    first[lid()] = start;
  }
  LOCAL_BARRIER();
  PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) place[j] += first[digit[j]] + counter[digit[j]];
  LOCAL_BARRIER();
#else
  LOCAL uint* keys = mem;
  LOCAL uint* placed = mem + WG_SIZE * EPT;
  // Places past `valid` get the largest digit: they stay behind every item that counts.
  PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) {
    const uint p = rank_item(j);
    keys[p] = ((p < valid ? digit[j] : BINS - 1u) << 16) | p;
  }
  for (uint d = lid(); d < BINS; d += WG_SIZE) {
    count[d] = 0u;
    first[d] = 0u;
  }
  LOCAL_BARRIER();
  // Work-item w holds the EPT consecutive keys from w x EPT; one stable split per digit bit.
  uint v[EPT];
  PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) v[k] = keys[lid() * EPT + k];
  for (uint b = 16; b < 16 + BITS; ++b) {
    uint zeros = 0;
    PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) zeros += ((v[k] >> b) & 1u) ^ 1u;
    uint z = wg_scan_exclusive_u32(scan, zeros, WG_SIZE);  // zeros before my first key
    if (lid() == WG_SIZE - 1) scan[WG_SIZE] = z + zeros;
    LOCAL_BARRIER();
    const uint all_zeros = scan[WG_SIZE];
    PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) {
      const uint p = lid() * EPT + k;
      if ((v[k] >> b) & 1u) {
        keys[all_zeros + (p - z)] = v[k];  // after every zero, behind the ones before it
      } else {
        keys[z] = v[k];
        ++z;
      }
    }
    LOCAL_BARRIER();
    PRAGMA_UNROLL for (uint k = 0; k < EPT; ++k) v[k] = keys[lid() * EPT + k];
  }
  // keys[] is in digit order: each item's place, and where each digit's run starts and ends.
  for (uint q = lid(); q < WG_SIZE * EPT; q += WG_SIZE) {
    placed[keys[q] & 0xFFFFu] = q;
    if (q < valid && (q == 0 || (keys[q - 1] >> 16) != (keys[q] >> 16))) first[keys[q] >> 16] = q;
  }
  LOCAL_BARRIER();
  for (uint q = lid(); q < valid; q += WG_SIZE) {
    if (q + 1 == valid || (keys[q + 1] >> 16) != (keys[q] >> 16)) count[keys[q] >> 16] = q + 1 - first[keys[q] >> 16];
  }
  PRAGMA_UNROLL for (uint j = 0; j < EPT; ++j) place[j] = placed[rank_item(j)];
  LOCAL_BARRIER();
#endif
}

#endif  // VAREX_RADIX_RANK_H
