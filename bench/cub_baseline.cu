// The vendor-library reference of docs/RESULTS.md for the Red Fox primitives: CUB's DeviceSelect::If
// over key-value tuples (the key's range predicate, as ra_select) and DeviceReduce over one 32-bit
// attribute summed into 64 bits (as ra_reduce), timed with CUDA events on the same sizes varex runs.
// Built by scripts/cub_baseline.sh with nvcc; prints one JSON object per line.
//   cub_baseline [log2_rows=27] [reps=20]
#include <cuda_runtime.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cub_baseline: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct KeyInRange {
  unsigned lo, hi;
  __host__ __device__ bool operator()(const uint2& t) const { return t.x >= lo && t.x <= hi; }
};

struct Widen {
  __host__ __device__ unsigned long long operator()(unsigned v) const { return v; }
};

template <typename Launch>
double median_ms(int reps, Launch launch) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  launch();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    check(cudaEventRecord(start), "record");
    launch();
    check(cudaEventRecord(stop), "record");
    check(cudaEventSynchronize(stop), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "elapsed");
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int log2_rows = argc > 1 ? std::atoi(argv[1]) : 27;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  const std::size_t n = std::size_t{1} << log2_rows;
  // Keys spread over the whole uint32 range (a multiplicative hash of the row), values the row number.
  std::vector<uint2> host(n);
  for (std::size_t i = 0; i < n; ++i)
    host[i] = make_uint2(static_cast<unsigned>(i * 2654435761u), static_cast<unsigned>(i));
  uint2 *tuples = nullptr, *out = nullptr;
  unsigned *values = nullptr, *count = nullptr;
  unsigned long long* sum = nullptr;
  check(cudaMalloc(&tuples, n * sizeof(uint2)), "malloc");
  check(cudaMalloc(&out, n * sizeof(uint2)), "malloc");
  check(cudaMalloc(&values, n * 4), "malloc");
  check(cudaMalloc(&count, 4), "malloc");
  check(cudaMalloc(&sum, 8), "malloc");
  check(cudaMemcpy(tuples, host.data(), n * sizeof(uint2), cudaMemcpyHostToDevice), "upload");
  std::vector<unsigned> column(n);
  for (std::size_t i = 0; i < n; ++i) column[i] = host[i].y;
  check(cudaMemcpy(values, column.data(), n * 4, cudaMemcpyHostToDevice), "upload");

  for (const double selectivity : {0.01, 0.5, 0.99}) {
    const KeyInRange pred{0u, static_cast<unsigned>(selectivity * 4294967295.0)};
    std::size_t temp_bytes = 0;
    check(cub::DeviceSelect::If(nullptr, temp_bytes, tuples, out, count, static_cast<int>(n), pred), "size");
    void* temp = nullptr;
    check(cudaMalloc(&temp, temp_bytes), "malloc");
    const double ms = median_ms(reps, [&] {
      check(cub::DeviceSelect::If(temp, temp_bytes, tuples, out, count, static_cast<int>(n), pred), "select");
    });
    unsigned kept = 0;
    check(cudaMemcpy(&kept, count, 4, cudaMemcpyDeviceToHost), "download");
    std::size_t want = 0;
    for (std::size_t i = 0; i < n; ++i) want += pred(host[i]);
    std::printf(
        "{\"op\": \"cub_select_if\", \"rows\": %zu, \"selectivity\": %.2f, \"kept\": %u, \"verified\": %s, "
        "\"ms\": %.4f, \"gbps\": %.1f}\n",
        n, selectivity, kept, kept == want ? "true" : "false", ms, (n * 8.0 + kept * 8.0) / ms / 1e6);
    check(cudaFree(temp), "free");
  }
  {
    const auto wide = thrust::make_transform_iterator(static_cast<const unsigned*>(values), Widen{});
    std::size_t temp_bytes = 0;
    check(cub::DeviceReduce::Sum(nullptr, temp_bytes, wide, sum, static_cast<int>(n)), "size");
    void* temp = nullptr;
    check(cudaMalloc(&temp, temp_bytes), "malloc");
    const double ms = median_ms(reps, [&] {
      check(cub::DeviceReduce::Sum(temp, temp_bytes, wide, sum, static_cast<int>(n)), "sum");
    });
    unsigned long long got = 0;
    check(cudaMemcpy(&got, sum, 8, cudaMemcpyDeviceToHost), "download");
    unsigned long long want = 0;
    for (unsigned v : column) want += v;
    std::printf(
        "{\"op\": \"cub_reduce_sum\", \"rows\": %zu, \"verified\": %s, \"ms\": %.4f, \"gbps\": %.1f}\n", n,
        got == want ? "true" : "false", ms, n * 4.0 / ms / 1e6);
    check(cudaFree(temp), "free");
  }
  return 0;
}
