#include "operators/user/user_outputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace varex::operators::user {

namespace {

float as_float(std::uint32_t word) {
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

// The digest of the outputs' words, positions counted across the outputs in order.
Digest digest_of(const std::vector<std::vector<std::uint32_t>>& outputs) {
  Digest d;
  for (const auto& words : outputs) {
    for (const std::uint32_t w : words) {
      ++d.rows;
      d.checksum += d.rows * w;
    }
  }
  return d;
}

}  // namespace

bool element_matches(const BufferDecl& output, std::uint32_t got, std::uint32_t want) {
  if (output.type != ElementType::Float32 || got == want) return got == want;
  const double g = as_float(got), w = as_float(want);
  if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
  if (std::isinf(w) || std::isinf(g)) return g == w;
  return std::fabs(g - w) <= output.tolerance * std::max(1.0, std::fabs(w));
}

std::string show_element(const BufferDecl& output, std::uint32_t word) {
  switch (output.type) {
    case ElementType::Int32:
      return std::to_string(static_cast<std::int32_t>(word));
    case ElementType::Uint32:
      return std::to_string(word);
    case ElementType::Float32: {
      std::ostringstream s;
      s.precision(9);
      s << as_float(word);
      return s.str();
    }
  }
  return std::to_string(word);
}

UserOutputs::UserOutputs(Engine& engine, const std::vector<BufferDecl>& outputs,
                         std::vector<std::vector<std::uint32_t>> reference)
    : engine_(engine), outputs_(outputs), reference_(std::move(reference)) {
  reference_digest_ = digest_of(reference_);
  for (const auto& words : reference_) {
    const std::uint64_t bytes = std::max<std::uint64_t>(words.size(), 1) * 4;
    device_.push_back(engine.allocate(bytes));
    host_.push_back(engine.allocate_host(bytes));
  }
}

void UserOutputs::poison() {
  for (auto& b : device_) engine_.fill(*b, harness::kPoisonWord, 0, b->bytes())->elapsed_ms();
}

std::uint64_t UserOutputs::bytes_written() const {
  std::uint64_t bytes = 0;
  for (const auto& words : reference_) bytes += words.size() * 4;
  return bytes;
}

Collected UserOutputs::collect() {
  Collected c;
  std::vector<std::vector<std::uint32_t>> got(reference_.size());
  for (std::size_t o = 0; o < reference_.size(); ++o) {
    got[o].resize(reference_[o].size());
    if (got[o].empty()) continue;
    c.d2h_ms += engine_.download(*host_[o], *device_[o], got[o].size() * 4)->elapsed_ms();
    std::memcpy(got[o].data(), host_[o]->data(), got[o].size() * 4);
    if (!c.mismatch.empty()) continue;
    for (std::size_t i = 0; i < got[o].size(); ++i) {
      if (element_matches(outputs_[o], got[o][i], reference_[o][i])) continue;
      c.mismatch = "output '" + outputs_[o].name + "' element " + std::to_string(i) + ": " +
                   show_element(outputs_[o], got[o][i]) + " where the reference has " +
                   show_element(outputs_[o], reference_[o][i]);
      break;
    }
  }
  c.verified = c.mismatch.empty();
  c.digest = c.verified ? reference_digest_ : digest_of(got);
  return c;
}

}  // namespace varex::operators::user
