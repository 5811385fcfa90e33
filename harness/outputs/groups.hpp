#pragma once
// The Groups output kind: the groups of an aggregation, in any order — per group its key, COUNT, SUM, MIN,
// MAX and its extent (one input row of the group) — and per input row its group id. Every group must be
// the reference's with the same aggregates, each once; every extent must name a row of its key; every
// row's group id must name its key's group. The host learns the number of groups while the kernels run
// and says so with set_count().
//
// Digest (unsigned 64-bit arithmetic, modulo 2^64): rows = the groups; checksum = the sum over the groups
// of key * 1000003 + count + sum, key and sum as signed 64-bit values wrapped.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/outputs/key_index.hpp"
#include "harness/outputs/output.hpp"
#include "harness/primitives/digest.hpp"

namespace varex::harness {

struct GroupAggregates {
  std::int32_t key = 0;
  std::uint32_t count = 0;
  std::int64_t sum = 0;
  std::int32_t min = 0;
  std::int32_t max = 0;
  bool operator==(const GroupAggregates&) const = default;
};

std::uint64_t group_digest(std::int32_t key, std::uint32_t count, std::int64_t sum);

// Every group once, ordered by key, and the digest of them all.
struct GroupReference {
  std::vector<GroupAggregates> groups;
  Digest digest;
};

class GroupsOutput final : public Output {
 public:
  // `row_keys`: the input's keys on the host (`rows` of them), kept by the caller. The device buffers hold
  // `group_capacity` groups and `row_capacity` group ids.
  GroupsOutput(Engine& engine, GroupReference reference, HostBuffer& row_keys, std::uint64_t rows,
               std::uint64_t row_capacity, std::uint64_t group_capacity);

  DeviceBuffer& keys() { return *keys_; }
  DeviceBuffer& counts() { return *counts_; }
  DeviceBuffer& sums() { return *sums_; }  // 64-bit
  DeviceBuffer& mins() { return *mins_; }
  DeviceBuffer& maxs() { return *maxs_; }
  DeviceBuffer& extents() { return *extents_; }
  DeviceBuffer& group_ids() { return *group_ids_; }
  std::uint64_t group_capacity() const { return group_capacity_; }
  // The groups the device says it found in the last execution.
  void set_count(std::uint64_t groups) { count_ = groups; }

  // The input's keys on the device, which lets check_on_device() check the extents there; without them
  // it compares in full.
  void set_device_row_keys(const DeviceBuffer& keys) { device_row_keys_ = &keys; }

  void poison() override;
  Collected collect() override;
  // By three device digests: the groups with their aggregates as a multiset, each row's group's key in row
  // order, and each group's key beside the key of the row its extent names.
  Collected check_on_device() override;
  Digest reference() const override { return reference_.digest; }
  std::uint64_t bytes_written() const override { return rows_ * 4 + reference_.groups.size() * 28; }
  std::uint64_t groups() const { return reference_.groups.size(); }

 private:
  Engine& engine_;
  GroupReference reference_;
  KeyIndex index_;  // reference group of a key
  HostBuffer& row_keys_;
  std::uint64_t rows_, group_capacity_;
  std::uint64_t count_ = 0;
  std::unique_ptr<DeviceBuffer> keys_, counts_, sums_, mins_, maxs_, extents_, group_ids_;
  std::unique_ptr<HostBuffer> host_keys_, host_counts_, host_sums_, host_mins_, host_maxs_, host_extents_,
      host_group_ids_;
  const DeviceBuffer* device_row_keys_ = nullptr;
  std::unique_ptr<primitives::DeviceDigest> device_digest_;
  struct DeviceReference {
    std::uint64_t groups = 0, rows = 0, extents = 0;
  };
  std::optional<DeviceReference> device_reference_;  // computed when first needed
};

}  // namespace varex::harness
