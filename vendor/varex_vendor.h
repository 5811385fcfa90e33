/* The vendor library's C interface. CUB and Thrust algorithms compiled once by nvcc at build time
 * into libvarex_cub.so (vendor/cub/varex_cub.cu), which the CUDA engine loads with dlopen: so a library's
 * algorithm runs, is measured, verified and stored like any other variant of a varex operator (impl=cub).
 *
 * Every entry returns a cudaError_t (0: success) and runs on `stream` (a CUstream, which is a
 * cudaStream_t). Entries that need device scratch take it as CUB does: called with temp == NULL they only
 * set *temp_bytes. Device pointers are CUdeviceptr values cast to pointers. Relations are arrays of
 * tuples (AoS) of `words` unsigned 32-bit words, the key first. Plain C, so that nvcc's and the host
 * compiler's sides agree on it whatever their C++ versions. */
#ifndef VAREX_VENDOR_H
#define VAREX_VENDOR_H

#include <stddef.h>

#define VAREX_VENDOR_ABI 5

#ifdef __cplusplus
extern "C" {
#endif

typedef struct varex_vendor_table {
  int abi; /* VAREX_VENDOR_ABI of the library */
  const char* name; /* "CUB 3.0.0 (CUDA 13.0)" */
  const char* (*error_string)(int status);
  /* Whether `status` left the context unusable (a sticky error: the process must be replaced). */
  int (*sticky)(int status);

  /* cub::DeviceSelect::If: the tuples whose key lies in [lo, hi] (negate: outside it), dense and in input
   * order; *count (device) their number. words: 2 to 4. */
  int (*select_key_range)(void* temp, size_t* temp_bytes, const unsigned* in, unsigned* out, unsigned* count,
                          unsigned long long rows, int words, unsigned lo, unsigned hi, int negate,
                          void* stream);

  /* cub::DeviceReduce::Sum of one 32-bit attribute into 64 bits: element i is in[i * stride]. */
  int (*sum_u32)(void* temp, size_t* temp_bytes, const unsigned* in, unsigned long long stride,
                 unsigned long long* out, unsigned long long rows, void* stream);

  /* cub::DeviceSelect::UniqueByKey: the first tuple of each run of equal keys, dense and in input order;
   * *count (device) their number. AoS tuples of `words` (2 to 4). */
  int (*unique_by_key)(void* temp, size_t* temp_bytes, const unsigned* in, unsigned* out, unsigned* count,
                       unsigned long long rows, int words, void* stream);

  /* cub::DeviceReduce::ReduceByKey: per run of equal keys, the key and the sum of its values modulo 2^32,
   * in input order; *runs (device) their number. Element i of the keys is keys[i * keys_stride], of the values
   * values[i * values_stride]; run r's key goes to out_keys[r * out_stride], its sum to
   * out_sums[r * out_stride] (AoS pairs: out_stride 2 and out_sums = out_keys + 1). */
  int (*reduce_by_key)(void* temp, size_t* temp_bytes, const unsigned* keys, unsigned long long keys_stride,
                       const unsigned* values, unsigned long long values_stride, unsigned* out_keys,
                       unsigned* out_sums, unsigned long long out_stride, unsigned* runs, unsigned long long rows,
                       void* stream);

  /* Sorts AoS tuples of `words` (2 to 4) by their first `keys` words (the whole tuple, or 1: the key alone),
   * key first, stably: cub::DeviceRadixSort::SortKeys with a decomposer of those words (algorithm 0) or
   * cub::DeviceMergeSort::StableSortKeys (algorithm 1). in and out must not overlap; `in` is left as it was. */
  int (*sort_tuples)(void* temp, size_t* temp_bytes, const unsigned* in, unsigned* out, unsigned long long rows,
                     int words, int keys, int algorithm, void* stream);

  /* The inner join of two relations sorted by key (AoS tuples of `words`, 2 to 4): for every pair of a left
   * and a right tuple with equal keys, (key, left values, right values) into `out` (AoS, 2 x words - 1
   * words per tuple, in key order), the first out_capacity of them at most; *count (device) their number.
   * Thrust's vectorised lower_bound and upper_bound of the left keys in the right ones, CUB's exclusive scan
   * of the match counts, and the pairs expanded by thrust::for_each_n. Reads the number of pairs back to
   * the host (the expansion's size): the call synchronises with `stream`. */
  int (*join_sorted)(void* temp, size_t* temp_bytes, const unsigned* left, unsigned long long n,
                     const unsigned* right, unsigned long long m, int words, unsigned* out,
                     unsigned long long out_capacity, unsigned* count, void* stream);

  /* thrust::set_intersection (operation 0), set_union (1) or set_difference (2) of two relations of AoS
   * tuples of `words` (2 to 4), each sorted by whole tuple (key first), compared lexicographically; the
   * result dense, sorted, with multiset semantics (min, max, max(m - n, 0) copies), *count (device) its
   * tuples. Thrust learns the result's size on the host, so the call waits for the stream. Its temporary
   * storage comes from a cache inside the library that keeps blocks between calls: *temp_bytes is 0. */
  int (*set_operation)(void* temp, size_t* temp_bytes, const unsigned* left, unsigned long long left_rows,
                       const unsigned* right, unsigned long long right_rows, unsigned* out, unsigned* count,
                       int words, int operation, void* stream);

  /* cub::DeviceRadixSort::SortKeys of unsigned 32-bit keys, ascending (all 32 bits). in and out must not
   * overlap; `in` is left as it was. */
  int (*sort_keys_u32)(void* temp, size_t* temp_bytes, const unsigned* in, unsigned* out, unsigned long long rows,
                       void* stream);
} varex_vendor_table;

/* The one exported symbol. */
const varex_vendor_table* varex_vendor(void);

#ifdef __cplusplus
}
#endif

#endif
