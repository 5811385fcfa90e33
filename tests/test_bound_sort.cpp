// ra_sort, ra_project and ra_reduce on buffers a caller owns (Operator::bind, the runtime library's calls)
// on the OpenCL CPU device: relations laid out here by hand in both layouts (packed tuples, or one column
// after the other), bound, run with the default variant and a few others of each space (programs the
// operators' own tests build too, so PoCL compiles little more), and the result downloaded and compared in
// full with the operators' host references. Also: empty relations, a second execute after the result was
// taken, the workload class, and the bindings that are refused.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "harness/operators/bound_run.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_project/ra_project.hpp"
#include "operators/ra_reduce/ra_reduce.hpp"
#include "operators/ra_sort/ra_sort.hpp"
#include "support.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::find_operator;
}  // namespace varex::operators

namespace varex::operators {
namespace {

using Query = std::map<std::string, std::string>;

// The relation's words as a caller lays them out: aos, tuple i at words [i * width, (i + 1) * width); soa,
// attribute c of tuple i at word c * rows + i.
std::vector<std::uint32_t> laid_out(const datasets::Relation& r, const std::string& layout) {
  std::vector<std::uint32_t> words;
  if (layout == "soa") {
    for (const auto& column : r.columns) words.insert(words.end(), column.begin(), column.end());
  } else {
    for (std::uint64_t i = 0; i < r.rows(); ++i)
      for (const auto& column : r.columns) words.push_back(column[i]);
  }
  return words;
}

// Packed tuples of `width` words as one column after the other.
std::vector<std::uint32_t> to_soa(const std::vector<std::uint32_t>& packed, std::uint32_t width) {
  const std::size_t rows = packed.size() / width;
  std::vector<std::uint32_t> out(packed.size());
  for (std::size_t i = 0; i < rows; ++i)
    for (std::uint32_t c = 0; c < width; ++c) out[c * rows + i] = packed[i * width + c];
  return out;
}

// A device buffer of `bytes` (at least 4) holding `words` at its start.
std::unique_ptr<DeviceBuffer> device_words(const std::vector<std::uint32_t>& words, std::size_t bytes) {
  Engine& engine = test::cpu_engine();
  auto buffer = engine.allocate(std::max<std::size_t>(bytes, 4));
  if (!words.empty()) {
    auto host = engine.allocate_host(words.size() * 4);
    std::copy(words.begin(), words.end(), host->as<std::uint32_t>());
    engine.upload(*buffer, 0, *host, words.size() * 4)->elapsed_ms();
  }
  return buffer;
}

std::vector<std::uint32_t> downloaded(const DeviceBuffer& buffer, std::size_t words) {
  if (words == 0) return {};
  Engine& engine = test::cpu_engine();
  auto host = engine.allocate_host(words * 4);
  engine.download(*host, buffer, words * 4)->elapsed_ms();
  const auto* w = host->as<std::uint32_t>();
  return {w, w + words};
}

Binding sort_binding(const DeviceBuffer& buffer, std::uint64_t rows, const Query& query) {
  return {{&buffer}, {rows}, query};
}

// The variants run: the defaults (aos) and `others` (settings over the defaults) whose layout is the
// relation's; the rest must be refused, naming the layout.
std::vector<variants::Params> variants_for(const Operator& op, std::uint64_t rows, const BoundRun& run,
                                           const std::string& layout, const std::vector<Query>& others) {
  const variants::Space space = op.space({test::cpu_device(), rows});
  std::vector<variants::Params> out;
  for (const Query& settings : others) {
    const variants::Params params = space.with_settings(space.defaults(), settings);
    EXPECT_FALSE(space.violation(params)) << op.name() << " " << testing::PrintToString(settings);
    const std::string refused = run.refuses(params);
    if (variants::get_string(params, "layout") == layout) {
      EXPECT_EQ(refused, "") << op.name() << " " << testing::PrintToString(settings);
      out.push_back(params);
    } else {
      EXPECT_NE(refused.find("layout"), std::string::npos) << op.name() << ": " << refused;
    }
  }
  if (layout == "aos") {
    EXPECT_EQ(run.refuses(space.defaults()), "") << op.name();
    out.push_back(space.defaults());
  } else {
    EXPECT_NE(run.refuses(space.defaults()), "") << op.name() << ": the defaults read aos tuples";
  }
  return out;
}

// Runs `params` on the bound run and downloads the first `words` of the result's single buffer, whose
// rows must be `rows`.
std::vector<std::uint32_t> run_once(BoundRun& run, const variants::Params& params, std::size_t words,
                                    std::uint64_t rows) {
  run.compile(params);
  run.execute(params);
  DeviceResult result = run.take_result();
  EXPECT_EQ(result.rows, rows);
  EXPECT_EQ(result.buffers.size(), 1u);
  if (result.buffers.size() != 1 || !result.buffers[0]) return {};
  EXPECT_GE(result.buffers[0]->bytes(), words * 4);
  return downloaded(*result.buffers[0], words);
}

// Keys from a few values and edge values, so that keys tie and the values decide; values alike.
datasets::Relation tie_relation(std::uint64_t rows, std::uint32_t values, std::uint64_t seed) {
  datasets::Relation r = datasets::generate_relation(rows, values, datasets::KeyDistribution::Dup, seed);
  const std::uint32_t edges[] = {0, 1, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu};
  for (std::uint64_t i = 0; i < rows; ++i) {
    if (i % 3 == 0) r.columns[0][i] = edges[i % 5];
    if (values > 1 && i % 4 == 0) r.columns[1][i] = static_cast<std::uint32_t>(i % 3);
  }
  return r;
}

const std::vector<Query> kSortOthers = {
    {{"algorithm", "radix"}, {"local", "32"}, {"ept", "1"}, {"bits", "4"}, {"skip", "on"}},
    {{"algorithm", "radix"}, {"local", "32"}, {"ept", "1"}, {"bits", "4"}, {"grid", "2"}},
    {{"algorithm", "merge"}, {"layout", "soa"}, {"ept", "8"}},
    {{"algorithm", "radix"}, {"layout", "soa"}, {"local", "32"}, {"ept", "8"}, {"bits", "6"}, {"skip", "on"}},
};

TEST(BoundSort, SortsBothLayoutsLikeTheReference) {
  const Operator& op = find_operator("ra_sort");
  Engine& engine = test::cpu_engine();
  for (const std::string layout : {"aos", "soa"}) {
    for (const auto& [rows, values] : {std::pair<std::uint64_t, std::uint32_t>{1, 1}, {1000, 1}, {2049, 3}}) {
      const datasets::Relation r = tie_relation(rows, values, rows + values);
      const std::uint32_t width = values + 1;
      const auto in = device_words(laid_out(r, layout), rows * width * 4);
      auto run =
          op.bind(engine, sort_binding(*in, rows, {{"values", std::to_string(values)}, {"layout", layout}}));
      std::vector<std::uint32_t> want = sort_reference(r);
      if (layout == "soa") want = to_soa(want, width);
      for (const variants::Params& params : variants_for(op, rows, *run, layout, kSortOthers)) {
        EXPECT_EQ(run_once(*run, params, rows * width, rows), want)
            << layout << " " << rows << " rows, " << values << " values, " << testing::PrintToString(params);
      }
      // The input is the caller's: untouched.
      EXPECT_EQ(downloaded(*in, rows * width), laid_out(r, layout));
    }
  }
}

TEST(BoundSort, ByKeyKeepsEqualKeysInTheCallersOrder) {
  const Operator& op = find_operator("ra_sort");
  Engine& engine = test::cpu_engine();
  const datasets::Relation r = tie_relation(2049, 2, 5);
  const auto in = device_words(laid_out(r, "aos"), 2049 * 3 * 4);
  auto run = op.bind(engine, sort_binding(*in, 2049, {{"values", "2"}, {"by", "key"}}));
  const std::vector<std::uint32_t> want = sort_reference(r, 1);
  ASSERT_NE(want, sort_reference(r));  // equal keys whose values are out of order: the two sorts differ
  for (const variants::Params& params : variants_for(op, 2049, *run, "aos", kSortOthers))
    EXPECT_EQ(run_once(*run, params, 2049 * 3, 2049), want) << testing::PrintToString(params);
  EXPECT_THROW(op.bind(engine, sort_binding(*in, 2049, {{"values", "2"}, {"by", "v0"}})), varex::UsageError);
}

TEST(BoundSort, ANewResultPerExecuteAndAnEmptyRelation) {
  const Operator& op = find_operator("ra_sort");
  Engine& engine = test::cpu_engine();
  const datasets::Relation r = tie_relation(300, 2, 7);
  const auto in = device_words(laid_out(r, "aos"), 300 * 3 * 4);
  auto run = op.bind(engine, sort_binding(*in, 300, {{"values", "2"}}));
  const variants::Params params = op.space({test::cpu_device(), 300}).defaults();
  run->execute(params);
  DeviceResult first = run->take_result();
  run->execute(params);
  DeviceResult second = run->take_result();
  ASSERT_EQ(first.buffers.size(), 1u);
  ASSERT_EQ(second.buffers.size(), 1u);
  ASSERT_TRUE(first.buffers[0] && second.buffers[0]);
  EXPECT_NE(first.buffers[0].get(), second.buffers[0].get());
  EXPECT_EQ(downloaded(*first.buffers[0], 900), sort_reference(r));
  EXPECT_EQ(downloaded(*second.buffers[0], 900), sort_reference(r));

  const auto none = device_words({}, 4);
  for (const char* algorithm : {"merge", "radix"}) {
    auto empty = op.bind(engine, sort_binding(*none, 0, {}));
    const variants::Space space = op.space({test::cpu_device(), 0});
    const variants::Params p = space.with_settings(space.defaults(), {{"algorithm", algorithm}});
    empty->compile(p);
    empty->execute(p);
    const DeviceResult result = empty->take_result();
    EXPECT_EQ(result.rows, 0u) << algorithm;
    EXPECT_EQ(result.kind, OutputKind::Rows);
    EXPECT_EQ(result.buffers.size(), 1u);
  }
}

TEST(BoundProject, KeepsTheAttributesInBothLayouts) {
  const Operator& op = find_operator("ra_project");
  Engine& engine = test::cpu_engine();
  const std::vector<Query> others = {
      {{"ept", "8"}, {"grid", "2"}, {"local", "32"}},
      {{"layout", "soa"}, {"ept", "4"}},
  };
  struct Case {
    std::uint64_t rows;
    std::uint32_t values;
    const char* keep;  // null: the default (key)
    std::vector<std::uint32_t> indices;
  };
  const Case cases[] = {
      {1000, 2, "v1,key", {2, 0}}, {33, 1, nullptr, {0}}, {4099, 3, "v2,v0,key,v1", {3, 1, 0, 2}}};
  for (const std::string layout : {"aos", "soa"}) {
    for (const Case& c : cases) {
      const datasets::Relation r =
          datasets::generate_relation(c.rows, c.values, datasets::KeyDistribution::Uniform, c.rows);
      const auto in = device_words(laid_out(r, layout), c.rows * (c.values + 1) * 4);
      Query query{{"values", std::to_string(c.values)}, {"layout", layout}};
      if (c.keep) query["keep"] = c.keep;
      auto run = op.bind(engine, sort_binding(*in, c.rows, query));
      std::vector<std::uint32_t> want = project_reference(r, c.indices);
      const auto kept = static_cast<std::uint32_t>(c.indices.size());
      if (layout == "soa") want = to_soa(want, kept);
      for (const variants::Params& params : variants_for(op, c.rows, *run, layout, others)) {
        EXPECT_EQ(run_once(*run, params, c.rows * kept, c.rows), want)
            << layout << " " << c.rows << " rows, keep " << (c.keep ? c.keep : "key") << " "
            << testing::PrintToString(params);
      }
    }
  }
  const auto none = device_words({}, 4);
  auto empty = op.bind(engine, sort_binding(*none, 0, {{"keep", "v0,key"}}));
  const variants::Params defaults = op.space({test::cpu_device(), 0}).defaults();
  EXPECT_TRUE(run_once(*empty, defaults, 0, 0).empty());
}

TEST(BoundReduce, SumsEveryFinishAndLayout) {
  const Operator& op = find_operator("ra_reduce");
  Engine& engine = test::cpu_engine();
  // finish=host over several work-groups leaves partial sums the bound run adds up; grid=2 and ept=16 leave
  // few; finish=device adds them on the device.
  const std::vector<Query> others = {
      {{"finish", "device"}},
      {{"grid", "2"}},
      {{"layout", "soa"}, {"ept", "16"}, {"local", "32"}},
      {{"layout", "soa"}, {"ept", "16"}, {"local", "32"}, {"finish", "device"}},
  };
  const char* names[] = {"key", "v0", "v1", "v2"};
  for (const std::string layout : {"aos", "soa"}) {
    for (const auto& [rows, values] : {std::pair<std::uint64_t, std::uint32_t>{1, 1}, {1000, 3}, {4099, 2}}) {
      datasets::Relation r =
          datasets::generate_relation(rows, values, datasets::KeyDistribution::Uniform, rows);
      for (auto& column : r.columns) column[0] = 0xFFFFFFFFu;  // sums beyond 32 bits
      const auto in = device_words(laid_out(r, layout), rows * (values + 1) * 4);
      for (std::uint32_t attribute = 0; attribute <= values; attribute += values) {
        auto run = op.bind(engine, sort_binding(*in, rows,
                                                {{"values", std::to_string(values)},
                                                 {"layout", layout},
                                                 {"attr", names[attribute]}}));
        const std::uint64_t want = reduce_reference(r, attribute);
        for (const variants::Params& params : variants_for(op, rows, *run, layout, others)) {
          const std::vector<std::uint32_t> words = run_once(*run, params, 2, 1);
          ASSERT_EQ(words.size(), 2u);
          EXPECT_EQ(words[0] | std::uint64_t{words[1]} << 32, want)
              << layout << " " << rows << " rows, attr " << names[attribute] << " "
              << testing::PrintToString(params);
        }
      }
    }
  }
  const auto none = device_words({0xDEADBEEFu, 0xDEADBEEFu}, 8);
  auto empty = op.bind(engine, sort_binding(*none, 0, {}));
  const std::vector<std::uint32_t> zero =
      run_once(*empty, op.space({test::cpu_device(), 0}).defaults(), 2, 1);
  EXPECT_EQ(zero, (std::vector<std::uint32_t>{0, 0})) << "the sum of no value";
}

TEST(BoundRelations, WorkloadClassesHaveTheWorkloadsKeysWithoutTheGenerator) {
  Engine& engine = test::cpu_engine();
  const auto in = device_words(std::vector<std::uint32_t>(300, 1), 300 * 4);
  const auto sort = find_operator("ra_sort").bind(engine, sort_binding(*in, 100, {{"values", "2"}}));
  const datasets::WorkloadClass c = sort->workload_class();
  EXPECT_EQ(c.shape.value("values", ""), "2");
  EXPECT_EQ(c.scale.value("rows", 0.0), 100.0);
  EXPECT_FALSE(c.shape.contains("generator"));
  EXPECT_FALSE(c.shape.contains("layout"));

  // The keys a workload of the same query has (datasets::default_class, through the operator).
  for (const auto& [name, query, key] :
       {std::tuple<std::string, Query, std::string>{"ra_project", {{"keep", "v1,key"}}, "keep"},
        {"ra_reduce", {{"attr", "v1"}}, "attr"}}) {
    const Operator& op = find_operator(name);
    WorkloadOptions options;
    options.flags = {{"rows", "100"}, {"values", "2"}};
    options.query = query;
    const datasets::WorkloadClass tuned = op.workload_class(op.workload(options));
    Query bound_query = query;
    bound_query["values"] = "2";
    const datasets::WorkloadClass bound =
        op.bind(engine, sort_binding(*in, 100, bound_query))->workload_class();
    EXPECT_EQ(bound.shape.at(key), tuned.shape.at(key)) << name;
    EXPECT_EQ(bound.shape.at("values"), tuned.shape.at("values")) << name;
    EXPECT_EQ(bound.scale.at("rows"), tuned.scale.at("rows")) << name;
    EXPECT_FALSE(bound.shape.contains("generator")) << name;
  }
}

TEST(BoundRelations, BindingsThatDoNotFitAreRefused) {
  Engine& engine = test::cpu_engine();
  const auto in = device_words(std::vector<std::uint32_t>(64, 1), 64 * 4);
  for (const char* name : {"ra_sort", "ra_project", "ra_reduce"}) {
    const Operator& op = find_operator(name);
    EXPECT_NO_THROW(op.bind(engine, sort_binding(*in, 32, {}))) << name;
    EXPECT_NO_THROW(op.bind(engine, sort_binding(*in, 16, {{"values", "3"}, {"layout", "soa"}}))) << name;
    // Too small for its rows: 33 tuples of 2 words, or 17 of 4.
    EXPECT_THROW(op.bind(engine, sort_binding(*in, 33, {})), UsageError) << name;
    EXPECT_THROW(op.bind(engine, sort_binding(*in, 17, {{"values", "3"}})), UsageError) << name;
    EXPECT_THROW(op.bind(engine, sort_binding(*in, std::uint64_t{1} << 40, {})), UsageError) << name;
    // No input, a null one, two.
    EXPECT_THROW(op.bind(engine, Binding{}), UsageError) << name;
    EXPECT_THROW(op.bind(engine, Binding{{nullptr}, {1}, {}}), UsageError) << name;
    EXPECT_THROW(op.bind(engine, Binding{{in.get(), in.get()}, {1, 1}, {}}), UsageError) << name;
    // Bad query values, and keys the operator does not take.
    EXPECT_THROW(op.bind(engine, sort_binding(*in, 1, {{"values", "0"}})), UsageError) << name;
    EXPECT_THROW(op.bind(engine, sort_binding(*in, 1, {{"values", "4"}})), UsageError) << name;
    EXPECT_THROW(op.bind(engine, sort_binding(*in, 1, {{"values", "two"}})), UsageError) << name;
    EXPECT_THROW(op.bind(engine, sort_binding(*in, 1, {{"layout", "columns"}})), UsageError) << name;
    EXPECT_THROW(op.bind(engine, sort_binding(*in, 1, {{"lo", "1"}})), UsageError) << name;
    // The keys of a call's relation mean nothing to a workload's.
    WorkloadOptions options;
    options.flags = {{"rows", "10"}};
    options.query = {{"layout", "soa"}};
    EXPECT_THROW(op.workload(options), UsageError) << name;
  }
  const Operator& project = find_operator("ra_project");
  EXPECT_THROW(project.bind(engine, sort_binding(*in, 1, {{"keep", "v1"}})), UsageError) << "one value only";
  EXPECT_THROW(project.bind(engine, sort_binding(*in, 1, {{"keep", "key,key"}})), UsageError);
  const Operator& reduce = find_operator("ra_reduce");
  EXPECT_THROW(reduce.bind(engine, sort_binding(*in, 1, {{"attr", "v2"}, {"values", "2"}})), UsageError);
  EXPECT_THROW(reduce.bind(engine, sort_binding(*in, 1, {{"attr", "sum"}})), UsageError);
}

}  // namespace
}  // namespace varex::operators
