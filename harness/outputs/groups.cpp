#include "harness/outputs/groups.hpp"

#include <algorithm>
#include <mutex>
#include <string>

#include "datasets/int_columns.hpp"

namespace varex::harness {

namespace {

std::vector<std::int32_t> keys_of(const GroupReference& reference) {
  std::vector<std::int32_t> keys;
  keys.reserve(reference.groups.size());
  for (const GroupAggregates& g : reference.groups) keys.push_back(g.key);
  return keys;
}

}  // namespace

std::uint64_t group_digest(std::int32_t key, std::uint32_t count, std::int64_t sum) {
  return static_cast<std::uint64_t>(std::int64_t{key}) * 1000003ULL + count + static_cast<std::uint64_t>(sum);
}

GroupsOutput::GroupsOutput(Engine& engine, GroupReference reference, HostBuffer& row_keys, std::uint64_t rows,
                           std::uint64_t row_capacity, std::uint64_t group_capacity)
    : engine_(engine),
      reference_(std::move(reference)),
      index_(keys_of(reference_)),
      row_keys_(row_keys),
      rows_(rows),
      group_capacity_(group_capacity) {
  for (auto* b : {&keys_, &counts_, &mins_, &maxs_, &extents_}) *b = engine.allocate(group_capacity * 4);
  sums_ = engine.allocate(group_capacity * 8);
  group_ids_ = engine.allocate(row_capacity * 4);
  for (auto* b : {&host_keys_, &host_counts_, &host_mins_, &host_maxs_, &host_extents_})
    *b = engine.allocate_host(group_capacity * 4);
  host_sums_ = engine.allocate_host(group_capacity * 8);
  host_group_ids_ = engine.allocate_host(std::max<std::uint64_t>(rows, 1) * 4);
}

void GroupsOutput::poison() {
  if (rows_) engine_.fill(*group_ids_, kPoisonWord, 0, rows_ * 4)->elapsed_ms();
  for (auto* b : {&keys_, &counts_, &mins_, &maxs_, &extents_, &sums_})
    engine_.fill(**b, kPoisonWord, 0, (*b)->bytes())->elapsed_ms();
}

Collected GroupsOutput::check_on_device() {
  if (!device_row_keys_) return collect();
  using primitives::HostDigest;
  const std::uint64_t groups = reference_.groups.size();
  if (!device_reference_) {
    DeviceReference d;
    for (const GroupAggregates& g : reference_.groups) {
      const auto sum = static_cast<std::uint64_t>(g.sum);
      std::uint64_t h = HostDigest::add(HostDigest::start(0), static_cast<std::uint32_t>(g.key));
      h = HostDigest::add(h, g.count);
      h = HostDigest::add(HostDigest::add(h, static_cast<std::uint32_t>(sum)),
                          static_cast<std::uint32_t>(sum >> 32));
      h = HostDigest::add(HostDigest::add(h, static_cast<std::uint32_t>(g.min)),
                          static_cast<std::uint32_t>(g.max));
      d.groups += h;
      const std::uint64_t key = HostDigest::add(HostDigest::start(0), static_cast<std::uint32_t>(g.key));
      d.extents += HostDigest::add(key, static_cast<std::uint32_t>(g.key));
    }
    const auto* row_keys = row_keys_.as<std::uint32_t>();
    d.rows = HostDigest::sum(
        rows_, [&](std::uint64_t r) { return HostDigest::add(HostDigest::start(r + 1), row_keys[r]); });
    device_reference_ = d;
  }
  Collected c;
  c.checked = Check::Device;
  c.digest.rows = count_;
  if (count_ != groups) return c;
  if (!device_digest_) device_digest_ = std::make_unique<primitives::DeviceDigest>(engine_);
  primitives::DeviceDigest& digest = *device_digest_;
  c.verified =
      digest.columns(
          {{keys_.get(), 1}, {counts_.get(), 1}, {sums_.get(), 2}, {mins_.get(), 1}, {maxs_.get(), 1}},
          groups, false) == device_reference_->groups &&
      digest.gather(*group_ids_, *keys_, groups, nullptr, rows_, true) == device_reference_->rows &&
      digest.gather(*extents_, *device_row_keys_, rows_, keys_.get(), groups, false) ==
          device_reference_->extents;
  if (c.verified) c.digest = reference_.digest;
  return c;
}

Collected GroupsOutput::collect() {
  Collected c;
  const std::uint64_t groups = reference_.groups.size();
  c.digest.rows = count_;
  if (count_ != groups) {
    c.mismatch =
        "the device found " + std::to_string(count_) + " groups, the reference " + std::to_string(groups);
    return c;
  }
  double ms = 0;
  if (rows_) ms += engine_.download(*host_group_ids_, *group_ids_, rows_ * 4)->elapsed_ms();
  if (groups) {
    const auto fetch = [&](HostBuffer& host, const DeviceBuffer& device, std::size_t width) {
      ms += engine_.download(host, device, groups * width)->elapsed_ms();
    };
    fetch(*host_keys_, *keys_, 4);
    fetch(*host_counts_, *counts_, 4);
    fetch(*host_sums_, *sums_, 8);
    fetch(*host_mins_, *mins_, 4);
    fetch(*host_maxs_, *maxs_, 4);
    fetch(*host_extents_, *extents_, 4);
  }
  c.d2h_ms = ms;
  const auto* keys = host_keys_->as<std::int32_t>();
  const auto* counts = host_counts_->as<std::uint32_t>();
  const auto* sums = host_sums_->as<std::int64_t>();
  const auto* mins = host_mins_->as<std::int32_t>();
  const auto* maxs = host_maxs_->as<std::int32_t>();
  const auto* extents = host_extents_->as<std::uint32_t>();
  const auto* row_keys = row_keys_.as<std::int32_t>();
  std::vector<bool> seen(groups, false);
  for (std::uint64_t g = 0; g < groups; ++g) {
    c.digest.checksum += group_digest(keys[g], counts[g], sums[g]);
    const std::uint32_t r = index_.find(keys[g]);
    const GroupAggregates got{keys[g], counts[g], sums[g], mins[g], maxs[g]};
    if (c.mismatch.empty()) {
      if (r == KeyIndex::kAbsent || seen[r]) {
        c.mismatch =
            "group " + std::to_string(g) + " has key " + std::to_string(keys[g]) +
            (r == KeyIndex::kAbsent ? ", which is no key of the input" : ", which another group has too");
      } else if (!(got == reference_.groups[r])) {
        c.mismatch = "the aggregates of key " + std::to_string(keys[g]) + " differ from the reference";
      } else if (extents[g] >= rows_ || row_keys[extents[g]] != keys[g]) {
        c.mismatch = "the extents table names no row of key " + std::to_string(keys[g]);
      }
    }
    if (r != KeyIndex::kAbsent) seen[r] = true;
  }
  if (!c.mismatch.empty()) return c;
  const auto* ids = host_group_ids_->as<std::uint32_t>();
  std::vector<std::uint64_t> bad_rows;
  std::mutex mutex;
  datasets::parallel_rows(rows_, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) {
      if (ids[i] >= groups || keys[ids[i]] != row_keys[i]) {
        const std::lock_guard<std::mutex> lock(mutex);
        bad_rows.push_back(i);
        return;
      }
    }
  });
  if (!bad_rows.empty()) {
    const std::uint64_t i = *std::min_element(bad_rows.begin(), bad_rows.end());
    c.mismatch =
        "row " + std::to_string(i) + " has group id " + std::to_string(ids[i]) + ", not its key's group";
    return c;
  }
  c.verified = c.digest == reference_.digest;
  if (!c.verified) c.mismatch = "the groups' checksum differs from the reference";
  return c;
}

}  // namespace varex::harness
