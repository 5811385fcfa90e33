#pragma once
// What Govindaraju's operators (cnf_filter, range, semilinear, aggregate, kth_largest; document 004) share:
// the workload flags of a table of signed 32-bit attributes (--input FILE, or --rows/--attributes/--data/
// --seed), the table a workload names, its image on the device (one column after another), the launch
// vocabulary (local, ept, grid) and the kernels' source with the defines of a query.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/variant_run.hpp"
#include "operators/common/attributes/attribute_table.hpp"
#include "operators/common/attributes/cnf.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::LaunchBundle;
}  // namespace varex::operators

namespace varex::operators {

// Kernels index rows with 32-bit integers; keep head room for rounding up to whole tiles.
constexpr std::uint64_t kMaxAttributeRows = (1ULL << 31) - (1ULL << 22);

InputDecl attribute_input();
// --input, --rows, --attributes, --data, --seed.
std::vector<FlagDecl> attribute_flags();
// The generator and its parameters, or the file (read once here; UsageError for a malformed one or one of
// more than kMaxAttributeRows records). The query is left to the operator.
datasets::WorkloadSpec attribute_workload(const std::string& op, const WorkloadOptions& options);
// The table a workload names (the file read again; UsageError when it has changed since).
datasets::AttributeTable materialise_attributes(const datasets::WorkloadSpec& spec);
// Attributes per record (0 for an empty file: any attribute may then be named).
std::uint32_t attribute_count(const datasets::WorkloadSpec& spec);
// "a1" -> 1. UsageError naming `key` for anything else or an attribute the records lack.
std::uint32_t parse_attribute(const std::string& text, std::uint32_t attributes, const std::string& key);
// The `where=` filter of a query (absent: every row), checked against the records' attributes.
Cnf parse_where(const std::map<std::string, std::string>& query, std::uint32_t attributes);
// The filter a workload's query keeps (as parse_where left it; none: every row).
Cnf where_of(const nlohmann::json& query);

// Whether the filter keeps row r: the host reference's own evaluation, row by row.
bool keeps(const Cnf& cnf, const datasets::AttributeTable& table, std::uint64_t r);

// Rows the device image holds per attribute (rows rounded up to whole 32-bit words of a bitmap, at least 32),
// and the image's bytes (every attribute; an empty file's table has kMaxAttributes of no rows).
std::uint64_t attribute_capacity(std::uint64_t rows);
std::uint64_t attribute_image_bytes(const datasets::WorkloadSpec& spec);

// Records on the device as the kernels read them, whoever owns the buffer: attribute c of row r at int32
// word c * stride + r (the columns one after another, `stride` words apart).
struct AttributeColumns {
  const DeviceBuffer* buffer = nullptr;
  std::uint64_t rows = 0;
  std::uint64_t stride = 0;
  std::uint32_t attributes = 0;  // 0: any attribute a query names (an empty file's table, no rows)
  KernelArg rows_arg() const { return KernelArg::of(static_cast<std::uint32_t>(rows)); }
  KernelArg stride_arg() const { return KernelArg::of(static_cast<std::uint64_t>(stride)); }
};

// The table on one device: attribute c of row r at word c * capacity + r (capacity: rows rounded up to 32;
// the slack is zero). An empty file's table has every attribute a query may name, of no rows.
class AttributeInputs {
 public:
  AttributeInputs(Engine& engine, const datasets::AttributeTable& table);
  const DeviceBuffer& buffer() const { return *device_; }
  std::uint64_t rows() const { return rows_; }
  std::uint64_t capacity() const { return capacity_; }
  AttributeColumns columns() const { return {device_.get(), rows_, capacity_, columns_}; }
  double h2d_ms() const { return h2d_ms_; }
  void restore();

 private:
  Engine& engine_;
  std::uint64_t rows_, capacity_, bytes_;
  std::uint32_t columns_;
  std::unique_ptr<HostBuffer> host_;
  std::unique_ptr<DeviceBuffer> device_;
  double h2d_ms_ = 0;
};

// An application's records (the runtime library's binding, input 0 "records"): one buffer of int32 columns
// without padding, attribute c of row r at word c * rows + r. The records have as many attributes as whole
// columns fit the buffer (bytes / (4 rows); slack past the last whole column is ignored); with no rows any
// attribute may be named. UsageError for more than kMaxAttributeRows rows, a buffer that holds no whole
// column of its rows, or one that holds more than kMaxAttributes.
AttributeColumns bind_attributes(const std::string& op, const Binding& binding);
// The class of a bound call, as the operators' workload_class(spec) (datasets::default_class) names the
// tuned workloads': the rows, and each key of the query as the operator parsed it. Nothing the call cannot
// know: no generator, no generated data's shape, no attribute count (slack in the caller's buffer makes
// that a guess, and the kernels' time does not depend on it).
datasets::WorkloadClass bound_attribute_class(std::uint64_t rows, const nlohmann::json& query);

// The launch tunables of these spaces: local (compile-time: sizes the work-group arrays), ept and grid.
std::vector<variants::Tunable> attribute_launch_tunables(const DeviceInfo& device);

// The launch of a variant of these operators, decoded once: local and ept (compile-time), the grid (in
// `launch`), and WG_SIZE and EPT as the first defines. The filters' and the aggregates' bundles derive from
// it and add their own knobs and defines.
struct AttributeVariant : LaunchBundle {
  AttributeVariant(const variants::Params& params, const DeviceInfo& device);
  std::uint64_t local;
  std::uint64_t ept;
  // The variant's launch shape over `rows` rows.
  LaunchShape shape(std::uint64_t rows) const { return launch.rows(rows, ept); }
};

// KEEP = the filter as one expression (absent when it keeps every row).
Defines filter_defines(const Cnf& cnf);

}  // namespace varex::operators
