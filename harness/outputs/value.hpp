#pragma once
// The Value output kind: a result the kernels leave as two unsigned 64-bit words, [0] rows and [1] a
// checksum, compared with the host's digest as they are. Govindaraju's aggregates and k-th largest leave
// (rows aggregated, the result as a signed 64-bit value), and a filter that only counts leaves (rows kept,
// the sum of their indices), both modulo 2^64.
#include <cstdint>
#include <memory>

#include "harness/outputs/output.hpp"

namespace varex::harness {

class ValueOutput final : public Output {
 public:
  ValueOutput(Engine& engine, Digest reference);

  DeviceBuffer& buffer() { return *device_; }

  void poison() override;
  Collected collect() override;
  Digest reference() const override { return reference_; }
  std::uint64_t bytes_written() const override { return 16; }

 private:
  Engine& engine_;
  Digest reference_;
  std::unique_ptr<DeviceBuffer> device_;
  std::unique_ptr<HostBuffer> host_;
};

}  // namespace varex::harness
