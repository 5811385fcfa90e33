#pragma once
// The Rows output kind: dense tuples of 1 to 4 unsigned 32-bit attributes, in a device buffer laid out as
// an array of tuples (AoS: attribute c of tuple i at word i * attributes + c) or as one array per
// attribute (SoA: at word c * capacity + i). The number of tuples is either known beforehand (the
// reference's) or left by the kernels in a 32-bit device counter. Order matters (the default), or the
// output's order is a variant's choice and the tuples are compared as a multiset (ra_join, the set
// operations).
//
// Digest (unsigned 64-bit arithmetic, modulo 2^64): rows = the tuples; checksum = the sum over the tuples
// at 0-based position p of (p + 1) * (a * 1000003 + b), a and b being the tuple's first two attributes
// (b = 0 for one attribute). An output in free order digests its tuples without their position: the sum of
// (a * 1000003 + b) * 1000003 + c, c being the attribute RowOrder::third names (0 where it names none).
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/outputs/output.hpp"
#include "harness/primitives/digest.hpp"

namespace varex::harness {

enum class TupleLayout { Aos, Soa };

// Whether the output's order is part of its result.
struct RowOrder {
  bool free = false;        // the order is a variant's choice: tuples are compared as a multiset
  std::uint32_t third = 0;  // free order: the attribute that is the digest's third term c (0: none, c = 0)

  static RowOrder defined() { return {}; }
  static RowOrder any(std::uint32_t third_attribute = 0) { return {true, third_attribute}; }
};

// The digest of `count` dense AoS tuples of `attributes` words each.
Digest tuple_digest(const std::uint32_t* tuples, std::uint64_t count, std::uint32_t attributes,
                    RowOrder order = RowOrder::defined());

class RowsOutput final : public Output {
 public:
  // `reference`: the expected tuples, dense AoS. `capacity`: the tuples the device buffer holds (at least
  // the reference's). `counted`: the kernels write the count into count_buffer().
  RowsOutput(Engine& engine, std::uint32_t attributes, std::uint64_t capacity,
             std::vector<std::uint32_t> reference, bool counted, RowOrder order = RowOrder::defined());

  DeviceBuffer& tuple_buffer() { return *tuples_; }
  DeviceBuffer& count_buffer() { return *count_; }
  std::uint64_t capacity() const { return capacity_; }
  // How the kernels lay out the result of the next execution (AoS until set).
  void set_layout(TupleLayout layout) { layout_ = layout; }

  void poison() override;
  Collected collect() override;
  // The counted tuples (the count downloaded) by their device digest, with their position where order
  // counts.
  Collected check_on_device() override;
  Digest reference() const override { return reference_digest_; }
  std::uint64_t bytes_written() const override;

 private:
  Engine& engine_;
  std::uint32_t attributes_;
  std::uint64_t capacity_;
  std::vector<std::uint32_t> reference_;
  bool counted_;
  RowOrder order_;
  TupleLayout layout_ = TupleLayout::Aos;
  Digest reference_digest_;
  std::unique_ptr<DeviceBuffer> tuples_;
  std::unique_ptr<DeviceBuffer> count_;
  std::vector<std::unique_ptr<HostBuffer>> host_;  // one per attribute (SoA) or one (AoS)
  std::unique_ptr<HostBuffer> host_count_;
  std::unique_ptr<primitives::DeviceDigest> device_digest_;
  std::optional<std::uint64_t> reference_device_digest_;  // computed when first needed
};

}  // namespace varex::harness
