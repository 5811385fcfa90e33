#pragma once
// The Pairs output kind: pairs of row ids (left row, right row) in two device arrays of 32-bit words, such
// as a join's (build row, probe row), in any order: they are compared as a multiset (pairs whose right rows
// do not ascend are first put in right-row order on the host, outside any timing). The host learns the number
// of pairs while the kernels run (the source allocates the result there) and says so with set_count().
//
// Digest (unsigned 64-bit arithmetic, modulo 2^64): rows = the pairs; checksum = the sum over the pairs of
// left * 1000003 + right, which does not depend on their order.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/outputs/output.hpp"
#include "harness/primitives/digest.hpp"

namespace varex::harness {

// The expected pairs. Right rows with the same partners share a partner set (in a join: the build rows of
// one key), so the reference is linear in the input even when the pairs are many.
struct PairsReference {
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;  // a right row without partners
  std::vector<std::uint64_t> set_begin;  // set s is rows[set_begin[s] .. set_begin[s + 1]), ascending
  std::vector<std::uint32_t> rows;       // left rows, grouped by set
  std::vector<std::uint32_t> right_set;  // per right row: its partner set, or kNone
  std::uint64_t pairs = 0;
  Digest digest;

  std::uint64_t partners(std::uint64_t right_row) const;
};

class PairsOutput final : public Output {
 public:
  // Room for the reference's pairs (at least one).
  PairsOutput(Engine& engine, PairsReference reference);

  DeviceBuffer& left_buffer() { return *left_; }
  DeviceBuffer& right_buffer() { return *right_; }
  // The pairs the buffers hold.
  std::uint64_t capacity() const { return capacity_; }
  // The pairs the device says it found in the last execution; above capacity() the kernels must not
  // have written them.
  void set_count(std::uint64_t pairs) { count_ = pairs; }

  void poison() override;
  Collected collect() override;
  // The pairs as a multiset by their device digest.
  Collected check_on_device() override;
  Digest reference() const override { return reference_.digest; }
  std::uint64_t bytes_written() const override { return reference_.pairs * 8; }
  std::uint64_t device_bytes() const { return left_->bytes() + right_->bytes(); }

 private:
  Engine& engine_;
  PairsReference reference_;
  std::uint64_t capacity_;
  std::uint64_t count_ = 0;
  std::unique_ptr<DeviceBuffer> left_, right_;
  std::unique_ptr<HostBuffer> host_left_, host_right_;
  std::unique_ptr<std::uint32_t[]> ordered_left_, ordered_right_;  // pairs put in right-row order
  // The reference's pairs in right-row order, laid out when first compared in full: where each right row's
  // pairs begin (one more entry: the pairs), and their left rows, ascending. The comparisons then read the
  // reference in order: looking up each right row's partner set was a cache miss, and a 2^24 x 2^28 join's
  // comparison took about 3 s on an H200 machine's 16 cores.
  struct InRightOrder {
    std::unique_ptr<std::uint32_t[]> begin, left;
  };
  std::optional<InRightOrder> in_right_order_;
  const InRightOrder& in_right_order();
  std::unique_ptr<primitives::DeviceDigest> device_digest_;
  std::optional<std::uint64_t> reference_device_digest_;  // computed when first needed

  // Fills ordered_left_/ordered_right_ from pairs in any order; a non-empty result is the mismatch.
  std::string order_by_right(const std::uint32_t* left, const std::uint32_t* right);
};

}  // namespace varex::harness
