// Copy kernels of the bandwidth probe, 16-byte elements. copy_strided: a fixed grid with a stride loop
// (what GPUs like); copy_cover: one element per work-item (what work-group vectorisers such as PoCL like).
// One source for OpenCL and CUDA (kernels/common/portable.h; uint4 is a type of both).
#include "common/portable.h"

KERNEL void copy_strided(GLOBAL const uint4* RESTRICT in, GLOBAL uint4* RESTRICT out, const uint n) {
  for (uint i = gid(); i < n; i += gsize()) out[i] = in[i];
}

KERNEL void copy_cover(GLOBAL const uint4* RESTRICT in, GLOBAL uint4* RESTRICT out, const uint n) {
  const uint i = gid();
  if (i < n) out[i] = in[i];
}
