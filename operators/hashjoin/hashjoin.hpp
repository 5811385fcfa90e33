#pragma once
// Ocelot's hash join of two int32 key columns (document 000, sec. 2.2.2 and 3.2): every pair (build row,
// probe row) with equal keys, duplicates on both sides, probe rows in order.
#include <cstdint>
#include <vector>

#include "harness/operators/operator.hpp"

namespace varex::harness {

// The host reference: the build rows of every distinct key (ascending), and each probe row's key.
struct JoinReference {
  std::vector<std::int32_t> keys;        // distinct build keys
  std::vector<std::uint64_t> key_begin;  // rows of keys[k] are rows[key_begin[k] .. key_begin[k + 1])
  std::vector<std::uint32_t> rows;       // build rows grouped by key
  std::vector<std::uint32_t> probe_key;  // per probe row: index into keys, or KeyIndex::kAbsent
  std::uint64_t pairs = 0;
  Digest digest;  // rows = pairs; checksum = sum of (build_row * 1000003 + probe_row) modulo 2^64

  std::uint64_t partners(std::uint64_t probe_row) const;
};
JoinReference join_reference(const std::vector<std::int32_t>& build, const std::vector<std::int32_t>& probe);

class HashJoinOperator final : public Operator {
 public:
  std::string name() const override { return "hashjoin"; }
  std::string description() const override {
    return "Ocelot's hash join of two int32 key columns into pairs of row ids (build side --input/--rows, "
           "probe side --input2/--rows2)";
  }
  std::string kernel_family() const override { return "hash"; }
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  WorkloadDecl declaration() const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::harness
