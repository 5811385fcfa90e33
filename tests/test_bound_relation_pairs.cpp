// The operators on two relations (ra_intersect, ra_union, ra_difference, ra_join, ra_product) on an
// application's buffers (Operator::bind) on the OpenCL CPU device: both relations uploaded as packed tuples
// (the layout the bound runs take), the default variant and a few others (both algorithms, a fixed grid, the
// product's stores, staging and order) checked in full against the operators' host references, a second
// execute after the result was taken, empty relations, the workload class, and the bindings that are
// refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "harness/operators/bound_run.hpp"
#include "operators/common/relations/relation_pair.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/common/relations/sorted_pairs.hpp"
#include "operators/ra_join/ra_join.hpp"
#include "operators/ra_product/ra_product.hpp"
#include "operators/ra_set/ra_set.hpp"
#include "support.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::find_operator;
}  // namespace varex::operators

namespace varex::operators {
namespace {

using Words = std::vector<std::uint32_t>;

// A relation as packed tuples (AoS: tuple i at words [i * width, (i + 1) * width)).
Words packed(const datasets::Relation& relation) {
  Words words;
  for (std::uint64_t i = 0; i < relation.rows(); ++i) {
    for (const auto& column : relation.columns) words.push_back(column[i]);
  }
  return words;
}

// A relation as one array per attribute, back to back (SoA: attribute c of tuple i at word c * rows + i).
Words columns(const datasets::Relation& relation) {
  Words words;
  for (const auto& column : relation.columns) words.insert(words.end(), column.begin(), column.end());
  return words;
}

// SoA words of `rows` tuples (stride rows) as packed tuples.
Words packed_from_columns(const Words& words, std::uint64_t rows, std::uint32_t width) {
  Words out;
  for (std::uint64_t i = 0; i < rows; ++i) {
    for (std::uint32_t c = 0; c < width; ++c) out.push_back(words.at(c * rows + i));
  }
  return out;
}

// Two relations on the device as the bound runs take them, and their binding (query: values, layout).
struct DevicePair {
  std::unique_ptr<DeviceBuffer> left, right;
  Binding binding;
};

std::unique_ptr<DeviceBuffer> upload(const Words& words) {
  Engine& engine = test::cpu_engine();
  const std::size_t bytes = std::max<std::size_t>(words.size() * 4, 4);
  auto device = engine.allocate(bytes);
  auto host = engine.allocate_host(bytes);
  if (!words.empty()) std::memcpy(host->data(), words.data(), words.size() * 4);
  engine.upload(*device, 0, *host, bytes)->elapsed_ms();
  return device;
}

DevicePair on_device(const datasets::Relation& left, const datasets::Relation& right, std::uint32_t values,
                     TupleLayout layout = TupleLayout::Aos) {
  const bool soa = layout == TupleLayout::Soa;
  DevicePair d;
  d.left = upload(soa ? columns(left) : packed(left));
  d.right = upload(soa ? columns(right) : packed(right));
  d.binding.inputs = {d.left.get(), d.right.get()};
  d.binding.rows = {left.rows(), right.rows()};
  d.binding.query = {{"values", std::to_string(values)}};
  if (soa) d.binding.query["layout"] = "soa";
  return d;
}

// A relation of `values` values and no tuple.
datasets::Relation empty_relation(std::uint32_t values) {
  datasets::Relation r;
  r.columns.assign(values + 1, {});
  return r;
}

// The result's tuples, downloaded.
Words download(const DeviceResult& result, std::uint32_t width) {
  Engine& engine = test::cpu_engine();
  EXPECT_EQ(result.buffers.size(), 1u);
  const std::size_t bytes = result.rows * width * 4;
  EXPECT_GE(result.buffers.at(0)->bytes(), bytes);
  if (bytes == 0) return {};
  auto host = engine.allocate_host(bytes);
  engine.download(*host, *result.buffers[0], bytes)->elapsed_ms();
  const auto* words = host->as<std::uint32_t>();
  return Words(words, words + bytes / 4);
}

// Packed tuples as a sorted list (a multiset, for results whose order is the variant's).
std::vector<Words> multiset(const Words& words, std::uint32_t width) {
  std::vector<Words> tuples;
  for (std::size_t i = 0; i + width <= words.size(); i += width)
    tuples.emplace_back(words.begin() + static_cast<std::ptrdiff_t>(i),
                        words.begin() + static_cast<std::ptrdiff_t>(i + width));
  std::sort(tuples.begin(), tuples.end());
  return tuples;
}

// The space's default (unless `with_default` is false) and the variants `settings` make of it.
std::vector<variants::Params> pair_variants(const Operator& op, std::uint64_t rows,
                                            const std::vector<std::map<std::string, std::string>>& settings,
                                            bool with_default = true) {
  const variants::Space space = op.space({test::cpu_device(), rows});
  std::vector<variants::Params> all;
  if (with_default) all.push_back(space.defaults());
  for (const auto& s : settings) all.push_back(space.with_settings(space.defaults(), s));
  return all;
}

// Runs each variant on one bound run (a result taken after each, so each execute allocates its own) and
// checks the result: its kind, its rows, and its tuples (in `layout`, SoA at a stride of its rows) against
// the packed tuples `want` (as a multiset where `any_order`).
void check_variants(const Operator& op, const DevicePair& d, const std::vector<variants::Params>& all,
                    const Words& want, std::uint32_t width, OutputKind kind, bool any_order,
                    TupleLayout layout = TupleLayout::Aos) {
  const auto run = op.bind(test::cpu_engine(), d.binding);
  for (const variants::Params& params : all) {
    SCOPED_TRACE(op.name() + " " + variants::describe(params));
    ASSERT_EQ(run->refuses(params), "");
    run->compile(params);
    run->execute(params);
    const DeviceResult result = run->take_result();
    EXPECT_EQ(result.kind, kind);
    ASSERT_EQ(result.rows, want.size() / width);
    const Words downloaded = download(result, width);
    const Words got =
        layout == TupleLayout::Soa ? packed_from_columns(downloaded, result.rows, width) : downloaded;
    if (any_order) {
      EXPECT_EQ(multiset(got, width), multiset(want, width));
    } else {
      EXPECT_EQ(got, want);
    }
  }
}

constexpr SetOperation kOperations[] = {SetOperation::Intersection, SetOperation::Union,
                                        SetOperation::Difference};

// Rank (the default) and merge path, each with a fixed grid too, and each compaction: the two programs per
// operation tests/test_ra_set.cpp builds (local 128, ept 4); and a third, an odd share with staged writes.
const std::vector<std::map<std::string, std::string>> kSetVariants{
    {{"grid", "1"}},
    {{"algorithm", "merge_path"}},
    {{"algorithm", "merge_path"}, {"grid", "2"}},
    {{"algorithm", "merge_path"}, {"compaction", "single_pass"}, {"grid", "2"}},
    // An odd share and staged writes, two tiles of 960 merge steps.
    {{"algorithm", "merge_path"},
     {"compaction", "single_pass"},
     {"write", "staged"},
     {"ept", "15"},
     {"local", "64"}},
    {{"compaction", "single_pass"}}};

TEST(BoundRelationPairs, SetOperationsMatchTheReference) {
  // Duplicate tuples on both sides (40 distinct keys), equal keys with other values, keys on one side only.
  const auto [left, right] = datasets::generate_sorted_pair(
      {.rows = 700, .rows2 = 555, .values = 2, .distinct = 40, .match_ratio = 0.7, .seed = 3});
  const DevicePair d = on_device(left, right, 2);
  for (const SetOperation operation : kOperations) {
    const RaSetOperator op(operation);
    const Words want = set_reference(operation, left, right);
    ASSERT_FALSE(want.empty());
    check_variants(op, d, pair_variants(op, left.rows(), kSetVariants), want, 3, OutputKind::RowsMultiset,
                   true);
  }
}

TEST(BoundRelationPairs, SetOperationsOnEmptyRelations) {
  const auto [left, right] = datasets::generate_sorted_pair(
      {.rows = 50, .rows2 = 30, .values = 1, .distinct = 20, .match_ratio = 0.5, .seed = 8});
  const datasets::Relation none = empty_relation(1);
  for (const SetOperation operation : kOperations) {
    const RaSetOperator op(operation);
    for (const auto& [l, r] : {std::pair{&none, &right}, std::pair{&left, &none}, std::pair{&none, &none}}) {
      const DevicePair d = on_device(*l, *r, 1);
      check_variants(op, d, pair_variants(op, l->rows(), kSetVariants), set_reference(operation, *l, *r), 2,
                     OutputKind::RowsMultiset, true);
    }
  }
}

// Partition (the default, and with a fixed grid) and merge path (with a fixed grid too) on packed tuples;
// both on SoA relations. Beside the default, the programs tests/test_ra_join.cpp builds (partitions of 256,
// 2 merge steps per work-item).
const std::vector<std::map<std::string, std::string>> kJoinVariants{
    {{"grid", "1"}, {"local", "32"}},
    {{"algorithm", "merge_path"}, {"ept", "2"}},
    {{"algorithm", "merge_path"}, {"ept", "2"}, {"grid", "2"}}};
const std::vector<std::map<std::string, std::string>> kJoinSoaVariants{
    {{"layout", "soa"}, {"partition", "256"}},
    {{"layout", "soa"}, {"algorithm", "merge_path"}, {"ept", "2"}, {"grid", "1"}}};

TEST(BoundRelationPairs, JoinMatchesTheReferenceInBothLayouts) {
  // Skewed keys: runs of equal keys crossing partitions and work-items on both sides; three values.
  const auto [left, right] = datasets::generate_sorted_pair(
      {.rows = 1500, .rows2 = 900, .values = 3, .distinct = 60, .match_ratio = 0.8, .zipf = 1.1, .seed = 4});
  const RaJoinOperator op;
  const Words want = join_reference(left, right);
  ASSERT_GT(want.size() / 7, left.rows());  // more pairs than left tuples
  check_variants(op, on_device(left, right, 3), pair_variants(op, left.rows(), kJoinVariants), want, 7,
                 OutputKind::RowsMultiset, true);
  check_variants(op, on_device(left, right, 3, TupleLayout::Soa),
                 pair_variants(op, left.rows(), kJoinSoaVariants, false), want, 7, OutputKind::RowsMultiset,
                 true, TupleLayout::Soa);
}

TEST(BoundRelationPairs, JoinWithoutPairsAndOnEmptyRelations) {
  const datasets::Relation none = empty_relation(1);
  const auto [left, right] = datasets::generate_sorted_pair(
      {.rows = 40, .rows2 = 25, .values = 1, .distinct = 40, .match_ratio = 0.0, .seed = 9});
  const RaJoinOperator op;
  ASSERT_TRUE(join_reference(left, right).empty());
  for (const auto& [l, r] : {std::pair{&left, &right}, std::pair{&none, &right}, std::pair{&left, &none},
                             std::pair{&none, &none}}) {
    const DevicePair d = on_device(*l, *r, 1);
    check_variants(op, d, pair_variants(op, l->rows(), {{{"algorithm", "merge_path"}, {"ept", "2"}}}), {}, 3,
                   OutputKind::RowsMultiset, true);
  }
}

// The default (word stores, staged left tuples, left-major), vector stores, and neither staging nor
// left-major order: three programs, work-groups of 32 and 64 and a fixed grid.
const std::vector<std::map<std::string, std::string>> kProductVariants{
    {{"store", "vector"}, {"local", "32"}},
    {{"stage", "none"}, {"order", "right"}, {"ept", "1"}, {"local", "64"}, {"grid", "1"}}};
// SoA: one program, two launches.
const std::vector<std::map<std::string, std::string>> kProductSoaVariants{
    {{"layout", "soa"}}, {{"layout", "soa"}, {"local", "32"}, {"grid", "1"}}};

TEST(BoundRelationPairs, ProductMatchesTheReferenceInOrder) {
  // Unsorted keys, sizes no multiple of the tiles; SoA relations and results too.
  for (const std::uint32_t values : {1u, 2u}) {
    const datasets::Relation left =
        datasets::generate_relation(37, values, datasets::KeyDistribution::Uniform, 1);
    const datasets::Relation right =
        datasets::generate_relation(101, values, datasets::KeyDistribution::Uniform, 2);
    const RaProductOperator op;
    const Words want = product_reference(left, right);
    const std::uint32_t width = 2 * (1 + values);
    check_variants(op, on_device(left, right, values), pair_variants(op, left.rows(), kProductVariants), want,
                   width, OutputKind::Rows, false);
    check_variants(op, on_device(left, right, values, TupleLayout::Soa),
                   pair_variants(op, left.rows(), kProductSoaVariants, false), want, width, OutputKind::Rows,
                   false, TupleLayout::Soa);
  }
}

TEST(BoundRelationPairs, ProductOfAnEmptyRelation) {
  const datasets::Relation left = datasets::generate_relation(5, 1, datasets::KeyDistribution::Uniform, 1);
  const RaProductOperator op;
  for (const bool empty_left : {true, false}) {
    const DevicePair d =
        empty_left ? on_device(empty_relation(1), left, 1) : on_device(left, empty_relation(1), 1);
    check_variants(op, d, pair_variants(op, 5, {}), {}, 4, OutputKind::Rows, false);
  }
}

TEST(BoundRelationPairs, VariantsOfTheOtherLayoutAreRefused) {
  const auto [left, right] = datasets::generate_sorted_pair({.rows = 10, .rows2 = 10, .distinct = 10});
  // SoA variants whose programs the tests above build (executing a refused variant builds it first).
  const std::map<std::string, std::map<std::string, std::string>> kSoa{
      {"ra_join", kJoinSoaVariants[0]}, {"ra_product", kProductSoaVariants[0]}};
  for (const auto& [name, settings] : kSoa) {
    SCOPED_TRACE(name);
    const Operator& op = find_operator(name);
    const variants::Space space = op.space({test::cpu_device(), left.rows()});
    const variants::Params aos = space.defaults();
    const variants::Params soa = space.with_settings(aos, settings);
    const DevicePair packed_pair = on_device(left, right, 1);
    const auto on_aos = op.bind(test::cpu_engine(), packed_pair.binding);
    EXPECT_EQ(on_aos->refuses(aos), "");
    EXPECT_NE(on_aos->refuses(soa), "");
    EXPECT_THROW(on_aos->execute(soa), UsageError);
    const DevicePair column_pair = on_device(left, right, 1, TupleLayout::Soa);
    const auto on_soa = op.bind(test::cpu_engine(), column_pair.binding);
    EXPECT_EQ(on_soa->refuses(soa), "");
    EXPECT_NE(on_soa->refuses(aos), "");
    EXPECT_THROW(on_soa->execute(aos), UsageError);
  }
  // The set operations read packed tuples only.
  const DevicePair column_pair = on_device(left, right, 1, TupleLayout::Soa);
  EXPECT_THROW(RaSetOperator(SetOperation::Union).bind(test::cpu_engine(), column_pair.binding), UsageError);
}

TEST(BoundRelationPairs, TheWorkloadClassIsTheOperatorsWithoutTheGenerator) {
  const auto [left, right] =
      datasets::generate_sorted_pair({.rows = 20, .rows2 = 30, .values = 2, .distinct = 10});
  const DevicePair d = on_device(left, right, 2);
  for (const char* name : {"ra_intersect", "ra_union", "ra_difference", "ra_join", "ra_product"}) {
    SCOPED_TRACE(name);
    const Operator& op = find_operator(name);
    const datasets::WorkloadClass bound = op.bind(test::cpu_engine(), d.binding)->workload_class();
    WorkloadOptions options;
    options.flags = {{"rows", "20"}, {"rows2", "30"}, {"values", "2"}};
    const datasets::WorkloadClass tuned = op.workload_class(op.workload(options));
    EXPECT_FALSE(bound.shape.contains("generator"));
    EXPECT_EQ(bound.shape.at("values"), tuned.shape.at("values"));
    EXPECT_EQ(bound.scale.at("rows"), tuned.scale.at("rows"));
    EXPECT_EQ(bound.scale.at("rows2"), tuned.scale.at("rows2"));
    for (const auto& [key, value] : bound.shape.items()) EXPECT_TRUE(tuned.shape.contains(key)) << key;
    for (const auto& [key, value] : bound.scale.items()) EXPECT_TRUE(tuned.scale.contains(key)) << key;
  }
}

TEST(BoundRelationPairs, BindingsThatDoNotFitAreUsageErrors) {
  const auto [left, right] =
      datasets::generate_sorted_pair({.rows = 20, .rows2 = 30, .values = 2, .distinct = 10});
  const DevicePair d = on_device(left, right, 2);
  Engine& engine = test::cpu_engine();
  for (const char* name : {"ra_intersect", "ra_union", "ra_difference", "ra_join", "ra_product"}) {
    SCOPED_TRACE(name);
    const Operator& op = find_operator(name);
    const auto bind = [&](const Binding& b) { return op.bind(engine, b); };
    EXPECT_NO_THROW(bind(d.binding));

    // Missing and null inputs: the contract (test_contract.cpp).
    Binding too_small = d.binding;
    too_small.query = {{"values", "3"}};  // 4 words per tuple: the buffers hold 3
    EXPECT_THROW(bind(too_small), UsageError);
    Binding more_rows = d.binding;
    more_rows.rows[0] = left.rows() + 1;
    EXPECT_THROW(bind(more_rows), UsageError);
    Binding too_many = d.binding;
    too_many.rows[1] = 1ULL << 31;
    EXPECT_THROW(bind(too_many), UsageError);
    for (const char* values : {"0", "4", "two", ""}) {
      Binding bad = d.binding;
      bad.query = {{"values", values}};
      EXPECT_THROW(bind(bad), UsageError) << values;
    }
    Binding bad_layout = d.binding;
    bad_layout.query["layout"] = "columns";
    EXPECT_THROW(bind(bad_layout), UsageError);
    Binding unknown_key = d.binding;
    unknown_key.query["key"] = "1";
    EXPECT_THROW(bind(unknown_key), UsageError);
    Binding one_value = d.binding;  // values defaults to 1: 2 words per tuple, which the buffers hold
    one_value.query.clear();
    EXPECT_NO_THROW(bind(one_value));

    // A workload takes no query, not even the runtime's key.
    WorkloadOptions options;
    options.flags = {{"rows", "20"}};
    options.query = {{"values", "2"}};
    EXPECT_THROW(op.workload(options), UsageError);
  }
  // A product of more than 2^30 tuples.
  Binding huge = d.binding;
  huge.query.clear();
  huge.rows = {1ULL << 16, 1ULL << 14};
  auto big = engine.allocate((1ULL << 16) * 8);
  huge.inputs = {big.get(), big.get()};
  EXPECT_NO_THROW(RaProductOperator().bind(engine, huge));
  huge.rows = {1ULL << 16, (1ULL << 14) + 1};
  EXPECT_THROW(RaProductOperator().bind(engine, huge), UsageError);
}

}  // namespace
}  // namespace varex::operators
