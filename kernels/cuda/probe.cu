// Copy kernels of the bandwidth probe, 16-byte elements; see kernels/opencl/probe.cl.
extern "C" __global__ void copy_strided(const uint4* __restrict__ in, uint4* __restrict__ out, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i];
}

extern "C" __global__ void copy_cover(const uint4* __restrict__ in, uint4* __restrict__ out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}
