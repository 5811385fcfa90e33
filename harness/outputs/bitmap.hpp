#pragma once
// The bitmap output kind: one bit per input row (bit r%8 of byte r/8), written by the kernels in whole
// 32-bit words. Digest: rows = set bits among the first `rows`, checksum = the sum of their 0-based indices
// modulo 2^64. Bits past the last row are ignored.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/outputs/output.hpp"
#include "harness/primitives/digest.hpp"

namespace varex::harness {

Digest bitmap_digest(const std::uint8_t* bitmap, std::uint64_t rows);
// The first row where two bitmaps of `rows` bits differ, or `rows` when they agree.
std::uint64_t first_bitmap_difference(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t rows);

class BitmapOutput final : public Output {
 public:
  // `reference` holds the host's bits; the device buffer has room for `capacity_bits` (at least `rows`,
  // rounded up to whole words), for kernels that write past the last row into the slack.
  BitmapOutput(Engine& engine, std::uint64_t rows, std::vector<std::uint8_t> reference,
               std::uint64_t capacity_bits = 0);

  DeviceBuffer& buffer() { return *device_; }
  std::uint64_t words() const { return (rows_ + 31) / 32; }
  const std::vector<std::uint8_t>& reference_bits() const { return reference_; }
  // Rows whose bit may go either way (a semi-linear query's dot products within its tolerance of b): set
  // bits here are not compared. The digest stays the device's.
  void set_tolerated(std::vector<std::uint8_t> tolerated) { tolerated_ = std::move(tolerated); }
  // The first row where `bits` (a host bitmap of the rows) differs from the reference outside the tolerated
  // rows, or the row count when they agree: the check collect() makes, for results computed elsewhere (a
  // CPU baseline's).
  std::uint64_t first_difference(const std::uint8_t* bits) const;

  void poison() override;
  Collected collect() override;
  // The whole words by their device digest; the last, partial word downloaded and compared without its
  // slack bits. A bitmap with tolerated rows compares in full.
  Collected check_on_device() override;
  Digest reference() const override { return digest_; }
  std::uint64_t bytes_written() const override { return (rows_ + 7) / 8; }

 private:
  Engine& engine_;
  std::uint64_t rows_;
  std::vector<std::uint8_t> reference_;
  std::vector<std::uint8_t> tolerated_;
  Digest digest_;
  std::unique_ptr<DeviceBuffer> device_;
  std::unique_ptr<HostBuffer> host_;
  std::unique_ptr<primitives::DeviceDigest> device_digest_;
  std::optional<std::uint64_t> reference_words_digest_;  // of the whole words, computed when first needed

  std::uint32_t reference_word(std::uint64_t w) const;
};

}  // namespace varex::harness
