#pragma once
// The device digest of an output (kernels/common/digest.h): the sum, modulo 2^64, over its tuples of a
// 64-bit mix of each tuple's words, started from the tuple's position where the order counts. The outputs
// (harness/outputs/) check a result by it, so that only one 64-bit word crosses the bus; `HostDigest`
// computes the same digest of the host reference, written apart from the kernels.
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "datasets/int_columns.hpp"
#include "harness/engine.hpp"

namespace varex::harness::primitives {

// One column of an output: `width` consecutive 32-bit words per tuple (a 64-bit value is two).
struct DigestColumn {
  const DeviceBuffer* buffer = nullptr;
  std::uint32_t width = 1;
};

class DeviceDigest {
 public:
  explicit DeviceDigest(Engine& engine);

  // Tuple i < n is the words of every column in turn (at most five columns, widths up to 15).
  std::uint64_t columns(const std::vector<DigestColumn>& columns, std::uint64_t n, bool ordered);
  // Tuples of `attributes` words laid out one array per attribute: attribute c of tuple i at word
  // c * capacity + i.
  std::uint64_t soa(const DeviceBuffer& buffer, std::uint32_t attributes, std::uint64_t capacity,
                    std::uint64_t n, bool ordered);
  // Tuple i < n is (own[i] where `own` is given, table[index[i]]); an index at or past `limit` makes a
  // tuple no table row gives.
  std::uint64_t gather(const DeviceBuffer& index, const DeviceBuffer& table, std::uint64_t limit,
                       const DeviceBuffer* own, std::uint64_t n, bool ordered);

 private:
  Engine& engine_;
  std::unique_ptr<DeviceBuffer> sum_;
  std::unique_ptr<HostBuffer> host_;

  std::uint64_t launch(const std::string& kernel, std::uint64_t n, const std::vector<KernelArg>& args);
};

// The same digest on the host: a tuple's mix is start(position) then add() for each of its words, and the
// digest is the sum of the tuples' mixes.
struct HostDigest {
  static std::uint64_t start(std::uint64_t position);  // position + 1 where order counts, else 0
  static std::uint64_t add(std::uint64_t h, std::uint32_t word);
  // The sum modulo 2^64 of term(i) for i < n, on all host cores (the terms are tuples' mixes, or sums of
  // them).
  template <typename Term>
  static std::uint64_t sum(std::uint64_t n, const Term& term) {
    std::atomic<std::uint64_t> total{0};
    datasets::parallel_rows(n, [&](std::uint64_t begin, std::uint64_t end) {
      std::uint64_t part = 0;
      for (std::uint64_t i = begin; i < end; ++i) part += term(i);
      total.fetch_add(part, std::memory_order_relaxed);
    });
    return total.load();
  }
};

}  // namespace varex::harness::primitives
