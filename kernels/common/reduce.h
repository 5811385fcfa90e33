// Work-group sums, written once for OpenCL and CUDA:
//   wg_reduce_add_u32(scratch, value), wg_reduce_add_u64(scratch, value)
// Every work-item of the group calls them (any work-group size) and gets the group's sum; `scratch` has
// at least lsize() elements of the value's type. On CUDA the sum is taken with warp shuffles and only
// one element per warp of scratch is used; on OpenCL it is a tree in local memory.
//   global_add_u64(p, value): a 64-bit atomic add to global memory, from two 32-bit atomics where the
// device lacks 64-bit ones.
#ifndef VAREX_REDUCE_H
#define VAREX_REDUCE_H

#include "common/portable.h"

#if VAREX_CUDA
// Lanes of this work-item's warp that exist (the last warp of a group may be partial).
FUNC uint warp_width() {
  const uint base = lid() & ~31u;
  return lsize() - base < 32u ? lsize() - base : 32u;
}
FUNC unsigned warp_mask(uint width) {
  return width == 32u ? 0xffffffffu : (1u << width) - 1u;
}

#define VAREX_WARP_SUM(T, value, width)                           \
  do {                                                            \
    const unsigned mask_ = warp_mask(width);                      \
    const uint lane_ = lid() & 31u;                               \
    for (uint offset_ = 16; offset_ > 0; offset_ >>= 1) {         \
      const T other_ = __shfl_down_sync(mask_, (value), offset_); \
      if (lane_ + offset_ < (width)) (value) += other_;           \
    }                                                             \
  } while (0)

#define VAREX_WG_SUM_BODY(T, scratch, value)       \
  const uint lane = lid() & 31u;                   \
  const uint warp = lid() >> 5;                    \
  const uint warps = (lsize() + 31u) >> 5;         \
  VAREX_WARP_SUM(T, value, warp_width());          \
  if (warps == 1) {                                \
    if (lid() == 0) scratch[0] = value;            \
  } else {                                         \
    if (lane == 0) scratch[warp] = value;          \
    LOCAL_BARRIER();                               \
    if (warp == 0) {                               \
      value = lane < warps ? scratch[lane] : (T)0; \
      VAREX_WARP_SUM(T, value, 32u);               \
    }                                              \
    LOCAL_BARRIER();                               \
    if (lid() == 0) scratch[0] = value;            \
  }                                                \
  LOCAL_BARRIER();                                 \
  const T total = scratch[0];                      \
  LOCAL_BARRIER();                                 \
  return total;

FUNC uint wg_reduce_add_u32(LOCAL uint* scratch, uint value){
    VAREX_WG_SUM_BODY(uint, scratch, value)} FUNC ulong wg_reduce_add_u64(LOCAL ulong* scratch, ulong value) {
  VAREX_WG_SUM_BODY(ulong, scratch, value)
}

#else
// A tree over the next power of two above the group's size; pairs past the group are skipped.
#define VAREX_WG_SUM_BODY(T, scratch, value)                          \
  const uint l = lid();                                               \
  const uint size = lsize();                                          \
  scratch[l] = value;                                                 \
  LOCAL_BARRIER();                                                    \
  uint span = 1;                                                      \
  while (span < size) span <<= 1;                                     \
  for (span >>= 1; span > 0; span >>= 1) {                            \
    if (l < span && l + span < size) scratch[l] += scratch[l + span]; \
    LOCAL_BARRIER();                                                  \
  }                                                                   \
  const T total = scratch[0];                                         \
  LOCAL_BARRIER();                                                    \
  return total;

FUNC uint wg_reduce_add_u32(LOCAL uint* scratch, uint value){
    VAREX_WG_SUM_BODY(uint, scratch, value)} FUNC ulong wg_reduce_add_u64(LOCAL ulong* scratch, ulong value) {
  VAREX_WG_SUM_BODY(ulong, scratch, value)
}
#endif

#if VAREX_HAVE_ATOMIC_U64
#define global_add_u64(p, value) atomic_add_u64((p), (value))
#else
// Little-endian halves: adding the low word returns its old value, from which the carry into the high
// word follows exactly.
FUNC void global_add_u64(GLOBAL ulong* p, ulong value) {
  const uint lo = (uint)value;
  const uint old = atomic_add_u32((volatile GLOBAL uint*)p, lo);
  const uint hi = (uint)(value >> 32) + (old + lo < old ? 1u : 0u);
  if (hi) atomic_add_u32((volatile GLOBAL uint*)p + 1, hi);
}
#endif

#endif  // VAREX_REDUCE_H
