// CUB's device-wide algorithms behind varex's vendor interface (vendor/varex_vendor.h). Built by nvcc at
// build time into libvarex_cub.so; nothing here is compiled by the host compiler.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/cub.cuh>
#include <cuda/std/cstdint>

#include "vendor/varex_vendor.h"

namespace {

// A tuple of W 32-bit words, the key first: what CUB moves when it selects whole tuples.
template <int W>
struct Tuple {
  unsigned word[W];
};

struct KeyInRange {
  unsigned lo, hi;
  int negate;
  template <int W>
  __host__ __device__ bool operator()(const Tuple<W>& t) const {
    const bool in = t.word[0] >= lo && t.word[0] <= hi;
    return negate ? !in : in;
  }
};

// CUB's kernels index with the type of the item count: 32-bit where it fits. On the H200, DeviceSelect::If
// with 64-bit counts ran 10–13% slower than bench/cub_baseline.cu's 32-bit counts (docs/RESULTS.md).
template <typename F>
cudaError_t with_count(unsigned long long rows, F f) {
  if (rows <= 0x7FFFFFFFull) return f(static_cast<int>(rows));
  return f(static_cast<::cuda::std::int64_t>(rows));
}

template <int W>
cudaError_t select_tuples(void* temp, size_t* temp_bytes, const unsigned* in, unsigned* out, unsigned* count,
                          unsigned long long rows, KeyInRange pred, cudaStream_t stream) {
  return with_count(rows, [&](auto n) {
    return cub::DeviceSelect::If(temp, *temp_bytes, reinterpret_cast<const Tuple<W>*>(in),
                                 reinterpret_cast<Tuple<W>*>(out), count, n, pred, stream);
  });
}

int select_key_range(void* temp, size_t* temp_bytes, const unsigned* in, unsigned* out, unsigned* count,
                     unsigned long long rows, int words, unsigned lo, unsigned hi, int negate, void* stream) {
  const KeyInRange pred{lo, hi, negate};
  const auto s = static_cast<cudaStream_t>(stream);
  switch (words) {
    case 2:
      return select_tuples<2>(temp, temp_bytes, in, out, count, rows, pred, s);
    case 3:
      return select_tuples<3>(temp, temp_bytes, in, out, count, rows, pred, s);
    case 4:
      return select_tuples<4>(temp, temp_bytes, in, out, count, rows, pred, s);
    default:
      return cudaErrorInvalidValue;
  }
}

struct Widen {
  __host__ __device__ unsigned long long operator()(unsigned v) const { return v; }
};

// Element i of a strided 32-bit column, widened to 64 bits.
struct Strided {
  const unsigned* in;
  unsigned long long stride;
  __host__ __device__ unsigned long long operator()(unsigned long long i) const { return in[i * stride]; }
};

int sum_u32(void* temp, size_t* temp_bytes, const unsigned* in, unsigned long long stride,
            unsigned long long* out, unsigned long long rows, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return with_count(rows, [&](auto n) {
    if (stride == 1) {
      // Contiguous: a widening view of the column itself, which CUB loads vectorised.
      return cub::DeviceReduce::Sum(temp, *temp_bytes, thrust::make_transform_iterator(in, Widen{}), out, n,
                                    s);
    }
    const auto column = thrust::make_transform_iterator(thrust::counting_iterator<unsigned long long>(0),
                                                        Strided{in, stride});
    return cub::DeviceReduce::Sum(temp, *temp_bytes, column, out, n, s);
  });
}

const char* error_string(int status) {
  return cudaGetErrorString(static_cast<cudaError_t>(status));
}

int sticky(int status) {
  switch (static_cast<cudaError_t>(status)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
      return 1;
    default:
      return 0;
  }
}

#define VAREX_STR2(x) #x
#define VAREX_STR(x) VAREX_STR2(x)

const varex_vendor_table kTable{
    VAREX_VENDOR_ABI,
    "CUB " VAREX_STR(CUB_MAJOR_VERSION) "." VAREX_STR(CUB_MINOR_VERSION) "." VAREX_STR(
        CUB_SUBMINOR_VERSION) " (CUDA " VAREX_STR(__CUDACC_VER_MAJOR__) "." VAREX_STR(__CUDACC_VER_MINOR__) ")",
    error_string,
    sticky,
    select_key_range,
    sum_u32,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const varex_vendor_table* varex_vendor(void) {
  return &kTable;
}
