// CUB's device-wide algorithms behind varex's vendor interface (vendor/varex_vendor.h). Built by nvcc at
// build time into libvarex_cub.so; nothing here is compiled by the host compiler.
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/discard_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/set_operations.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system_error.h>
#include <thrust/transform.h>

#include <cub/cub.cuh>
#include <cuda/std/cstdint>
#include <map>
#include <mutex>
#include <new>

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

// One switch over the tuple widths every entry shares: calls f(std::integral_constant<int, W>).
template <typename F>
cudaError_t by_width(int words, F f) {
  switch (words) {
    case 2:
      return f(::cuda::std::integral_constant<int, 2>{});
    case 3:
      return f(::cuda::std::integral_constant<int, 3>{});
    case 4:
      return f(::cuda::std::integral_constant<int, 4>{});
    default:
      return cudaErrorInvalidValue;
  }
}

int select_key_range(void* temp, size_t* temp_bytes, const unsigned* in, unsigned* out, unsigned* count,
                     unsigned long long rows, int words, unsigned lo, unsigned hi, int negate, void* stream) {
  const KeyInRange pred{lo, hi, negate};
  const auto s = static_cast<cudaStream_t>(stream);
  return by_width(words, [&](auto w) {
    constexpr int W = decltype(w)::value;
    return with_count(rows, [&](auto n) {
      return cub::DeviceSelect::If(temp, *temp_bytes, reinterpret_cast<const Tuple<W>*>(in),
                                   reinterpret_cast<Tuple<W>*>(out), count, n, pred, s);
    });
  });
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

struct KeyOf {
  template <int W>
  __host__ __device__ unsigned operator()(const Tuple<W>& t) const {
    return t.word[0];
  }
};

int unique_by_key(void* temp, size_t* temp_bytes, const unsigned* in, unsigned* out, unsigned* count,
                  unsigned long long rows, int words, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return by_width(words, [&](auto w) {
    constexpr int W = decltype(w)::value;
    const auto* tuples = reinterpret_cast<const Tuple<W>*>(in);
    return with_count(rows, [&](auto n) {
      return cub::DeviceSelect::UniqueByKey(
          temp, *temp_bytes, thrust::make_transform_iterator(tuples, KeyOf{}), tuples,
          thrust::make_discard_iterator(), reinterpret_cast<Tuple<W>*>(out), count, n, s);
    });
  });
}

// Element i of a strided 32-bit column.
struct At {
  const unsigned* base;
  unsigned long long stride;
  __host__ __device__ unsigned operator()(unsigned long long i) const { return base[i * stride]; }
};

struct Times {
  unsigned long long stride;
  __host__ __device__ unsigned long long operator()(unsigned long long i) const { return i * stride; }
};

struct Add {
  __host__ __device__ unsigned operator()(unsigned a, unsigned b) const { return a + b; }
};

int reduce_by_key(void* temp, size_t* temp_bytes, const unsigned* keys, unsigned long long keys_stride,
                  const unsigned* values, unsigned long long values_stride, unsigned* out_keys,
                  unsigned* out_sums, unsigned long long out_stride, unsigned* runs, unsigned long long rows,
                  void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const thrust::counting_iterator<unsigned long long> index(0);
  const auto keys_in = thrust::make_transform_iterator(index, At{keys, keys_stride});
  const auto values_in = thrust::make_transform_iterator(index, At{values, values_stride});
  const auto slots = thrust::make_transform_iterator(index, Times{out_stride});
  const auto keys_out = thrust::make_permutation_iterator(out_keys, slots);
  const auto sums_out = thrust::make_permutation_iterator(out_sums, slots);
  return with_count(rows, [&](auto n) {
    return cub::DeviceReduce::ReduceByKey(temp, *temp_bytes, keys_in, keys_out, values_in, sums_out, runs,
                                          Add{}, n, s);
  });
}

// The tuple's words as CUB's radix sort sees them, most significant first: the whole tuple, or its key
// alone (KeyOnly; the other words ride along).
template <int W>
struct Decompose;
template <>
struct Decompose<2> {
  __host__ __device__ ::cuda::std::tuple<unsigned&, unsigned&> operator()(Tuple<2>& t) const {
    return {t.word[0], t.word[1]};
  }
};
template <>
struct Decompose<3> {
  __host__ __device__ ::cuda::std::tuple<unsigned&, unsigned&, unsigned&> operator()(Tuple<3>& t) const {
    return {t.word[0], t.word[1], t.word[2]};
  }
};
template <>
struct Decompose<4> {
  __host__ __device__ ::cuda::std::tuple<unsigned&, unsigned&, unsigned&, unsigned&> operator()(
      Tuple<4>& t) const {
    return {t.word[0], t.word[1], t.word[2], t.word[3]};
  }
};
struct KeyOnly {
  template <int W>
  __host__ __device__ ::cuda::std::tuple<unsigned&> operator()(Tuple<W>& t) const {
    return {t.word[0]};
  }
};

// Lexicographic over the first `keys` words.
// Orders tuples by their first `keys` words. The count has no default: `TupleLess{}` once compared no word
// at all, so that Thrust's set operations took every tuple for equal and wrote min(n, m) of them past the
// output (CUDA_ERROR_INVALID_ADDRESS_SPACE or an illegal address on the H100 and H200, issue 48).
struct TupleLess {
  __host__ __device__ explicit TupleLess(int words) : keys(words) {}
  int keys;
  template <int W>
  __host__ __device__ bool operator()(const Tuple<W>& a, const Tuple<W>& b) const {
    for (int i = 0; i < keys && i < W; ++i) {
      if (a.word[i] != b.word[i]) return a.word[i] < b.word[i];
    }
    return false;
  }
};

int sort_tuples(void* temp, size_t* temp_bytes, const unsigned* in, unsigned* out, unsigned long long rows,
                int words, int keys, int algorithm, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return by_width(words, [&](auto w) {
    constexpr int W = decltype(w)::value;
    const auto* keys_in = reinterpret_cast<const Tuple<W>*>(in);
    auto* keys_out = reinterpret_cast<Tuple<W>*>(out);
    return with_count(rows, [&](auto n) {
      if (algorithm != 0)
        return cub::DeviceMergeSort::StableSortKeysCopy(temp, *temp_bytes, keys_in, keys_out, n,
                                                        TupleLess{keys}, s);
      if (keys < W)
        return cub::DeviceRadixSort::SortKeys(temp, *temp_bytes, keys_in, keys_out, n, KeyOnly{}, s);
      return cub::DeviceRadixSort::SortKeys(temp, *temp_bytes, keys_in, keys_out, n, Decompose<W>{}, s);
    });
  });
}

int sort_keys_u32(void* temp, size_t* temp_bytes, const unsigned* in, unsigned* out, unsigned long long rows,
                  void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return with_count(
      rows, [&](auto n) { return cub::DeviceRadixSort::SortKeys(temp, *temp_bytes, in, out, n, 0, 32, s); });
}

struct Minus {
  __host__ __device__ unsigned operator()(unsigned a, unsigned b) const { return a - b; }
};

// Output tuple o of the join: its left tuple i is the last whose offset is at most o, its right tuple the
// (o - offsets[i])-th of i's matches, from lower[i] on.
template <int W>
struct ExpandPair {
  const unsigned* left;
  const unsigned* right;
  const unsigned* lower;
  const unsigned* offsets;
  unsigned long long n;
  unsigned* out;
  __host__ __device__ void operator()(unsigned long long o) const {
    const unsigned* after = thrust::upper_bound(thrust::seq, offsets, offsets + n, static_cast<unsigned>(o));
    const unsigned long long i = static_cast<unsigned long long>(after - offsets) - 1;
    const unsigned long long j = lower[i] + (o - offsets[i]);
    unsigned* tuple = out + o * (2 * W - 1);
    tuple[0] = left[i * W];
    for (int c = 1; c < W; ++c) {
      tuple[c] = left[i * W + c];
      tuple[W - 1 + c] = right[j * W + c];
    }
  }
};

constexpr size_t aligned(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

int join_sorted(void* temp, size_t* temp_bytes, const unsigned* left, unsigned long long n,
                const unsigned* right, unsigned long long m, int words, unsigned* out,
                unsigned long long out_capacity, unsigned* count, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  // Scratch: lower[n], counts[n + 1] (the last one 0, so that the scan's last element is the total),
  // offsets[n + 1], then CUB's scan.
  const size_t array = aligned((n + 1) * sizeof(unsigned));
  size_t scan_bytes = 0;
  cudaError_t status = with_count(n + 1, [&](auto items) {
    return cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<const unsigned*>(nullptr),
                                         static_cast<unsigned*>(nullptr), items, s);
  });
  if (status != cudaSuccess) return status;
  if (temp == nullptr) {
    *temp_bytes = 3 * array + scan_bytes;
    return cudaSuccess;
  }
  char* base = static_cast<char*>(temp);
  unsigned* lower = reinterpret_cast<unsigned*>(base);
  unsigned* counts = reinterpret_cast<unsigned*>(base + array);
  unsigned* offsets = reinterpret_cast<unsigned*>(base + 2 * array);
  void* scan_temp = base + 3 * array;
  try {
    return by_width(words, [&](auto w) {
      constexpr int W = decltype(w)::value;
      const auto policy = thrust::cuda::par_nosync.on(s);
      const thrust::counting_iterator<unsigned long long> index(0);
      const auto left_keys = thrust::make_transform_iterator(index, At{left, W});
      const auto right_keys = thrust::make_transform_iterator(index, At{right, W});
      thrust::lower_bound(policy, right_keys, right_keys + m, left_keys, left_keys + n, lower);
      thrust::upper_bound(policy, right_keys, right_keys + m, left_keys, left_keys + n, counts);
      thrust::transform(policy, counts, counts + n, lower, counts, Minus{});
      cudaError_t e = cudaMemsetAsync(counts + n, 0, sizeof(unsigned), s);
      if (e != cudaSuccess) return e;
      e = with_count(n + 1, [&](auto items) {
        size_t bytes = scan_bytes;
        return cub::DeviceScan::ExclusiveSum(scan_temp, bytes, counts, offsets, items, s);
      });
      if (e != cudaSuccess) return e;
      e = cudaMemcpyAsync(count, offsets + n, sizeof(unsigned), cudaMemcpyDeviceToDevice, s);
      if (e != cudaSuccess) return e;
      // The expansion's size: the number of pairs, read back.
      unsigned total = 0;
      e = cudaMemcpyAsync(&total, offsets + n, sizeof(unsigned), cudaMemcpyDeviceToHost, s);
      if (e == cudaSuccess) e = cudaStreamSynchronize(s);
      if (e != cudaSuccess) return e;
      const unsigned long long pairs = total < out_capacity ? total : out_capacity;
      if (pairs > 0)
        thrust::for_each_n(policy, index, pairs, ExpandPair<W>{left, right, lower, offsets, n, out});
      return cudaPeekAtLastError();
    });
  } catch (const thrust::system_error& e) {
    return e.code().value();
  }
}

// Thrust's temporary storage (it allocates through the execution policy's allocator, not through CUB's
// temp/temp_bytes convention): blocks are kept when Thrust frees them and handed out again, so repeated
// calls on one workload cudaMalloc only the first time (the warm-up), never in a timed repetition.
class CachedAllocator {
 public:
  using value_type = char;

  char* allocate(std::ptrdiff_t bytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto fit = free_.lower_bound(bytes);
    if (fit != free_.end()) {
      char* p = fit->second;
      used_[p] = fit->first;
      free_.erase(fit);
      return p;
    }
    void* p = nullptr;
    if (cudaMalloc(&p, static_cast<size_t>(bytes)) != cudaSuccess) throw std::bad_alloc();
    used_[static_cast<char*>(p)] = bytes;
    return static_cast<char*>(p);
  }

  void deallocate(char* p, size_t) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = used_.find(p);
    if (it == used_.end()) return;
    free_.emplace(it->second, p);
    used_.erase(it);
  }

 private:
  std::mutex mutex_;
  std::multimap<std::ptrdiff_t, char*> free_;  // by size
  std::map<char*, std::ptrdiff_t> used_;
};

CachedAllocator& thrust_storage() {
  static CachedAllocator* storage = new CachedAllocator;  // never freed: the context may be gone at exit
  return *storage;
}

int set_operation(void* temp, size_t* temp_bytes, const unsigned* left, unsigned long long left_rows,
                  const unsigned* right, unsigned long long right_rows, unsigned* out, unsigned* count,
                  int words, int operation, void* stream) {
  if (operation < 0 || operation > 2) return cudaErrorInvalidValue;
  if (temp == nullptr) {
    *temp_bytes = 0;
    return by_width(words, [](auto) { return cudaSuccess; });
  }
  const auto s = static_cast<cudaStream_t>(stream);
  try {
    return by_width(words, [&](auto w) {
      constexpr int W = decltype(w)::value;
      const auto* a = reinterpret_cast<const Tuple<W>*>(left);
      const auto* b = reinterpret_cast<const Tuple<W>*>(right);
      auto* o = reinterpret_cast<Tuple<W>*>(out);
      const auto policy = thrust::cuda::par_nosync(thrust_storage()).on(s);
      Tuple<W>* end = nullptr;
      if (operation == 0) {
        end = thrust::set_intersection(policy, a, a + left_rows, b, b + right_rows, o, TupleLess{W});
      } else if (operation == 1) {
        end = thrust::set_union(policy, a, a + left_rows, b, b + right_rows, o, TupleLess{W});
      } else {
        end = thrust::set_difference(policy, a, a + left_rows, b, b + right_rows, o, TupleLess{W});
      }
      // The end iterator is known on the host: the count goes to the device word on the stream.
      thrust::fill_n(policy, count, 1, static_cast<unsigned>(end - o));
      return cudaGetLastError();
    });
  } catch (const thrust::system_error& e) {
    return e.code().value() != 0 ? e.code().value() : static_cast<int>(cudaErrorUnknown);
  } catch (const std::bad_alloc&) {
    return cudaErrorMemoryAllocation;
  }
}

const char* error_string(int status) {
  return cudaGetErrorString(static_cast<cudaError_t>(status));
}

int sticky(int status) {
  switch (static_cast<cudaError_t>(status)) {
    case cudaErrorIllegalAddress:
    case cudaErrorInvalidAddressSpace:
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
    unique_by_key,
    reduce_by_key,
    sort_tuples,
    join_sorted,
    set_operation,
    sort_keys_u32,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const varex_vendor_table* varex_vendor(void) {
  return &kTable;
}
