// One kernel source for OpenCL C and CUDA (NVRTC). Kernels are written in OpenCL C's vocabulary
// through the names below; this header maps them onto CUDA where NVRTC compiles the file (NVRTC defines
// __CUDACC__). Only what the two APIs really do differently (warp shuffles and ballots against
// sub-groups, 64-bit atomics) is left to the kernels, behind `#if VAREX_CUDA`.
//
//   KERNEL          a kernel entry point: __kernel / extern "C" __global__
//   GLOBAL          a pointer into device memory: __global / nothing
//   LOCAL           a pointer into work-group memory: __local / nothing (shared memory is generic there)
//   LOCAL_ARRAY     declares a work-group array inside a kernel: __local / __shared__
//   CONSTANT_PTR    read-only device memory: __global const / const
//   RESTRICT        no aliasing: restrict / __restrict__
//   FUNC            a helper function: inline / __device__ __forceinline__
//   LOCAL_BARRIER() a work-group barrier over local memory
//   GLOBAL_BARRIER() a work-group barrier over global and local memory
//   lid(), gid(), lsize(), gsize(), group_id(), num_groups(): dimension 0 of the launch
//   atomic_add_u32/_inc_u32/_max_u32/_min_i32/_max_i32/_cas_u32 on GLOBAL or LOCAL memory
//   atomic_add_u64 (GLOBAL)
//   atomic_or_u32, atomic_cas_i32 on GLOBAL or LOCAL memory
//   slong           a signed 64-bit integer (long / long long)
//   PRAGMA_UNROLL   asks the compiler to unroll the loop that follows (#pragma unroll on both)
//   popcount_u32(x), clz_u32(x): set bits and leading zeros of a uint
//   warp_ballot(pred): bit l set where lane l of the warp (32 consecutive work-items) passes a non-zero pred,
//                 every lane of the warp calling it; VAREX_WARP_BALLOT says it exists: on CUDA, and on OpenCL
//                 where the host defines VAREX_WARP_PTX (NVIDIA's platform, which takes inline PTX but offers
//                 no sub-group ballot)
//   warp_sync():  where VAREX_WARP_BALLOT: the warp's lanes meet, and local memory written by one lane before
//                 is seen by the others after (__syncwarp; bar.warp.sync)
//   warp_shfl_up(value, delta): where VAREX_WARP_BALLOT: the value of the lane delta below this one (this
//                 lane's own below lane delta), every lane calling it (__shfl_up_sync; shfl.sync.up)
//   KERNEL_BOUNDED(threads, groups): a kernel entry point that CUDA compiles for `groups` work-groups of
//                 `threads` per multiprocessor (__launch_bounds__, which caps the registers); OpenCL's KERNEL
#ifndef VAREX_PORTABLE_H
#define VAREX_PORTABLE_H

#if defined(__CUDACC__)
#define VAREX_CUDA 1
#define VAREX_OPENCL 0
#define VAREX_HAVE_ATOMIC_U64 1

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long long ulong;
typedef long long slong;

#define KERNEL extern "C" __global__
#define KERNEL_BOUNDED(threads, groups) extern "C" __global__ __launch_bounds__(threads, groups)
#define GLOBAL
#define LOCAL
#define LOCAL_ARRAY __shared__
#define CONSTANT_PTR const
#define RESTRICT __restrict__
#define FUNC __device__ __forceinline__
#define LOCAL_BARRIER() __syncthreads()
#define GLOBAL_BARRIER() __syncthreads()

FUNC uint lid() { return threadIdx.x; }
FUNC uint lsize() { return blockDim.x; }
FUNC uint group_id() { return blockIdx.x; }
FUNC uint num_groups() { return gridDim.x; }
FUNC uint gid() { return blockIdx.x * blockDim.x + threadIdx.x; }
FUNC uint gsize() { return gridDim.x * blockDim.x; }

FUNC uint atomic_add_u32(uint* p, uint v) { return atomicAdd(p, v); }
FUNC uint atomic_inc_u32(uint* p) { return atomicAdd(p, 1u); }
FUNC uint atomic_dec_u32(uint* p) { return atomicSub(p, 1u); }
FUNC uint atomic_max_u32(uint* p, uint v) { return atomicMax(p, v); }
FUNC int atomic_min_i32(int* p, int v) { return atomicMin(p, v); }
FUNC int atomic_max_i32(int* p, int v) { return atomicMax(p, v); }
FUNC uint atomic_cas_u32(uint* p, uint expected, uint desired) { return atomicCAS(p, expected, desired); }
FUNC ulong atomic_add_u64(ulong* p, ulong v) { return atomicAdd(p, v); }
FUNC uint atomic_or_u32(uint* p, uint v) { return atomicOr(p, v); }
FUNC int atomic_cas_i32(int* p, int expected, int desired) { return atomicCAS(p, expected, desired); }
FUNC uint popcount_u32(uint x) { return __popc(x); }
FUNC uint clz_u32(uint x) { return __clz(x); }
#define VAREX_WARP_BALLOT 1
FUNC uint warp_ballot(uint pred) { return __ballot_sync(0xffffffffu, pred != 0u); }
FUNC void warp_sync() { __syncwarp(); }
FUNC uint warp_shfl_up(uint value, uint delta) { return __shfl_up_sync(0xffffffffu, value, delta); }

#else
#define VAREX_CUDA 0
#define VAREX_OPENCL 1
typedef long slong;

#define KERNEL __kernel
#define KERNEL_BOUNDED(threads, groups) __kernel
#define GLOBAL __global
#define LOCAL __local
#define LOCAL_ARRAY __local
#define CONSTANT_PTR __global const
#define RESTRICT restrict
#define FUNC inline
#define LOCAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define GLOBAL_BARRIER() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)

#define lid() ((uint)get_local_id(0))
#define lsize() ((uint)get_local_size(0))
#define group_id() ((uint)get_group_id(0))
#define num_groups() ((uint)get_num_groups(0))
#define gid() ((uint)get_global_id(0))
#define gsize() ((uint)get_global_size(0))

// The pointer's address space is the caller's (global or local): macros keep OpenCL's overloads.
#define atomic_add_u32(p, v) atomic_add((p), (v))
#define atomic_inc_u32(p) atomic_inc(p)
#define atomic_dec_u32(p) atomic_dec(p)
#define atomic_max_u32(p, v) atomic_max((p), (v))
#define atomic_min_i32(p, v) atomic_min((p), (v))
#define atomic_max_i32(p, v) atomic_max((p), (v))
#define atomic_cas_u32(p, e, d) atomic_cmpxchg((p), (e), (d))
#define atomic_or_u32(p, v) atomic_or((p), (v))
#define atomic_cas_i32(p, e, d) atomic_cmpxchg((p), (e), (d))
#define popcount_u32(x) popcount((uint)(x))
#define clz_u32(x) clz((uint)(x))
#if defined(cl_khr_int64_base_atomics)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define VAREX_HAVE_ATOMIC_U64 1
#define atomic_add_u64(p, v) atom_add((volatile __global ulong*)(p), (ulong)(v))
#else
#define VAREX_HAVE_ATOMIC_U64 0
#endif
#if defined(VAREX_WARP_PTX) && VAREX_WARP_PTX
#define VAREX_WARP_BALLOT 1
FUNC uint warp_ballot(uint pred) {
  uint word;
  __asm__ __volatile__("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }"
               : "=r"(word)
               : "r"(pred));
  return word;
}
FUNC void warp_sync() { __asm__ __volatile__("bar.warp.sync 0xffffffff;" ::: "memory"); }
FUNC uint warp_shfl_up(uint value, uint delta) {
  uint up;
  __asm__ __volatile__("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(up) : "r"(value), "r"(delta));
  return up;
}
#else
#define VAREX_WARP_BALLOT 0
#endif
#endif

#define PRAGMA_UNROLL _Pragma("unroll")

#endif  // VAREX_PORTABLE_H
