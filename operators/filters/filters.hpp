#pragma once
// Govindaraju's filters (document 004, sec. 4.1-4.4) over records of signed 32-bit attributes, each into a
// bitmap of the rows kept (or only their count): cnf_filter (a conjunction of disjunctions, clause by
// clause as routine 4.3 or fused), range (routine 4.4, one pass) and semilinear (routine 4.2, dot(s, a) op
// b). One runner serves the three; an operator says how its query is read, the expressions the kernels
// evaluate, and what the host reference and the CPU baseline keep.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "operators/common/attributes/attribute_baseline.hpp"
#include "operators/common/attributes/attribute_table.hpp"
#include "operators/common/attributes/attribute_workload.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// range's `compare`: how the kernels test low <= a <= high.
enum class RangeCompare { TwoSided, UnsignedDifference };

// A variant of the filters, decoded once: the launch (AttributeVariant), the operator's own knobs, and the
// operator's defines after the launch's (PRED_FILTER, RANGE_COMPARE). The run appends the query's clauses
// (CLAUSE_i, CLAUSES, KEEP) and their number.
struct AttributeFilterVariant : AttributeVariant {
  AttributeFilterVariant(const variants::Params& params, const DeviceInfo& device);
  bool passes;                          // strategy=passes: one kernel per clause (cnf_filter)
  bool selective_first;                 // order=selective_first: the passes' clauses by selectivity
  bool count_only;                      // output=count: only the rows kept and their indices' sum
  bool ballot;                          // pack=ballot: the mask's words by warp ballots
  std::optional<RangeCompare> compare;  // range's compare (absent for the others)
  std::size_t clauses = 0;              // the query's clauses (the run's decode counts them)
};

class AttributeFilter : public Operator {
 public:
  std::string kernel_family() const override { return "predicates"; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  std::uint64_t default_rows(std::uint64_t cache_rows) const override { return cache_rows / 4; }
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // On an application's records (bind_attributes' layout); the result is the bitmap of the rows kept.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;

  // The query, read and checked (UsageError), as the workload keeps it.
  virtual nlohmann::json parse_query(const std::map<std::string, std::string>& query,
                                     std::uint32_t attributes) const = 0;
  virtual std::vector<QueryKeyDecl> query_keys() const = 0;
  // The conjunction the kernels evaluate, one expression over A(c) per clause, for a variant.
  virtual std::vector<std::string> clauses(const nlohmann::json& query,
                                           const AttributeFilterVariant& variant) const = 0;
  // The host reference: whether row r is kept, and whether it may go either way (`tolerated`).
  using RowReference = std::function<bool(std::uint64_t r, bool& tolerated)>;
  virtual RowReference reference(const nlohmann::json& query,
                                 const datasets::AttributeTable& table) const = 0;
  virtual BlockFilter baseline(const nlohmann::json& query, const datasets::AttributeTable& table) const = 0;
  // The attributes the query reads (the bytes a fused pass must move).
  virtual std::uint32_t attributes_read(const nlohmann::json& query) const = 0;

 protected:
  // The operator's own tunables beside the launch ones.
  virtual std::vector<variants::Tunable> own_tunables() const = 0;
  virtual std::vector<variants::Constraint> own_constraints() const { return {}; }
};

class CnfFilterOperator final : public AttributeFilter {
 public:
  std::string name() const override { return "cnf_filter"; }
  std::string description() const override {
    return "Govindaraju's CNF selection: a conjunction of disjunctions of a op c / a op b over int32 "
           "attributes, clause by clause over a selection mask (routine 4.3) or fused, into a bitmap or a "
           "count";
  }
  nlohmann::json parse_query(const std::map<std::string, std::string>& query,
                             std::uint32_t attributes) const override;
  std::vector<QueryKeyDecl> query_keys() const override;
  std::vector<std::string> clauses(const nlohmann::json& query,
                                   const AttributeFilterVariant& variant) const override;
  RowReference reference(const nlohmann::json& query, const datasets::AttributeTable& table) const override;
  BlockFilter baseline(const nlohmann::json& query, const datasets::AttributeTable& table) const override;
  std::uint32_t attributes_read(const nlohmann::json& query) const override;

 protected:
  std::vector<variants::Tunable> own_tunables() const override;
  std::vector<variants::Constraint> own_constraints() const override;
};

class RangeOperator final : public AttributeFilter {
 public:
  std::string name() const override { return "range"; }
  std::string description() const override {
    return "Govindaraju's range query low <= a <= high in one pass (routine 4.4), two comparisons or one "
           "unsigned difference, into a bitmap or a count";
  }
  nlohmann::json parse_query(const std::map<std::string, std::string>& query,
                             std::uint32_t attributes) const override;
  std::vector<QueryKeyDecl> query_keys() const override;
  std::vector<std::string> clauses(const nlohmann::json& query,
                                   const AttributeFilterVariant& variant) const override;
  RowReference reference(const nlohmann::json& query, const datasets::AttributeTable& table) const override;
  BlockFilter baseline(const nlohmann::json& query, const datasets::AttributeTable& table) const override;
  std::uint32_t attributes_read(const nlohmann::json&) const override { return 1; }

 protected:
  std::vector<variants::Tunable> own_tunables() const override;
};

// Dot products within this share of max(|b|, Σ|s_i a_i|) of b may be classified either way (float
// arithmetic on the device rounds in proportion to the terms, not to b).
constexpr double kSemilinearTolerance = 1e-6;

class SemilinearOperator final : public AttributeFilter {
 public:
  std::string name() const override { return "semilinear"; }
  std::string description() const override {
    return "Govindaraju's semi-linear query dot(s, a) op b over up to four int32 attributes with float "
           "coefficients (routine 4.2), into a bitmap";
  }
  nlohmann::json parse_query(const std::map<std::string, std::string>& query,
                             std::uint32_t attributes) const override;
  std::vector<QueryKeyDecl> query_keys() const override;
  std::vector<std::string> clauses(const nlohmann::json& query,
                                   const AttributeFilterVariant& variant) const override;
  RowReference reference(const nlohmann::json& query, const datasets::AttributeTable& table) const override;
  BlockFilter baseline(const nlohmann::json& query, const datasets::AttributeTable& table) const override;
  std::uint32_t attributes_read(const nlohmann::json& query) const override;

 protected:
  std::vector<variants::Tunable> own_tunables() const override { return {}; }
};

}  // namespace varex::operators
