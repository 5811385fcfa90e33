// Red Fox REDUCE (document 002, sec. 3.2.8, alg. 9): the sum of one attribute of a relation, into 64 bits
// (modulo 2^64). Every work-item sums its tuples (tile + j * WG_SIZE + lid(), tiles of WG_SIZE x EPT tuples
// strided over by the work-groups), then the work-group reduces the work-items' sums and work-item 0
// writes the group's partial sum. The partial sums are finished on the host, as in the source, or by
// ra_reduce_finish (one work-group) on the device.
//   WG_SIZE            work-group size (sizes the local array)
//   EPT              tuples per work-item and tile
//   LAYOUT_SOA       0: packed tuples; 1: one array per attribute
//   REDUCE_SUBGROUP  0: the source's local-memory tree, halving the active work-items each step;
//                    1: sub-group reduction: OpenCL sub_group_reduce_add where the device has
//                    cl_khr_subgroups, else the shared common/reduce.h (CUDA: warp shuffles; OpenCL: its
//                    local-memory tree)
#include "common/portable.h"
#include "common/reduce.h"

#if VAREX_OPENCL && REDUCE_SUBGROUP && defined(cl_khr_subgroups)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#define VAREX_CL_SUBGROUPS 1
#else
#define VAREX_CL_SUBGROUPS 0
#endif

#if LAYOUT_SOA
#define AT(i, c, width, capacity) ((ulong)(c) * (capacity) + (i))
#else
#define AT(i, c, width, capacity) ((ulong)(i) * (width) + (c))
#endif

// The work-group's sum of `value`; valid in work-item 0 only. Every work-item must call it.
FUNC ulong group_sum(LOCAL ulong* sums, ulong value) {
  const uint l = lid();
#if !REDUCE_SUBGROUP
  sums[l] = value;
  LOCAL_BARRIER();
  for (uint s = WG_SIZE / 2; s > 0; s >>= 1) {
    if (l < s) sums[l] += sums[l + s];
    LOCAL_BARRIER();
  }
  return sums[0];
#elif VAREX_CL_SUBGROUPS
  value = sub_group_reduce_add(value);
  if (get_sub_group_local_id() == 0) sums[get_sub_group_id()] = value;
  LOCAL_BARRIER();
  ulong total = 0;
  if (l == 0)
    for (uint s = 0; s < get_num_sub_groups(); ++s) total += sums[s];
  return total;
#else
  return wg_reduce_add_u64(sums, value);
#endif
}

KERNEL void ra_reduce(CONSTANT_PTR uint* RESTRICT in, GLOBAL ulong* RESTRICT parts, uint n, uint width,
                      uint capacity, uint attr) {
  LOCAL_ARRAY ulong sums[WG_SIZE];
  const uint tile = WG_SIZE * EPT;
  ulong acc = 0;
  for (uint base = group_id() * tile; base < n; base += num_groups() * tile) {
    for (uint j = 0; j < EPT; ++j) {
      const uint i = base + j * WG_SIZE + lid();
      if (i < n) acc += in[AT(i, attr, width, capacity)];
    }
  }
  const ulong total = group_sum(sums, acc);
  if (lid() == 0) parts[group_id()] = total;
}

// parts[0] = parts[0] + ... + parts[count - 1]; one work-group.
KERNEL void ra_reduce_finish(GLOBAL ulong* RESTRICT parts, uint count) {
  LOCAL_ARRAY ulong sums[WG_SIZE];
  ulong acc = 0;
  for (uint i = lid(); i < count; i += WG_SIZE) acc += parts[i];
  const ulong total = group_sum(sums, acc);
  if (lid() == 0) parts[0] = total;
}
