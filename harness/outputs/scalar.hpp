#pragma once
// The Scalar output kind: one unsigned 64-bit value (a sum, modulo 2^64). The kernels leave it either as
// the value itself or as partial sums (one per work-group, say) that collect() adds up on the host, the
// way Red Fox's REDUCE finishes (document 002, alg. 9): set_parts() says how many the last execution left.
//
// Digest: rows = 1, checksum = the value.
#include <cstdint>
#include <memory>

#include "harness/outputs/output.hpp"

namespace varex::harness {

class ScalarOutput final : public Output {
 public:
  // `max_parts`: the most partial sums an execution may leave (the device buffer's 64-bit words).
  ScalarOutput(Engine& engine, std::uint64_t reference, std::uint64_t max_parts);

  DeviceBuffer& buffer() { return *parts_; }
  std::uint64_t max_parts() const { return max_parts_; }
  // The 64-bit words, from the buffer's start, that the next execution leaves (1: the value itself).
  void set_parts(std::uint64_t parts);

  void poison() override;
  Collected collect() override;
  Digest reference() const override { return {1, reference_}; }
  std::uint64_t bytes_written() const override { return 8; }

 private:
  Engine& engine_;
  std::uint64_t reference_;
  std::uint64_t max_parts_;
  std::uint64_t parts_count_ = 1;
  std::unique_ptr<DeviceBuffer> parts_;
  std::unique_ptr<HostBuffer> host_;
};

}  // namespace varex::harness
