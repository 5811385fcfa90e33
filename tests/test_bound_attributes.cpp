// Govindaraju's operators (cnf_filter, range, semilinear, aggregate, kth_largest) on an application's own
// device buffers (Operator::bind, the runtime library's calls), on the OpenCL CPU device: records uploaded
// as the caller holds them (one int32 column after another, no padding), a few variants of each space run
// on them, and every result downloaded and compared in full with the filters' own host reference or a plain
// computation here. Also empty records, buffers too small, missing inputs and bad query values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "harness/operators/bound_run.hpp"
#include "operators/aggregates/aggregates.hpp"
#include "operators/common/attributes/attribute_table.hpp"
#include "operators/filters/filters.hpp"
#include "support.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DeviceResult;
using harness::find_operator;
}  // namespace varex::operators

namespace varex::operators {
namespace {

using Table = datasets::AttributeTable;
using Query = std::map<std::string, std::string>;
using Settings = std::map<std::string, std::string>;

// `rows` records of `attributes` attributes: the extremes, small values with many ties, and uniform ones.
Table awkward_records(std::uint64_t rows, std::uint32_t attributes, unsigned seed) {
  std::mt19937 rng(seed);
  const std::int32_t extremes[] = {INT_MIN, INT_MAX, INT_MIN + 1, INT_MAX - 1, 0, -1, 1};
  Table t;
  t.columns.assign(attributes, {});
  for (std::uint64_t r = 0; r < rows; ++r) {
    for (auto& column : t.columns) {
      switch (rng() % 3) {
        case 0:
          column.push_back(extremes[rng() % 7]);
          break;
        case 1:
          column.push_back(static_cast<std::int32_t>(rng() % 21) - 10);
          break;
        default:
          column.push_back(static_cast<std::int32_t>(rng()));
      }
    }
  }
  return t;
}

// The records as the caller holds them: attribute c of row r at word c * rows + r, and `slack` bytes more.
std::unique_ptr<DeviceBuffer> upload(const Table& t, std::size_t slack = 0) {
  Engine& engine = test::cpu_engine();
  const std::size_t bytes = t.rows() * t.attributes() * 4;
  auto host = engine.allocate_host(std::max<std::size_t>(bytes + slack, 4));
  std::memset(host->data(), 0x5a, bytes + slack);
  for (std::uint32_t c = 0; c < t.attributes(); ++c) {
    if (t.rows()) std::memcpy(host->as<std::int32_t>() + c * t.rows(), t.columns[c].data(), t.rows() * 4);
  }
  auto device = engine.allocate(bytes + slack);
  if (bytes + slack) engine.upload(*device, 0, *host, bytes + slack)->elapsed_ms();
  return device;
}

Binding attribute_binding(const DeviceBuffer& records, std::uint64_t rows, const Query& query) {
  return {{&records}, {rows}, query};
}

std::vector<std::uint8_t> download(const DeviceBuffer& buffer) {
  Engine& engine = test::cpu_engine();
  auto host = engine.allocate_host(std::max<std::size_t>(buffer.bytes(), 4));
  if (buffer.bytes()) engine.download(*host, buffer, buffer.bytes())->elapsed_ms();
  const auto* bytes = host->as<std::uint8_t>();
  return {bytes, bytes + buffer.bytes()};
}

// The default variant, then the defaults with each of `settings`.
std::vector<variants::Params> attribute_variants(const Operator& op, std::uint64_t rows,
                                                 const std::vector<Settings>& settings) {
  const variants::Space space = op.space({test::cpu_engine().device(), rows});
  std::vector<variants::Params> out{space.defaults()};
  for (const Settings& s : settings) out.push_back(space.with_settings(space.defaults(), s));
  return out;
}

// ---- the filters ----

// The queries of the filters' tests (a program each, compiled once: the tests share them).
const Query kCnfQuery{{"where", "(a0 < 10 or a1 >= a2) and a3 != 7 and a0 > -5"}};
const Query kRangeQuery{{"attr", "a2"}, {"low", "-5"}, {"high", "2147483647"}};
const Query kSemilinearQuery{{"coef", "0.5,-1"}, {"op", ">"}, {"b", "3"}};

const AttributeFilter& filter(const std::string& name) {
  return dynamic_cast<const AttributeFilter&>(find_operator(name));
}

// Runs the filter's variants on `t` and compares each bitmap, bit by bit, with the operator's own host
// reference (rows it tolerates either way excepted); the bits past the rows must be zero.
void check_filter(const std::string& name, const Table& t, const Query& query,
                  const std::vector<Settings>& settings) {
  const AttributeFilter& op = filter(name);
  const auto records = upload(t);
  const nlohmann::json parsed = op.parse_query(query, t.attributes());
  const AttributeFilter::RowReference keeps_row = op.reference(parsed, t);
  auto run = op.bind(test::cpu_engine(), attribute_binding(*records, t.rows(), query));
  for (const variants::Params& params : attribute_variants(op, t.rows(), settings)) {
    SCOPED_TRACE(name + " " + variants::describe(params));
    const DeviceResult result = test::run_bound(*run, params);
    EXPECT_EQ(result.kind, OutputKind::Bitmap);
    EXPECT_EQ(result.rows, t.rows());
    ASSERT_EQ(result.buffers.size(), 1u);
    const std::vector<std::uint8_t> bits = download(*result.buffers[0]);
    ASSERT_GE(bits.size() * 8, t.rows());
    std::uint64_t wrong = 0;
    for (std::uint64_t r = 0; r < bits.size() * 8; ++r) {
      const bool got = (bits[r / 8] >> (r % 8)) & 1u;
      bool tolerated = false;
      const bool want = r < t.rows() && keeps_row(r, tolerated);
      if (got != want && !tolerated) ++wrong;
    }
    EXPECT_EQ(wrong, 0u);
  }
}

TEST(BoundFilters, CnfFilterEveryStrategyMatchesTheReference) {
  check_filter("cnf_filter", awkward_records(1500, 4, 1), kCnfQuery,
               {{{"strategy", "passes"}},
                {{"strategy", "passes"}, {"order", "selective_first"}},
                {{"grid", "2"}},
                {{"local", "64"}, {"ept", "16"}, {"strategy", "passes"}}});
}

TEST(BoundFilters, RangeBothComparisonsMatchTheReference) {
  check_filter("range", awkward_records(1000, 3, 2), kRangeQuery,
               {{{"compare", "unsigned_difference"}}, {{"grid", "1"}}});
}

TEST(BoundFilters, SemilinearMatchesTheReference) {
  check_filter("semilinear", awkward_records(777, 2, 3), kSemilinearQuery, {{{"grid", "2"}}});
}

TEST(BoundFilters, CountOutputIsRefusedForItWritesNoBitmap) {
  const AttributeFilter& op = filter("range");
  const Table t = awkward_records(100, 3, 4);
  const auto records = upload(t);
  auto run = op.bind(test::cpu_engine(), attribute_binding(*records, t.rows(), kRangeQuery));
  const auto params = attribute_variants(op, t.rows(), {{{"output", "count"}}});
  EXPECT_EQ(run->refuses(params[0]), "");
  EXPECT_NE(run->refuses(params[1]), "");
  EXPECT_THROW(run->execute(params[1]), UsageError);
}

TEST(BoundFilters, EmptyRecordsGiveAnEmptyBitmap) {
  const auto records = test::cpu_engine().allocate(0);
  for (const auto& [name, query] : std::vector<std::pair<std::string, Query>>{
           {"cnf_filter", kCnfQuery}, {"range", kRangeQuery}, {"semilinear", kSemilinearQuery}}) {
    SCOPED_TRACE(name);
    auto run = filter(name).bind(test::cpu_engine(), attribute_binding(*records, 0, query));
    const DeviceResult result = test::run_bound(*run, attribute_variants(filter(name), 0, {})[0]);
    EXPECT_EQ(result.rows, 0u);
    ASSERT_EQ(result.buffers.size(), 1u);
    EXPECT_EQ(result.buffers[0]->bytes(), 0u);
  }
}

TEST(BoundFilters, EachExecuteHandsOverABitmapOfItsOwn) {
  const Table t = awkward_records(300, 3, 5);
  const auto records = upload(t, 8);  // slack past the last whole column is not an attribute
  auto run = filter("range").bind(test::cpu_engine(), attribute_binding(*records, t.rows(), kRangeQuery));
  const variants::Params params = attribute_variants(filter("range"), t.rows(), {})[0];
  const DeviceResult first = test::run_bound(*run, params);
  const DeviceResult second = test::run_bound(*run, params);
  ASSERT_EQ(first.buffers.size(), 1u);
  ASSERT_EQ(second.buffers.size(), 1u);
  EXPECT_NE(first.buffers[0].get(), second.buffers[0].get());
  EXPECT_EQ(download(*first.buffers[0]), download(*second.buffers[0]));
}

// ---- the aggregates ----

struct Scalar {
  std::uint64_t rows = 0;
  std::int64_t value = 0;
  bool operator==(const Scalar&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  return os << s.rows << ", " << s.value;
}

Scalar scalar_of(const DeviceResult& result) {
  EXPECT_EQ(result.kind, OutputKind::Scalar);
  EXPECT_EQ(result.rows, 1u);
  if (result.buffers.size() != 1) return {~0ull, 0};
  const std::vector<std::uint8_t> bytes = download(*result.buffers[0]);
  EXPECT_GE(bytes.size(), 16u);
  Scalar s;
  std::memcpy(&s.rows, bytes.data(), 8);
  std::memcpy(&s.value, bytes.data() + 8, 8);
  return s;
}

// The values of attribute `attr` in the rows `keep` holds.
std::vector<std::int32_t> kept(const Table& t, std::uint32_t attr,
                               const std::function<bool(std::uint64_t)>& keep) {
  std::vector<std::int32_t> out;
  for (std::uint64_t r = 0; r < t.rows(); ++r) {
    if (keep(r)) out.push_back(t.columns[attr][r]);
  }
  return out;
}

// Runs the operator's variants on `t` and compares each result with `want`.
void check_scalar(const std::string& name, const Table& t, const Query& query, const Scalar& want,
                  const std::vector<Settings>& settings) {
  const Operator& op = find_operator(name);
  const auto records = upload(t);
  auto run = op.bind(test::cpu_engine(), attribute_binding(*records, t.rows(), query));
  for (const variants::Params& params : attribute_variants(op, t.rows(), settings)) {
    SCOPED_TRACE(name + " " + nlohmann::json(query).dump() + " " + variants::describe(params));
    EXPECT_EQ(scalar_of(test::run_bound(*run, params)), want);
  }
}

TEST(BoundAggregates, EveryFunctionAndMethodMatchesAPlainComputation) {
  const Table t = awkward_records(1200, 3, 6);
  const std::vector<std::int32_t> values = kept(t, 1, [&](std::uint64_t r) { return t.columns[0][r] >= 0; });
  ASSERT_FALSE(values.empty());
  std::int64_t sum = 0;
  for (std::int32_t v : values) sum += v;
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  const std::map<std::string, std::int64_t> want{{"count", n},
                                                 {"sum", sum},
                                                 {"avg", sum},  // AVG leaves the sum beside the rows
                                                 {"min", *std::min_element(values.begin(), values.end())},
                                                 {"max", *std::max_element(values.begin(), values.end())}};
  for (const auto& [fn, value] : want) {
    check_scalar("aggregate", t, {{"fn", fn}, {"attr", "a1"}, {"where", "a0 >= 0"}}, {values.size(), value},
                 {{{"method", "bits"}}, {{"method", "bits"}, {"sum_bits", "8"}}, {{"grid", "2"}}});
  }
}

TEST(BoundAggregates, KthLargestByKAndByQuantileMatchesASort) {
  const Table t = awkward_records(1100, 3, 7);
  const std::vector<Settings> settings{{{"radix_bits", "1"}}, {{"radix_bits", "11"}}, {{"grid", "2"}}};
  std::vector<std::int32_t> all = t.columns[2];
  std::sort(all.begin(), all.end(), std::greater<>());
  check_scalar("kth_largest", t, {{"attr", "a2"}, {"k", "17"}}, {all.size(), all[16]}, settings);
  // Without a filter the quantile's k comes from the rows; with one, from the rows the device counts.
  const std::uint64_t k = kth_of({{"quantile", 0.3}}, all.size());
  check_scalar("kth_largest", t, {{"attr", "a2"}, {"quantile", "0.3"}}, {all.size(), all[k - 1]}, settings);
  std::vector<std::int32_t> some = kept(t, 2, [&](std::uint64_t r) { return t.columns[1][r] < 0; });
  std::sort(some.begin(), some.end(), std::greater<>());
  const std::uint64_t k_some = kth_of({{"quantile", 0.3}}, some.size());
  check_scalar("kth_largest", t, {{"attr", "a2"}, {"quantile", "0.3"}, {"where", "a1 < 0"}},
               {some.size(), some[k_some - 1]}, settings);
}

TEST(BoundAggregates, EmptyRecordsGiveNoRowsAggregatedAndNoKthLargest) {
  const auto records = test::cpu_engine().allocate(0);
  const Operator& aggregate = find_operator("aggregate");
  auto sum = aggregate.bind(test::cpu_engine(),
                            attribute_binding(*records, 0, {{"fn", "sum"}, {"where", "a0 >= 0"}}));
  EXPECT_EQ(scalar_of(test::run_bound(*sum, attribute_variants(aggregate, 0, {})[0])), (Scalar{0, 0}));
  // No row has a k-th largest: an error that says so (issue 48), not (0, 0).
  const Operator& kth = find_operator("kth_largest");
  for (const Query& query : std::vector<Query>{{{"k", "1"}}, {}}) {
    auto run = kth.bind(test::cpu_engine(), attribute_binding(*records, 0, query));
    try {
      test::run_bound(*run, attribute_variants(kth, 0, {})[0]);
      ADD_FAILURE() << "kth_largest of no row ran";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("no row exists"), std::string::npos) << e.what();
    }
  }
}

// ---- bindings that do not fit ----

TEST(BoundAttributes, BindingsThatDoNotFitAreUsageErrors) {
  Engine& engine = test::cpu_engine();
  const Table t = awkward_records(100, 2, 8);
  const auto records = upload(t);
  const auto small = engine.allocate(399);  // less than one column of 100 rows
  for (const std::string name : {"cnf_filter", "range", "semilinear", "aggregate", "kth_largest"}) {
    SCOPED_TRACE(name);
    const Operator& op = find_operator(name);
    EXPECT_THROW(op.bind(engine, attribute_binding(*small, 100, {})), UsageError);
    EXPECT_THROW(op.bind(engine, Binding{}), UsageError);
    EXPECT_THROW(op.bind(engine, Binding{{nullptr}, {100}, {}}), UsageError);
    EXPECT_THROW(op.bind(engine, attribute_binding(*records, 100, {{"nonsense", "1"}})), UsageError);
    EXPECT_NO_THROW(op.bind(engine, attribute_binding(*records, 100, {})));
  }
  // The buffer holds two whole columns of 100 rows: a2 is past the records.
  EXPECT_THROW(
      find_operator("cnf_filter").bind(engine, attribute_binding(*records, 100, {{"where", "a2 < 1"}})),
      UsageError);
  EXPECT_THROW(find_operator("range").bind(engine, attribute_binding(*records, 100, {{"attr", "a2"}})),
               UsageError);
  EXPECT_THROW(
      find_operator("semilinear").bind(engine, attribute_binding(*records, 100, {{"coef", "1,2,3"}})),
      UsageError);
  EXPECT_THROW(find_operator("aggregate").bind(engine, attribute_binding(*records, 100, {{"fn", "median"}})),
               UsageError);
  EXPECT_THROW(find_operator("kth_largest").bind(engine, attribute_binding(*records, 100, {{"k", "101"}})),
               UsageError);
  EXPECT_THROW(
      find_operator("kth_largest").bind(engine, attribute_binding(*records, 100, {{"quantile", "2"}})),
      UsageError);
  EXPECT_THROW(find_operator("range").bind(engine, attribute_binding(*records, 1ull << 31, {})), UsageError);
}

// The class a bound call has is the tuned workload's without what the call cannot know, so that a
// profile's entries for the same query match it.
TEST(BoundAttributes, WorkloadClassIsTheTunedOnesWithoutTheGenerator) {
  const Table t = awkward_records(64, 4, 9);
  const auto records = upload(t);
  const std::vector<std::pair<std::string, Query>> calls{
      {"cnf_filter", {{"where", "a0 < 3 and a1 >= a2"}}},
      {"range", {{"attr", "a3"}, {"low", "-7"}}},
      {"semilinear", {{"coef", "1.5,-2"}, {"op", "<"}}},
      {"aggregate", {{"fn", "max"}, {"attr", "a1"}, {"where", "a2 != 0"}}},
      {"kth_largest", {{"k", "3"}}}};
  for (const auto& [name, query] : calls) {
    SCOPED_TRACE(name);
    const Operator& op = find_operator(name);
    WorkloadOptions options;
    options.flags = {{"rows", "64"}, {"attributes", "4"}};
    options.query = query;
    const datasets::WorkloadClass tuned = op.workload_class(op.workload(options));
    const datasets::WorkloadClass bound =
        op.bind(test::cpu_engine(), attribute_binding(*records, 64, query))->workload_class();
    EXPECT_EQ(bound.scale.dump(), tuned.scale.dump());
    EXPECT_FALSE(bound.shape.contains("generator"));
    for (const auto& [key, value] : bound.shape.items()) {
      EXPECT_EQ(tuned.shape.value(key, std::string()), value.get<std::string>()) << key;
    }
    for (const auto& [key, value] : tuned.shape.items()) {
      const bool known = key != "generator" && key != "attributes" && key != "data";
      EXPECT_EQ(bound.shape.contains(key), known) << key;
    }
  }
}

}  // namespace
}  // namespace varex::operators
