#pragma once
// Govindaraju's aggregates (document 004, sec. 4.3-4.6) over one signed 32-bit attribute of records, over
// all rows or the rows a `where=` filter keeps: aggregate (COUNT, SUM, AVG, MIN, MAX; SUM directly into 64
// bits or by the paper's bit counting, routine 4.6) and kth_largest (routine 4.5's construction digit by
// digit from the most significant bit, 1 bit per pass as in the paper up to 11 = a radix select). Both
// leave (rows aggregated, the result as a signed 64-bit value) for `run --json`'s rows and checksum.
#include <cstdint>
#include <optional>
#include <string>

#include "operators/common/attributes/attribute_workload.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

enum class AggregateFn { Count, Sum, Avg, Min, Max };

// A variant of the aggregates, decoded once: the launch (AttributeVariant), the operator's own knobs, and
// the operator's defines after the launch's (PRED_AGGREGATE for aggregate, PRED_SELECT). The run appends
// the query's (KEEP, AGG_EXTREMES). kth_largest's sorting variant (impl=cub) runs its own kernels around
// the vendor's sort, so its program is built: `vendor` stays false and `sort` holds impl=cub.
struct AttributeAggregateVariant : AttributeVariant {
  AttributeAggregateVariant(const variants::Params& params, const DeviceInfo& device, bool kth_largest);
  bool bits = false;             // aggregate's method=bits (else direct)
  std::uint32_t sum_bits = 1;    // aggregate's bits per counting pass of method=bits
  std::uint64_t radix_bits = 0;  // kth_largest's bits of the digit one pass decides
  bool sort = false;             // kth_largest's impl=cub: the kept values sorted by the vendor library
};

// What both operators share: the records, the attribute, the filter, the kernels' source.
class AttributeAggregate : public Operator {
 public:
  std::string kernel_family() const override { return "predicates"; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  std::uint64_t default_rows(std::uint64_t cache_rows) const override { return cache_rows / 4; }
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // On an application's records (bind_attributes' layout); the result is one buffer of two 64-bit words:
  // the rows aggregated and the result as a signed 64-bit value (AVG: the sum).
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;
  // The query, read and checked (UsageError) against records of `attributes` (0: any), as the workload
  // keeps it: attr, where, and the operator's own keys.
  nlohmann::json parse_query(const std::map<std::string, std::string>& query, std::uint32_t attributes) const;
  // The checksum as a signed value; AVG's checksum (the sum) divided by the rows.
  std::optional<double> result_value(const datasets::WorkloadSpec& spec, const Digest& digest) const override;

 protected:
  // The operator's own query keys beside attr and where, read into `query` (UsageError).
  virtual std::vector<QueryKeyDecl> own_keys() const = 0;
  virtual void parse_own(const std::map<std::string, std::string>& query, nlohmann::json& out) const = 0;
  virtual std::vector<variants::Tunable> own_tunables(const DeviceInfo& device) const = 0;
  virtual std::vector<variants::Constraint> own_constraints() const { return {}; }
  // Adds the operator's vendor variant (impl=cub) where the device has the library.
  virtual void add_vendor(const DeviceInfo&, std::vector<variants::Tunable>&,
                          std::vector<variants::Inactive>&) const {}
  // Refuses a workload the operator cannot answer at all (UsageError).
  virtual void check(const datasets::WorkloadSpec&) const {}
};

class AggregateOperator final : public AttributeAggregate {
 public:
  std::string name() const override { return "aggregate"; }
  std::string description() const override {
    return "Govindaraju's aggregates: COUNT, SUM, AVG, MIN, MAX of an int32 attribute over all rows or a "
           "filter's; SUM directly (64-bit reduction) or by bit counting (routine 4.6)";
  }
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;

 protected:
  std::vector<QueryKeyDecl> own_keys() const override;
  void parse_own(const std::map<std::string, std::string>& query, nlohmann::json& out) const override;
  std::vector<variants::Tunable> own_tunables(const DeviceInfo& device) const override;
  std::vector<variants::Constraint> own_constraints() const override;
};

class KthLargestOperator final : public AttributeAggregate {
 public:
  std::string name() const override { return "kth_largest"; }
  std::string description() const override {
    return "Govindaraju's k-th largest of an int32 attribute (MIN, MAX, median as special cases) over all "
           "rows or a filter's: digit by digit from the most significant bit (routine 4.5, 1 to 11 bits per "
           "pass) or, on CUDA, CUB's radix sort";
  }
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;

 protected:
  std::vector<QueryKeyDecl> own_keys() const override;
  void parse_own(const std::map<std::string, std::string>& query, nlohmann::json& out) const override;
  std::vector<variants::Tunable> own_tunables(const DeviceInfo& device) const override;
  void check(const datasets::WorkloadSpec& spec) const override;
  void add_vendor(const DeviceInfo& device, std::vector<variants::Tunable>& tunables,
                  std::vector<variants::Inactive>& inactive) const override;
};

AggregateFn aggregate_fn(const nlohmann::json& query);
// k of a kth_largest query over `kept` rows: `k`, or from `quantile` q, k = kept - ceil(q * kept) + 1
// (the value with a share q of the rows at or below it), clamped to 1 .. kept. 0 when no row is kept.
std::uint64_t kth_of(const nlohmann::json& query, std::uint64_t kept);

}  // namespace varex::operators
