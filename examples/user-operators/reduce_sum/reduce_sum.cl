// The sum of an int32 column modulo 2^32. Work-groups stride over tiles of lsize() * ept rows; each
// work-item adds its rows, then either the work-group reduces in local memory and adds its sum with one
// atomic (TREE), or every work-item adds its own partial sum with an atomic.
#include "common/portable.h"

KERNEL void reduce_sum(CONSTANT_PTR int* RESTRICT values, GLOBAL uint* RESTRICT sum, uint n) {
  const uint tile = lsize() * ept;
  uint own = 0;
  for (uint base = group_id() * tile; base < n; base += num_groups() * tile) {
    for (uint j = 0; j < ept; ++j) {
      const uint i = base + j * lsize() + lid();
      if (i < n) own += (uint)values[i];
    }
  }
#if TREE
  LOCAL_ARRAY uint partial[MAX_BLOCK];
  partial[lid()] = own;
  LOCAL_BARRIER();
  for (uint stride = lsize() / 2; stride > 0; stride /= 2) {
    if (lid() < stride) partial[lid()] += partial[lid() + stride];
    LOCAL_BARRIER();
  }
  if (lid() == 0) atomic_add_u32(sum, partial[0]);
#else
  if (own) atomic_add_u32(sum, own);
#endif
}
