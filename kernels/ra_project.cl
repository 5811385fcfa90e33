// Red Fox PROJECT (document 002, sec. 3.2.1, alg. 1): every work-item copies the kept attributes of its
// tuples to the output, in the order asked for. One tile of lsize() x EPT tuples per work-group and
// round; a tuple's index is tile + j * lsize() + lid(), so neighbouring work-items touch neighbouring
// tuples. Work-groups stride over the tiles (a fixed grid) or cover them once.
//   EPT         tuples per work-item and tile
//   LAYOUT_SOA  0: packed tuples (attribute c of tuple i at i * width + c); 1: one array per attribute
//               (at c * capacity + i)
#include "common/portable.h"

FUNC uint pick(uint j, uint a0, uint a1, uint a2, uint a3) {
  return j == 0 ? a0 : j == 1 ? a1 : j == 2 ? a2 : a3;
}

KERNEL void ra_project(CONSTANT_PTR uint* RESTRICT in, GLOBAL uint* RESTRICT out, uint n, uint width,
                       uint in_capacity, uint keep, uint a0, uint a1, uint a2, uint a3) {
  const uint tile = lsize() * EPT;
  for (uint base = group_id() * tile; base < n; base += num_groups() * tile) {
    for (uint j = 0; j < EPT; ++j) {
      const uint i = base + j * lsize() + lid();
      if (i >= n) break;
      for (uint c = 0; c < keep; ++c) {
        const ulong a = pick(c, a0, a1, a2, a3);
#if LAYOUT_SOA
        out[(ulong)c * n + i] = in[a * in_capacity + i];
#else
        out[(ulong)i * keep + c] = in[(ulong)i * width + a];
#endif
      }
    }
  }
}
