#include "harness/outputs/rows.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

namespace varex::harness {

namespace {

std::string show(const std::uint32_t* tuple, std::uint32_t attributes) {
  std::string s = "(";
  for (std::uint32_t c = 0; c < attributes; ++c) s += (c ? "," : "") + std::to_string(tuple[c]);
  return s + ")";
}

// The tuples in ascending lexicographic order.
std::vector<std::uint32_t> sorted_tuples(const std::vector<std::uint32_t>& tuples, std::uint32_t attributes) {
  const std::size_t count = tuples.size() / attributes;
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::lexicographical_compare(
        tuples.begin() + x * attributes, tuples.begin() + (x + 1) * attributes,
        tuples.begin() + y * attributes, tuples.begin() + (y + 1) * attributes);
  });
  std::vector<std::uint32_t> out;
  out.reserve(tuples.size());
  for (std::size_t i : order)
    out.insert(out.end(), tuples.begin() + i * attributes, tuples.begin() + (i + 1) * attributes);
  return out;
}

}  // namespace

Digest tuple_digest(const std::uint32_t* tuples, std::uint64_t count, std::uint32_t attributes,
                    RowOrder order) {
  Digest d;
  d.rows = count;
  for (std::uint64_t p = 0; p < count; ++p) {
    const std::uint64_t a = tuples[p * attributes];
    const std::uint64_t b = attributes > 1 ? tuples[p * attributes + 1] : 0;
    if (order.free) {
      const std::uint64_t c = order.third > 0 ? tuples[p * attributes + order.third] : 0;
      d.checksum += (a * 1000003u + b) * 1000003u + c;
    } else {
      d.checksum += (p + 1) * (a * 1000003u + b);
    }
  }
  return d;
}

RowsOutput::RowsOutput(Engine& engine, std::uint32_t attributes, std::uint64_t capacity,
                       std::vector<std::uint32_t> reference, bool counted, RowOrder order)
    : engine_(engine),
      attributes_(attributes),
      capacity_(std::max<std::uint64_t>(capacity, reference.size() / attributes)),
      reference_(order.free ? sorted_tuples(reference, attributes) : std::move(reference)),
      counted_(counted),
      order_(order) {
  if (order.free && order.third >= attributes) throw std::logic_error("RowOrder: no such attribute");
  reference_digest_ = tuple_digest(reference_.data(), reference_.size() / attributes_, attributes_, order_);
  const std::uint64_t words = std::max<std::uint64_t>(capacity_ * attributes_, 1);
  tuples_ = engine.allocate(words * 4);
  count_ = engine.allocate(4);
  host_count_ = engine.allocate_host(4);
  // AoS downloads into the first buffer; SoA into one buffer per attribute.
  for (std::uint32_t c = 0; c < attributes_; ++c) {
    host_.push_back(engine.allocate_host(std::max<std::uint64_t>(c == 0 ? words : capacity_, 1) * 4));
  }
}

void RowsOutput::poison() {
  engine_.fill(*tuples_, kPoisonWord, 0, tuples_->bytes())->elapsed_ms();
  engine_.fill(*count_, kPoisonWord, 0, 4)->elapsed_ms();
}

std::uint64_t RowsOutput::bytes_written() const {
  return reference_.size() * 4 + (counted_ ? 4 : 0);
}

Collected RowsOutput::check_on_device() {
  // A digest over more attributes than the kernel takes as arrays: compared in full.
  if (layout_ == TupleLayout::Soa && attributes_ > 5) return collect();
  const std::uint64_t want = reference_.size() / attributes_;
  if (!reference_device_digest_) {
    using primitives::HostDigest;
    reference_device_digest_ = HostDigest::sum(want, [&](std::uint64_t p) {
      std::uint64_t h = HostDigest::start(order_.free ? 0 : p + 1);
      for (std::uint32_t a = 0; a < attributes_; ++a) h = HostDigest::add(h, reference_[p * attributes_ + a]);
      return h;
    });
  }
  Collected c;
  c.checked = Check::Device;
  std::uint64_t count = want;
  if (counted_) {
    c.d2h_ms += engine_.download(*host_count_, *count_, 4)->elapsed_ms();
    count = *host_count_->as<std::uint32_t>();
    if (count != want) return c;
  }
  if (!device_digest_) device_digest_ = std::make_unique<primitives::DeviceDigest>(engine_);
  const std::uint64_t got = layout_ == TupleLayout::Aos
                                ? device_digest_->columns({{tuples_.get(), attributes_}}, count, !order_.free)
                                : device_digest_->soa(*tuples_, attributes_, capacity_, count, !order_.free);
  c.verified = got == *reference_device_digest_;
  if (c.verified) c.digest = reference_digest_;
  return c;
}

Collected RowsOutput::collect() {
  Collected c;
  const std::uint64_t want = reference_.size() / attributes_;
  std::uint64_t count = want;
  if (counted_) {
    c.d2h_ms += engine_.download(*host_count_, *count_, 4)->elapsed_ms();
    count = *host_count_->as<std::uint32_t>();
    if (count > capacity_) {
      c.digest.rows = count;
      c.mismatch = "the device counted " + std::to_string(count) + " tuples, more than the " +
                   std::to_string(capacity_) + " the output holds (expected " + std::to_string(want) + ")";
      return c;
    }
  }
  std::vector<std::uint32_t> got(count * attributes_);
  if (count > 0) {
    if (layout_ == TupleLayout::Aos) {
      c.d2h_ms += engine_.download(*host_[0], *tuples_, got.size() * 4)->elapsed_ms();
      std::memcpy(got.data(), host_[0]->data(), got.size() * 4);
    } else {
      for (std::uint32_t a = 0; a < attributes_; ++a) {
        c.d2h_ms += engine_.download(*host_[a], *tuples_, count * 4, a * capacity_ * 4)->elapsed_ms();
        const auto* column = host_[a]->as<std::uint32_t>();
        for (std::uint64_t i = 0; i < count; ++i) got[i * attributes_ + a] = column[i];
      }
    }
  }
  if (order_.free) got = sorted_tuples(got, attributes_);
  c.digest = tuple_digest(got.data(), count, attributes_, order_);
  const std::uint64_t common = std::min(count, want);
  for (std::uint64_t p = 0; p < common; ++p) {
    const std::uint32_t* g = got.data() + p * attributes_;
    const std::uint32_t* w = reference_.data() + p * attributes_;
    if (!std::equal(g, g + attributes_, w)) {
      c.mismatch = std::string(order_.free ? "sorted tuple " : "tuple ") + std::to_string(p) + ": expected " +
                   show(w, attributes_) + ", got " + show(g, attributes_);
      return c;
    }
  }
  if (count != want) {
    c.mismatch = std::to_string(count) + " tuples, expected " + std::to_string(want) + " (the first " +
                 std::to_string(common) + " agree)";
    return c;
  }
  c.verified = true;
  return c;
}

}  // namespace varex::harness
