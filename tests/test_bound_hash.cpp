// The hash join and the group-by on an application's own device buffers (Operator::bind): inputs uploaded
// by the test as a caller would hold them, a handful of variants of each space (the plans, the growing
// pairs of the appending plans, host padding, the fused and partitioned aggregations), every result
// downloaded and compared in full with a plain computation or the operator's host reference. Also empty
// inputs, buffers too small for their rows, missing inputs and the workload class a call looks up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/errors.hpp"
#include "harness/operators/bound_run.hpp"
#include "operators/common/hash/hash_columns.hpp"
#include "operators/groupby/groupby.hpp"
#include "operators/hashjoin/hashjoin.hpp"
#include "support.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::DeviceResult;
using harness::find_operator;
using harness::GroupAggregates;
}  // namespace varex::operators

namespace varex::operators {
namespace {

constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();

// A caller's int32 column, exactly as large as its values (4 bytes where there are none).
std::unique_ptr<DeviceBuffer> device_column(Engine& engine, const std::vector<std::int32_t>& values) {
  auto buffer = engine.allocate(std::max<std::size_t>(values.size() * 4, 4));
  if (!values.empty()) {
    auto host = engine.allocate_host(values.size() * 4);
    std::memcpy(host->data(), values.data(), values.size() * 4);
    engine.upload(*buffer, 0, *host, values.size() * 4)->elapsed_ms();
  }
  return buffer;
}

Binding hash_binding(const std::vector<const DeviceBuffer*>& inputs, const std::vector<std::uint64_t>& rows) {
  Binding b;
  b.inputs = inputs;
  b.rows = rows;
  return b;
}

// Two int32 columns as a caller holds them: the join's build and probe sides, the group-by's keys and
// values.
struct Columns {
  std::vector<std::int32_t> first, second;
  std::unique_ptr<DeviceBuffer> first_buffer, second_buffer;

  Columns(Engine& engine, std::vector<std::int32_t> a, std::vector<std::int32_t> b)
      : first(std::move(a)),
        second(std::move(b)),
        first_buffer(device_column(engine, first)),
        second_buffer(device_column(engine, second)) {}
  Binding binding() const {
    return hash_binding({first_buffer.get(), second_buffer.get()}, {first.size(), second.size()});
  }
};

// Binds `columns` to `op` once and runs the variants the settings give, each result checked by `expect`;
// the first variant runs twice, and the second execution must hand over buffers of its own.
void check_variants(const std::string& op_name, const Columns& columns,
                    const std::vector<std::map<std::string, std::string>>& settings,
                    const std::function<void(const DeviceResult&)>& expect) {
  Engine& engine = test::cpu_engine();
  const Operator& op = find_operator(op_name);
  auto run = op.bind(engine, columns.binding());
  const variants::Space space = op.space({engine.device(), columns.first.size()});
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const variants::Params params = space.with_settings(space.defaults(), settings[i]);
    SCOPED_TRACE(variants::describe(params));
    const DeviceResult result = test::run_bound(*run, params);
    expect(result);
    if (i > 0) continue;
    const DeviceResult again = test::run_bound(*run, params);
    EXPECT_NE(again.buffers.at(0).get(), result.buffers.at(0).get());
    expect(again);
  }
}

// Keys from a pool of `pool` values (duplicates; pools of one `pool_seed` share their first values) mixed
// with the extremes, INT_MIN (the table's empty marker) included.
std::vector<std::int32_t> pooled_keys(std::size_t rows, std::size_t pool, std::uint32_t pool_seed,
                                      std::uint32_t seed) {
  std::mt19937 pool_rng(pool_seed);
  std::vector<std::int32_t> values(pool);
  for (auto& v : values) v = static_cast<std::int32_t>(pool_rng());
  const std::int32_t edges[] = {kMin, kMin + 1, -1, 0, 1, kMax - 1, kMax};
  std::mt19937 rng(seed);
  std::vector<std::int32_t> out(rows);
  for (auto& v : out) v = rng() % 6 == 0 ? edges[rng() % 7] : values[rng() % pool];
  return out;
}

// ---- hash join ----

using Pair = std::pair<std::uint32_t, std::uint32_t>;  // (build row, probe row)

std::vector<Pair> brute_pairs(const std::vector<std::int32_t>& build,
                              const std::vector<std::int32_t>& probe) {
  std::multimap<std::int32_t, std::uint32_t> rows;
  for (std::uint32_t i = 0; i < build.size(); ++i) rows.emplace(build[i], i);
  std::vector<Pair> pairs;
  for (std::uint32_t j = 0; j < probe.size(); ++j) {
    const auto [first, last] = rows.equal_range(probe[j]);
    for (auto it = first; it != last; ++it) pairs.emplace_back(it->second, j);
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

void expect_pairs(Engine& engine, const DeviceResult& result, const std::vector<Pair>& want) {
  ASSERT_EQ(result.kind, OutputKind::Pairs);
  ASSERT_EQ(result.buffers.size(), 2u);
  ASSERT_EQ(result.rows, want.size());
  ASSERT_GE(result.buffers[0]->bytes(), want.size() * 4);
  ASSERT_GE(result.buffers[1]->bytes(), want.size() * 4);
  const auto left = test::download<std::uint32_t>(engine, *result.buffers[0], result.rows);
  const auto right = test::download<std::uint32_t>(engine, *result.buffers[1], result.rows);
  std::vector<Pair> got;
  for (std::size_t t = 0; t < left.size(); ++t) got.emplace_back(left[t], right[t]);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
}

void check_join(const Columns& sides, const std::vector<std::map<std::string, std::string>>& settings) {
  const std::vector<Pair> want = brute_pairs(sides.first, sides.second);
  check_variants("hashjoin", sides, settings,
                 [&](const DeviceResult& result) { expect_pairs(test::cpu_engine(), result, want); });
}

TEST(BoundHashJoin, DuplicateKeysAndExtremesOnEveryPlan) {
  // About six build rows per key: more pairs than probe rows, so the appending plans outgrow their first
  // arrays and append again; plan=unique finds the duplicates and falls back to the source's sequence.
  const Columns sides(test::cpu_engine(), pooled_keys(701, 120, 1, 1), pooled_keys(1499, 160, 1, 2));
  ASSERT_GT(brute_pairs(sides.first, sides.second).size(), sides.second.size());
  check_join(
      sides,
      {{{"plan", "partitioned"}, {"radix_bits", "6"}},
       {},
       {{"plan", "unique"}},
       {{"preprocess", "on"}, {"batch", "4"}, {"hash", "murmur"}, {"probing", "linear"}, {"load", "75"}}});
}

TEST(BoundHashJoin, UniqueBuildKeysOnTheSinglePass) {
  const auto columns = datasets::join_columns(1000, 3001, 1000, 0.6, 0.0, 5);
  const Columns sides(test::cpu_engine(), columns.build, columns.probe);
  check_join(sides, {{{"plan", "unique"}},
                     {{"plan", "unique"}, {"append", "item"}, {"grid", "cover"}, {"local", "auto"}},
                     {{"plan", "partitioned"}, {"radix_bits", "9"}}});
}

// ---- group-by ----

void expect_groups(Engine& engine, const DeviceResult& result, const std::vector<std::int32_t>& keys,
                   const GroupReference& want) {
  ASSERT_EQ(result.kind, OutputKind::Groups);
  ASSERT_EQ(result.buffers.size(), 7u);
  ASSERT_EQ(result.rows, want.groups.size());
  const std::uint64_t n = result.rows;
  const auto group_keys = test::download<std::int32_t>(engine, *result.buffers[0], n);
  const auto counts = test::download<std::uint32_t>(engine, *result.buffers[1], n);
  const auto sums = test::download<std::int64_t>(engine, *result.buffers[2], n);
  const auto mins = test::download<std::int32_t>(engine, *result.buffers[3], n);
  const auto maxs = test::download<std::int32_t>(engine, *result.buffers[4], n);
  const auto extents = test::download<std::uint32_t>(engine, *result.buffers[5], n);
  const auto ids = test::download<std::uint32_t>(engine, *result.buffers[6], keys.size());
  std::vector<GroupAggregates> got;
  for (std::uint64_t g = 0; g < n; ++g) {
    got.push_back({group_keys[g], counts[g], sums[g], mins[g], maxs[g]});
    ASSERT_LT(extents[g], keys.size());
    EXPECT_EQ(keys[extents[g]], group_keys[g]) << "the extent of group " << g;
  }
  std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  EXPECT_TRUE(got == want.groups);
  for (std::size_t r = 0; r < keys.size(); ++r) {
    ASSERT_LT(ids[r], n);
    ASSERT_EQ(group_keys[ids[r]], keys[r]) << "the group of row " << r;
  }
}

void check_groups(const Columns& rows, const std::vector<std::map<std::string, std::string>>& settings) {
  const GroupReference want = group_reference(rows.first, rows.second);
  check_variants("groupby", rows, settings, [&](const DeviceResult& result) {
    expect_groups(test::cpu_engine(), result, rows.first, want);
  });
}

TEST(BoundGroupBy, FewGroupsWithExtremesOnSeveralVariants) {
  // A prime row count: host padding leaves slack rows behind the input.
  const Columns rows(test::cpu_engine(), pooled_keys(2003, 40, 6, 6), pooled_keys(2003, 5000, 7, 7));
  check_groups(rows, {{},
                      {{"build", "pessimistic"}, {"extents", "build"}, {"sizing", "sketch"}},
                      {{"padding", "host"}, {"local", "64"}, {"load", "75"}},
                      {{"fuse", "on"}, {"agg", "local"}, {"grid", "32wg"}, {"local", "128"}}});
}

TEST(BoundGroupBy, ManyGroupsPartitioned) {
  const auto columns = datasets::group_columns(3001, 2900, 0.0, 8);
  const Columns rows(test::cpu_engine(), columns.keys, columns.values);
  check_groups(rows,
               {{{"agg", "partitioned"}}, {{"agg", "partitioned"}, {"padding", "host"}, {"local", "32"}}});
}

// ---- both ----

TEST(BoundHash, EmptyInputsGiveEmptyResults) {
  Engine& engine = test::cpu_engine();
  const auto column = device_column(engine, {1, 2, 3});
  const std::vector<std::tuple<std::string, std::vector<std::uint64_t>, OutputKind, std::size_t>> cases{
      {"hashjoin", {0, 3}, OutputKind::Pairs, 2},
      {"hashjoin", {3, 0}, OutputKind::Pairs, 2},
      {"hashjoin", {0, 0}, OutputKind::Pairs, 2},
      {"groupby", {0, 0}, OutputKind::Groups, 7}};
  for (const auto& [name, rows, kind, buffers] : cases) {
    SCOPED_TRACE(name);
    const Operator& op = find_operator(name);
    auto run = op.bind(engine, hash_binding({column.get(), column.get()}, rows));
    const DeviceResult result = test::run_bound(*run, op.space({engine.device(), rows[0]}).defaults());
    EXPECT_EQ(result.kind, kind);
    EXPECT_EQ(result.rows, 0u);
    EXPECT_EQ(result.buffers.size(), buffers);
  }
}

TEST(BoundHash, RefusesBadBindings) {
  Engine& engine = test::cpu_engine();
  const auto column = device_column(engine, std::vector<std::int32_t>(100, 7));
  const DeviceBuffer* c = column.get();
  for (const char* name : {"hashjoin", "groupby"}) {
    SCOPED_TRACE(name);
    const Operator& op = find_operator(name);
    EXPECT_THROW(op.bind(engine, hash_binding({c, c}, {101, 101})), UsageError);        // too small
    EXPECT_THROW(op.bind(engine, hash_binding({c}, {100})), UsageError);                // missing
    EXPECT_THROW(op.bind(engine, hash_binding({c, nullptr}, {100, 100})), UsageError);  // null
    Binding query = hash_binding({c, c}, {100, 100});
    query.query["lo"] = "1";  // neither takes a query
    EXPECT_THROW(op.bind(engine, query), UsageError);
  }
  EXPECT_THROW(find_operator("hashjoin").bind(engine, hash_binding({c, c}, {100, 1ULL << 31})), UsageError);
  EXPECT_THROW(find_operator("groupby").bind(engine, hash_binding({c, c}, {100, 99})),
               UsageError);  // rows differ
}

// The class a call looks its variant up by: the rows it knows, nothing of the data's statistics.
TEST(BoundHash, WorkloadClassIsTheRows) {
  Engine& engine = test::cpu_engine();
  const auto column = device_column(engine, std::vector<std::int32_t>(100, 7));
  const Binding binding = hash_binding({column.get(), column.get()}, {100, 60});
  const datasets::WorkloadClass join = find_operator("hashjoin").bind(engine, binding)->workload_class();
  EXPECT_EQ(join.scale, (nlohmann::json{{"rows", 100}, {"rows2", 60}}));
  EXPECT_EQ(join.shape, nlohmann::json::object());
  const Binding same = hash_binding({column.get(), column.get()}, {100, 100});
  const datasets::WorkloadClass groups = find_operator("groupby").bind(engine, same)->workload_class();
  EXPECT_EQ(groups.scale, (nlohmann::json{{"rows", 100}}));
  EXPECT_EQ(groups.shape, nlohmann::json::object());
}

}  // namespace
}  // namespace varex::operators
