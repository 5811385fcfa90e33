#include "harness/outputs/pairs.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>

#include "datasets/int_columns.hpp"

namespace varex::harness {

namespace {

// Chunks of right rows the comparison splits the work into.
constexpr std::uint64_t kChunks = 256;

std::uint64_t pair_digest(std::uint32_t left, std::uint32_t right) {
  return std::uint64_t{left} * 1000003ULL + right;
}

bool right_rows_ascend(const std::uint32_t* right, std::uint64_t pairs) {
  std::atomic<bool> ascend{true};
  datasets::parallel_rows(pairs > 0 ? pairs - 1 : 0, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t t = b; t < e && ascend.load(std::memory_order_relaxed); ++t) {
      if (right[t] > right[t + 1]) ascend = false;
    }
  });
  return ascend;
}

}  // namespace

// The reference in right-row order, in two passes over chunks of right rows: the chunks' pair counts, then
// each row's stretch and its partners copied into it. The arrays are left uninitialised (the threads that
// fill them take their pages), where a vector's zeroing would run on one thread.
const PairsOutput::InRightOrder& PairsOutput::in_right_order() {
  if (in_right_order_) return *in_right_order_;
  const std::uint64_t rights = reference_.right_set.size();
  auto& o = in_right_order_.emplace();
  o.begin.reset(new std::uint32_t[rights + 1]);  // pairs < 2^31: 32-bit positions
  o.left.reset(new std::uint32_t[std::max<std::uint64_t>(reference_.pairs, 1)]);
  const std::uint64_t per = (rights + kChunks - 1) / kChunks;
  std::vector<std::uint64_t> chunk_start(kChunks + 1, 0);
  datasets::parallel_rows(kChunks, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t k = b; k < e; ++k) {
      for (std::uint64_t j = k * per; j < std::min(rights, (k + 1) * per); ++j)
        chunk_start[k + 1] += reference_.partners(j);
    }
  });
  for (std::uint64_t k = 0; k < kChunks; ++k) chunk_start[k + 1] += chunk_start[k];
  datasets::parallel_rows(kChunks, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t k = b; k < e; ++k) {
      std::uint64_t at = chunk_start[k];
      for (std::uint64_t j = k * per; j < std::min(rights, (k + 1) * per); ++j) {
        o.begin[j] = static_cast<std::uint32_t>(at);
        const std::uint32_t s = reference_.right_set[j];
        if (s == PairsReference::kNone) continue;
        const auto first = reference_.rows.begin() + static_cast<std::ptrdiff_t>(reference_.set_begin[s]);
        const auto last = reference_.rows.begin() + static_cast<std::ptrdiff_t>(reference_.set_begin[s + 1]);
        std::copy(first, last, o.left.get() + at);
        at += static_cast<std::uint64_t>(last - first);
      }
    }
  });
  o.begin[rights] = static_cast<std::uint32_t>(reference_.pairs);
  return o;
}

// Pairs in any order into right-row order: each pair is placed in its row's stretch of the reference (a
// counting sort). A right row out of range, or with more pairs than the reference gives it, is a mismatch.
std::string PairsOutput::order_by_right(const std::uint32_t* left, const std::uint32_t* right) {
  const std::uint64_t rights = reference_.right_set.size();
  const std::uint64_t pairs = reference_.pairs;
  const InRightOrder& want = in_right_order();
  std::unique_ptr<std::uint32_t[]> room(new std::uint32_t[rights]);
  datasets::parallel_rows(rights, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t j = b; j < e; ++j) room[j] = want.begin[j + 1] - want.begin[j];
  });
  if (!ordered_left_) {
    ordered_left_.reset(new std::uint32_t[capacity_]);
    ordered_right_.reset(new std::uint32_t[capacity_]);
  }
  std::uint64_t first_bad = UINT64_MAX;
  std::mutex mutex;
  datasets::parallel_rows(pairs, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t t = b; t < e; ++t) {
      const std::uint32_t j = right[t];
      std::uint32_t left_room = 0;
      if (j < rights) left_room = std::atomic_ref<std::uint32_t>(room[j]).fetch_sub(1);
      if (left_room == 0 || left_room > UINT32_MAX / 2) {  // no room left: the count wrapped below zero
        const std::lock_guard<std::mutex> lock(mutex);
        first_bad = std::min<std::uint64_t>(first_bad, t);
        return;
      }
      const std::uint32_t pos = want.begin[j] + left_room - 1;
      ordered_left_[pos] = left[t];
      ordered_right_[pos] = j;
    }
  });
  if (first_bad == UINT64_MAX) return "";
  return "pair " + std::to_string(first_bad) + " names right row " + std::to_string(right[first_bad]) +
         (right[first_bad] < rights ? ", which has fewer pairs" : ", past the input");
}

std::uint64_t PairsReference::partners(std::uint64_t right_row) const {
  const std::uint32_t s = right_set[right_row];
  return s == kNone ? 0 : set_begin[s + 1] - set_begin[s];
}

PairsOutput::PairsOutput(Engine& engine, PairsReference reference)
    : engine_(engine),
      reference_(std::move(reference)),
      capacity_(std::max<std::uint64_t>(reference_.pairs, 1)) {
  left_ = engine.allocate(capacity_ * 4);
  right_ = engine.allocate(capacity_ * 4);
  host_left_ = engine.allocate_host(capacity_ * 4);
  host_right_ = engine.allocate_host(capacity_ * 4);
}

void PairsOutput::poison() {
  engine_.fill(*left_, kPoisonWord, 0, capacity_ * 4)->elapsed_ms();
  engine_.fill(*right_, kPoisonWord, 0, capacity_ * 4)->elapsed_ms();
}

Collected PairsOutput::check_on_device() {
  Collected c;
  c.checked = Check::Device;
  if (count_ != reference_.pairs) return c;
  if (!reference_device_digest_) {
    using primitives::HostDigest;
    // The pairs of each right row: its partners, each beside it.
    reference_device_digest_ = HostDigest::sum(reference_.right_set.size(), [&](std::uint64_t j) {
      const std::uint32_t s = reference_.right_set[j];
      std::uint64_t sum = 0;
      if (s == PairsReference::kNone) return sum;
      for (std::uint64_t t = reference_.set_begin[s]; t < reference_.set_begin[s + 1]; ++t)
        sum += HostDigest::add(HostDigest::add(HostDigest::start(0), reference_.rows[t]),
                               static_cast<std::uint32_t>(j));
      return sum;
    });
  }
  if (!device_digest_) device_digest_ = std::make_unique<primitives::DeviceDigest>(engine_);
  const std::uint64_t got = device_digest_->columns({{left_.get(), 1}, {right_.get(), 1}}, count_, false);
  c.verified = got == *reference_device_digest_;
  if (c.verified) c.digest = reference_.digest;
  return c;
}

Collected PairsOutput::collect() {
  Collected c;
  if (count_ != reference_.pairs) {
    c.mismatch = "the device found " + std::to_string(count_) + " pairs, the reference " +
                 std::to_string(reference_.pairs);
    c.digest.rows = count_;
    return c;
  }
  const std::uint64_t pairs = reference_.pairs;
  if (pairs) {
    c.d2h_ms = engine_.download(*host_left_, *left_, pairs * 4)->elapsed_ms() +
               engine_.download(*host_right_, *right_, pairs * 4)->elapsed_ms();
  }
  const auto* got_left = host_left_->as<std::uint32_t>();
  const auto* got_right = host_right_->as<std::uint32_t>();
  const std::uint64_t rights = reference_.right_set.size();
  if (!right_rows_ascend(got_right, pairs)) {
    c.mismatch = order_by_right(got_left, got_right);
    if (!c.mismatch.empty()) {
      c.digest.rows = pairs;
      return c;
    }
    got_left = ordered_left_.get();
    got_right = ordered_right_.get();
  }

  // Right rows ascend: each right row's pairs lie where the reference in right-row order has its partners,
  // and both are read in order.
  const InRightOrder& want = in_right_order();
  const std::uint64_t per = (rights + kChunks - 1) / kChunks;
  std::vector<std::uint64_t> first_bad(kChunks, UINT64_MAX);
  std::vector<std::uint64_t> checksum(kChunks, 0);
  datasets::parallel_rows(kChunks, [&](std::uint64_t b, std::uint64_t e) {
    std::vector<std::uint32_t> segment;
    for (std::uint64_t k = b; k < e; ++k) {
      for (std::uint64_t j = k * per; j < std::min(rights, (k + 1) * per); ++j) {
        const std::uint64_t at = want.begin[j], count = want.begin[j + 1] - at;
        bool ok = true;
        for (std::uint64_t t = at; t < at + count; ++t) {
          ok = ok && got_right[t] == j;
          checksum[k] += pair_digest(got_left[t], got_right[t]);
        }
        if (count == 1) {
          ok = ok && got_left[at] == want.left[at];
        } else if (count > 1) {
          segment.assign(got_left + at, got_left + at + count);
          std::sort(segment.begin(), segment.end());
          ok = ok && std::equal(segment.begin(), segment.end(), want.left.get() + at);
        }
        if (!ok && first_bad[k] == UINT64_MAX) first_bad[k] = j;
      }
    }
  });
  c.digest.rows = pairs;
  for (std::uint64_t k = 0; k < kChunks; ++k) c.digest.checksum += checksum[k];
  const auto bad = std::min_element(first_bad.begin(), first_bad.end());
  if (*bad != UINT64_MAX) {
    c.mismatch = "the pairs of right row " + std::to_string(*bad) + " differ from the reference";
    return c;
  }
  c.verified = c.digest == reference_.digest;
  if (!c.verified) c.mismatch = "the pairs' checksum differs from the reference";
  return c;
}

}  // namespace varex::harness
