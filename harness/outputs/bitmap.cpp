#include "harness/outputs/bitmap.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <string>

namespace varex::harness {

Digest bitmap_digest(const std::uint8_t* bitmap, std::uint64_t rows) {
  // Per byte value: how many bits are set and the sum of their positions.
  static const auto table = [] {
    std::array<std::pair<std::uint8_t, std::uint8_t>, 256> t{};
    for (unsigned b = 0; b < 256; ++b) {
      unsigned count = 0, positions = 0;
      for (unsigned i = 0; i < 8; ++i) {
        if (b >> i & 1) {
          ++count;
          positions += i;
        }
      }
      t[b] = {static_cast<std::uint8_t>(count), static_cast<std::uint8_t>(positions)};
    }
    return t;
  }();
  Digest d;
  const std::uint64_t bytes = (rows + 7) / 8;
  for (std::uint64_t i = 0; i < bytes; ++i) {
    std::uint8_t b = bitmap[i];
    if (i == bytes - 1 && rows % 8) b &= static_cast<std::uint8_t>((1u << (rows % 8)) - 1);
    d.rows += table[b].first;
    d.checksum += table[b].first * (i * 8) + table[b].second;
  }
  return d;
}

std::uint64_t first_bitmap_difference(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t rows) {
  for (std::uint64_t i = 0; i < (rows + 7) / 8; ++i) {
    unsigned diff = static_cast<unsigned>(a[i] ^ b[i]);
    if (i == rows / 8) diff &= (1u << (rows % 8)) - 1;  // bits past the last row do not count
    if (diff) return i * 8 + static_cast<std::uint64_t>(std::countr_zero(diff));
  }
  return rows;
}

BitmapOutput::BitmapOutput(Engine& engine, std::uint64_t rows, std::vector<std::uint8_t> reference,
                           std::uint64_t capacity_bits)
    : engine_(engine), rows_(rows), reference_(std::move(reference)) {
  digest_ = bitmap_digest(reference_.data(), rows_);
  // Whole words, and never zero bytes: an empty output still gets a real buffer.
  const std::uint64_t bytes = std::max<std::uint64_t>((std::max(rows_, capacity_bits) + 31) / 32, 1) * 4;
  device_ = engine.allocate(bytes);
  host_ = engine.allocate_host(std::max<std::uint64_t>(words(), 1) * 4);
}

void BitmapOutput::poison() {
  engine_.fill(*device_, kPoisonWord, 0, device_->bytes())->elapsed_ms();
}

std::uint64_t BitmapOutput::first_difference(const std::uint8_t* bits) const {
  if (tolerated_.empty()) return first_bitmap_difference(bits, reference_.data(), rows_);
  // The tolerated rows take the reference's bits.
  std::vector<std::uint8_t> compared(bits, bits + (rows_ + 7) / 8);
  for (std::size_t i = 0; i < compared.size(); ++i) {
    compared[i] = static_cast<std::uint8_t>((compared[i] & ~tolerated_[i]) | (reference_[i] & tolerated_[i]));
  }
  return first_bitmap_difference(compared.data(), reference_.data(), rows_);
}

std::uint32_t BitmapOutput::reference_word(std::uint64_t w) const {
  std::uint32_t word = 0;
  for (std::uint64_t b = 0; b < 4 && w * 4 + b < reference_.size(); ++b)
    word |= std::uint32_t{reference_[w * 4 + b]} << (8 * b);
  return word;
}

Collected BitmapOutput::check_on_device() {
  if (!tolerated_.empty() || rows_ == 0) return collect();
  const std::uint64_t whole = rows_ / 32;
  if (!reference_words_digest_) {
    reference_words_digest_ = primitives::HostDigest::sum(whole, [&](std::uint64_t w) {
      return primitives::HostDigest::add(primitives::HostDigest::start(w + 1), reference_word(w));
    });
  }
  if (!device_digest_) device_digest_ = std::make_unique<primitives::DeviceDigest>(engine_);
  Collected c;
  c.checked = Check::Device;
  bool same =
      device_digest_->columns({{device_.get(), 1}}, whole, /*ordered=*/true) == *reference_words_digest_;
  if (same && rows_ % 32) {
    c.d2h_ms = engine_.download(*host_, *device_, 4, whole * 4)->elapsed_ms();
    const std::uint32_t slack = ~0u << (rows_ % 32);
    same = ((*host_->as<std::uint32_t>() ^ reference_word(whole)) & ~slack) == 0;
  }
  c.verified = same;
  if (same) c.digest = digest_;
  return c;
}

Collected BitmapOutput::collect() {
  Collected c;
  if (rows_ == 0) {
    c.verified = true;
    return c;
  }
  c.d2h_ms = engine_.download(*host_, *device_, (rows_ + 7) / 8)->elapsed_ms();
  const auto* got = host_->as<std::uint8_t>();
  c.digest = bitmap_digest(got, rows_);
  const std::uint64_t row = first_difference(got);
  c.verified = row == rows_;
  if (!c.verified) {
    const int want = reference_[row / 8] >> (row % 8) & 1;
    c.mismatch = "row " + std::to_string(row) + ": expected bit " + std::to_string(want) + ", got " +
                 std::to_string(1 - want);
  }
  return c;
}

}  // namespace varex::harness
