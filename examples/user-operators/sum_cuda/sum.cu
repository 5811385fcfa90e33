// The sum of an int32 column modulo 2^32, in plain CUDA C++: each thread adds ept rows per pass over a
// grid-stride loop, a warp reduces with shuffles, and either one atomic per warp adds its sum (WARP_ATOMICS)
// or the warps' sums meet in shared memory and one atomic per block adds theirs. CUDA devices only.
// varex finds a kernel by its name: extern "C".
extern "C" __global__ void __launch_bounds__(1024)
    sum_column(const int* __restrict__ values, unsigned* __restrict__ sum, unsigned n) {
  unsigned own = 0;
  const unsigned stride = gridDim.x * blockDim.x * ept;
  for (unsigned base = blockIdx.x * blockDim.x * ept + threadIdx.x; base < n; base += stride) {
#pragma unroll
    for (unsigned j = 0; j < ept; ++j) {
      const unsigned i = base + j * blockDim.x;
      if (i < n) own += static_cast<unsigned>(__ldg(values + i));
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) own += __shfl_down_sync(0xffffffffu, own, offset);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#if WARP_ATOMICS
  if (lane == 0) atomicAdd(sum, own);
#else
  __shared__ unsigned warps[32];
  if (lane == 0) warps[warp] = own;
  __syncthreads();
  if (warp == 0) {
    own = lane < blockDim.x / 32 ? warps[lane] : 0;
    for (int offset = 16; offset > 0; offset /= 2) own += __shfl_down_sync(0xffffffffu, own, offset);
    if (lane == 0) atomicAdd(sum, own);
  }
#endif
}
