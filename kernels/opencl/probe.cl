// Copy kernels of the bandwidth probe, 16-byte elements. copy_strided: a fixed grid with a stride loop
// (what GPUs like); copy_cover: one element per work-item (what work-group vectorisers such as PoCL like).
__kernel void copy_strided(__global const uint4* restrict in, __global uint4* restrict out, const uint n) {
  for (uint i = get_global_id(0); i < n; i += get_global_size(0)) out[i] = in[i];
}

__kernel void copy_cover(__global const uint4* restrict in, __global uint4* restrict out, const uint n) {
  const uint i = get_global_id(0);
  if (i < n) out[i] = in[i];
}
