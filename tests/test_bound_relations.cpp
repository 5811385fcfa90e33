// The SELECT family of Red Fox (ra_select, ra_unique, ra_reduce_by_key) on an application's relation
// (Operator::bind, harness/operators/bound_run.hpp): relations uploaded by hand to the OpenCL CPU device in
// either layout, bound, run with the default variant and a few others of each algorithm and layout, and the
// result read back and compared in full with the operator's host reference. Also: an empty relation, the
// binding's errors, variants of the other layout refused, the workload class, and a second execute after a
// result was taken. Variants at the tile's extremes (local 32 and 1024, ept 1 and 8) are the ones the
// operators' own tests compile.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "harness/operators/bound_run.hpp"
#include "operators/common/relations/relation_workload.hpp"
#include "operators/common/relations/relations.hpp"
#include "operators/ra_reduce_by_key/ra_reduce_by_key.hpp"
#include "operators/ra_select/ra_select.hpp"
#include "operators/ra_unique/ra_unique.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

using datasets::KeyDistribution;
using harness::Binding;
using harness::DeviceResult;
using Query = std::map<std::string, std::string>;

// `relation` on the device in `layout` (SoA: its columns back to back, `rows` words each), in a buffer of
// exactly its bytes (4 for an empty one, which the kernels never read).
std::unique_ptr<DeviceBuffer> upload_relation(Engine& engine, const datasets::Relation& relation,
                                              TupleLayout layout) {
  const std::vector<std::uint32_t> image = relation_image(relation, layout, relation.rows());
  const std::size_t bytes = std::max<std::size_t>(image.size() * 4, 4);
  auto host = engine.allocate_host(bytes);
  std::memset(host->data(), 0, bytes);
  if (!image.empty()) std::memcpy(host->data(), image.data(), image.size() * 4);
  auto buffer = engine.allocate(bytes);
  engine.upload(*buffer, 0, *host, bytes)->elapsed_ms();
  return buffer;
}

// A result's tuples as dense AoS: `width` words each; under SoA its columns are `in_rows` words apart.
std::vector<std::uint32_t> download_result(Engine& engine, const DeviceResult& result, std::uint32_t width,
                                           TupleLayout layout, std::uint64_t in_rows) {
  EXPECT_EQ(result.kind, harness::OutputKind::Rows);
  EXPECT_EQ(result.buffers.size(), 1u);
  if (result.rows == 0 || result.buffers.empty()) return {};
  const std::uint64_t words = layout == TupleLayout::Aos ? result.rows * width : in_rows * width;
  auto host = engine.allocate_host(words * 4);
  engine.download(*host, *result.buffers[0], words * 4)->elapsed_ms();
  const auto* w = host->as<std::uint32_t>();
  if (layout == TupleLayout::Aos) return {w, w + words};
  std::vector<std::uint32_t> out;
  for (std::uint64_t i = 0; i < result.rows; ++i) {
    for (std::uint32_t c = 0; c < width; ++c) out.push_back(w[c * in_rows + i]);
  }
  return out;
}

Query with_buffer_keys(Query query, std::uint32_t values, TupleLayout layout) {
  query["values"] = std::to_string(values);
  if (layout == TupleLayout::Soa) query["layout"] = "soa";
  return query;
}

// The default variant and three others (both algorithms, both layouts), each on the relation in the layout
// it reads, compared with `want` (dense AoS tuples of `out_width` words).
void check_variants(const harness::Operator& op, const datasets::Relation& relation, const Query& query,
                    std::uint32_t out_width, const std::vector<std::uint32_t>& want) {
  Engine& engine = test::cpu_engine();
  const variants::Space space = op.space({engine.device(), relation.rows()});
  const std::string own = variants::to_string(space.tunable("algorithm").values.at(1));
  const std::vector<variants::Params> picks{
      space.defaults(),
      space.with_settings(space.defaults(),
                          {{"algorithm", own}, {"local", "32"}, {"ept", "8"}, {"grid", "2"}}),
      space.with_settings(space.defaults(), {{"layout", "soa"}, {"local", "1024"}, {"ept", "1"}}),
      space.with_settings(space.defaults(),
                          {{"algorithm", own}, {"layout", "soa"}, {"local", "32"}, {"ept", "1"}}),
  };
  for (TupleLayout layout : {TupleLayout::Aos, TupleLayout::Soa}) {
    const auto buffer = upload_relation(engine, relation, layout);
    const Binding binding{
        {buffer.get()}, {relation.rows()}, with_buffer_keys(query, relation.values(), layout)};
    const auto run = op.bind(engine, binding);
    for (const variants::Params& params : picks) {
      ASSERT_FALSE(space.violation(params)) << *space.violation(params);
      if (layout_of(params) != layout) {
        EXPECT_FALSE(run->refuses(params).empty()) << variants::describe(params);
        continue;
      }
      EXPECT_EQ(run->refuses(params), "") << variants::describe(params);
      run->compile(params);
      run->execute(params);
      const DeviceResult result = run->take_result();
      EXPECT_EQ(result.rows, want.size() / out_width) << op.name() << " " << variants::describe(params);
      EXPECT_EQ(download_result(engine, result, out_width, layout, relation.rows()), want)
          << op.name() << " " << variants::describe(params);
    }
  }
}

TEST(BoundRelations, SelectKeepsTheTuplesOfTheRangeOnEveryAlgorithmAndLayout) {
  const RaSelectOperator op;
  const auto relation = datasets::generate_relation(2500, 2, KeyDistribution::Uniform, 3);
  const Query query{{"lo", "1000000000"}, {"hi", "3000000000"}, {"hi_inclusive", "false"}};
  const auto want = select_reference(relation, KeyRangeQuery::parse(query));
  ASSERT_GT(want.size(), 0u);
  check_variants(op, relation, query, 3, want);
  // Negated, one value, keys at the bounds.
  datasets::Relation edges;
  edges.columns = {{5, 4, 6, 0, 0xFFFFFFFFu, 5, 7}, {1, 2, 3, 4, 5, 6, 7}};
  const Query outside{{"lo", "5"}, {"hi", "6"}, {"negate", "true"}};
  check_variants(op, edges, outside, 2, select_reference(edges, KeyRangeQuery::parse(outside)));
}

TEST(BoundRelations, UniqueKeepsTheFirstTupleOfEachRunOnEveryAlgorithmAndLayout) {
  const RaUniqueOperator op;
  const auto relation = test::runs_relation(2500, 3, {1, 31, 33, 2, 127, 129, 1025, 3}, 5);
  check_variants(op, relation, {}, 4, unique_reference(relation));
}

TEST(BoundRelations, ReduceByKeySumsEachRunOnEveryAlgorithmAndLayout) {
  const RaReduceByKeyOperator op;
  const auto relation = test::runs_relation(2500, 1, {1, 31, 33, 2, 127, 129, 1025, 3}, 7);
  check_variants(op, relation, {}, 2, reduce_by_key_reference(relation));
  // Two values (only v0 is summed) and keys from a small alphabet.
  const auto alphabet = test::small_alphabet(700, 2, 9);
  check_variants(op, alphabet, {}, 2, reduce_by_key_reference(alphabet));
}

TEST(BoundRelations, AnEmptyRelationGivesAnEmptyResult) {
  Engine& engine = test::cpu_engine();
  datasets::Relation empty;
  empty.columns = {{}, {}};
  const auto buffer = upload_relation(engine, empty, TupleLayout::Aos);
  for (const char* name : {"ra_select", "ra_unique", "ra_reduce_by_key"}) {
    const harness::Operator& op = harness::find_operator(name);
    const variants::Space space = op.space({engine.device(), 0});
    const std::string own = variants::to_string(space.tunable("algorithm").values.at(1));
    const auto run = op.bind(engine, Binding{{buffer.get()}, {0}, {}});
    for (const variants::Params& params :
         {space.defaults(), space.with_settings(space.defaults(), {{"algorithm", own}})}) {
      run->compile(params);
      run->execute(params);
      const DeviceResult result = run->take_result();
      EXPECT_EQ(result.rows, 0u) << name << " " << variants::describe(params);
      EXPECT_EQ(result.buffers.size(), 1u) << name;
    }
  }
}

TEST(BoundRelations, EachExecuteAfterATakenResultWritesANewOne) {
  Engine& engine = test::cpu_engine();
  const RaUniqueOperator op;
  const auto relation = test::runs_relation(300, 1, {3, 1, 40}, 11);
  const auto want = unique_reference(relation);
  const auto buffer = upload_relation(engine, relation, TupleLayout::Aos);
  const auto run = op.bind(engine, Binding{{buffer.get()}, {relation.rows()}, {}});
  const variants::Params params = op.space({engine.device(), relation.rows()}).defaults();
  EXPECT_THROW(run->take_result(), std::logic_error);
  run->execute(params);
  const DeviceResult first = run->take_result();
  EXPECT_THROW(run->take_result(), std::logic_error);
  run->execute(params);
  const DeviceResult second = run->take_result();
  EXPECT_NE(first.buffers[0].get(), second.buffers[0].get());
  EXPECT_EQ(download_result(engine, first, 2, TupleLayout::Aos, relation.rows()), want);
  EXPECT_EQ(download_result(engine, second, 2, TupleLayout::Aos, relation.rows()), want);
}

TEST(BoundRelations, TheWorkloadClassIsWhatTheCallKnows) {
  Engine& engine = test::cpu_engine();
  const auto relation = datasets::generate_relation(100, 3, KeyDistribution::Uniform, 1);
  const auto buffer = upload_relation(engine, relation, TupleLayout::Aos);
  const auto select =
      RaSelectOperator().bind(engine, Binding{{buffer.get()}, {100}, {{"values", "3"}, {"lo", "7"}}});
  const datasets::WorkloadClass c = select->workload_class();
  EXPECT_FALSE(c.shape.contains("generator"));
  EXPECT_FALSE(c.shape.contains("keys"));
  EXPECT_EQ(c.shape.at("values"), "3");
  EXPECT_EQ(c.shape.at("lo"), "7");
  EXPECT_EQ(c.shape.at("negate"), "false");
  EXPECT_EQ(c.scale.at("rows"), 100);
  EXPECT_NEAR(c.scale.at("selectivity").get<double>(), 1.0 - 7.0 / 4294967296.0, 1e-6);

  // The same names as the class of a workload of the operator (less the generator and the keys' statistics).
  harness::WorkloadOptions options;
  options.flags = {{"rows", "100"}, {"values", "3"}};
  options.query = {{"lo", "7"}};
  datasets::WorkloadClass tuned = RaSelectOperator().workload_class(RaSelectOperator().workload(options));
  tuned.shape.erase("generator");
  tuned.shape.erase("keys");
  EXPECT_EQ(tuned.to_json(), c.to_json());

  const auto unique = RaUniqueOperator().bind(engine, Binding{{buffer.get()}, {100}, {{"values", "3"}}});
  EXPECT_EQ(unique->workload_class().to_json(),
            (nlohmann::json{
                {"shape", {{"values", "3"}}}, {"scale", {{"rows", 100}}}, {"kinds", {{"rows", "count"}}}}));
}

TEST(BoundRelations, BindingsThatDoNotFitAreUsageErrors) {
  Engine& engine = test::cpu_engine();
  const auto relation = datasets::generate_relation(100, 1, KeyDistribution::Uniform, 1);
  const auto buffer = upload_relation(engine, relation, TupleLayout::Aos);  // 800 bytes
  for (const char* name : {"ra_select", "ra_unique", "ra_reduce_by_key"}) {
    const harness::Operator& op = harness::find_operator(name);
    EXPECT_NO_THROW(op.bind(engine, Binding{{buffer.get()}, {100}, {}})) << name;
    EXPECT_THROW(op.bind(engine, Binding{{buffer.get()}, {101}, {}}), UsageError) << name;
    EXPECT_THROW(op.bind(engine, Binding{{buffer.get()}, {100}, {{"values", "2"}}}), UsageError) << name;
    EXPECT_THROW(op.bind(engine, Binding{{}, {}, {}}), UsageError) << name;
    EXPECT_THROW(op.bind(engine, Binding{{nullptr}, {100}, {}}), UsageError) << name;
    EXPECT_THROW(op.bind(engine, Binding{{buffer.get()}, {50}, {{"values", "4"}}}), UsageError) << name;
    EXPECT_THROW(op.bind(engine, Binding{{buffer.get()}, {50}, {{"layout", "columns"}}}), UsageError) << name;
    EXPECT_THROW(op.bind(engine, Binding{{buffer.get()}, {50}, {{"no_such_key", "1"}}}), UsageError) << name;
    EXPECT_THROW(op.bind(engine, Binding{{buffer.get()}, {kMaxRelationRows + 1}, {}}), UsageError) << name;
    // The buffer keys are a call's, not a workload's.
    harness::WorkloadOptions options;
    options.flags = {{"rows", "100"}};
    options.query = {{"values", "2"}};
    EXPECT_THROW(op.workload(options), UsageError) << name;
  }
  EXPECT_THROW(RaSelectOperator().bind(engine, Binding{{buffer.get()}, {100}, {{"lo", "-1"}}}), UsageError);
  EXPECT_THROW(RaUniqueOperator().bind(engine, Binding{{buffer.get()}, {100}, {{"lo", "1"}}}), UsageError);
}

}  // namespace
}  // namespace varex::operators
