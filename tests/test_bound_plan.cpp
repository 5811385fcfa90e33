// The plan on tables a caller owns (Operator::bind, the runtime library's calls) on the OpenCL CPU device:
// every shipped plan's scanned columns laid out as one device buffer each, bound with the plan named in the
// query (plan C also given as its JSON), run step by step and fused, and every output's columns and row
// counts downloaded and compared in full with the plan's host reference. Also: empty tables, the refused
// bindings (a missing column, columns of one table with different rows, no plan), and residency=transferred
// refused.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/errors.hpp"
#include "harness/operators/bound_run.hpp"
#include "operators/plan/plan.hpp"
#include "operators/plan/plan_reference.hpp"
#include "operators/plan/tpch.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

constexpr double kScale = 0.002;

struct PlanTables {
  std::vector<std::unique_ptr<DeviceBuffer>> columns;
  harness::Binding binding;
};

// Each scan step's columns of `data`, in step and schema order, as device buffers.
PlanTables tables_of(const plan::Plan& plan, datasets::TpchData& data, const std::string& query) {
  Engine& engine = test::cpu_engine();
  PlanTables t;
  for (const plan::Step& step : plan.steps) {
    if (step.kind != plan::StepKind::Scan) continue;
    for (const plan::Column& c : step.schema) {
      const std::vector<std::int32_t>& values = data.column(c.name);
      auto buffer = engine.allocate(std::max<std::size_t>(values.size() * 4, 4));
      if (!values.empty()) {
        auto host = engine.allocate_host(values.size() * 4);
        std::copy(values.begin(), values.end(), host->as<std::int32_t>());
        engine.upload(*buffer, 0, *host, values.size() * 4)->elapsed_ms();
      }
      t.binding.inputs.push_back(buffer.get());
      t.binding.rows.push_back(values.size());
      t.columns.push_back(std::move(buffer));
    }
  }
  t.binding.query = {{"plan", query}};
  return t;
}

class BoundPlan : public testing::TestWithParam<std::string> {};

TEST_P(BoundPlan, EveryOutputEqualsTheReferenceFusedAndStepByStep) {
  const PlanOperator op;
  const nlohmann::json doc = plan_document(GetParam());
  const plan::Plan plan = plan::parse_plan(doc, GetParam());
  datasets::TpchData data(kScale, 42);
  const std::vector<plan::HostRelation> want = plan::plan_reference(plan, data);
  // By name; plan C also given as its JSON.
  std::vector<std::string> queries{GetParam()};
  if (GetParam() == "C") queries.push_back(doc.dump());
  for (const std::string& query : queries) {
    PlanTables tables = tables_of(plan, data, query);
    auto bound = op.bind(test::cpu_engine(), tables.binding);
    EXPECT_EQ(bound->fixed().at("residency"), "resident");
    EXPECT_EQ(bound->workload_class().shape.at("plan"), plan.name);
    nlohmann::json shape_query = {{"plan", doc}};
    const variants::Space space = op.space({test::cpu_device(), 0, &shape_query});
    for (const std::string fuse : {"off", "on"}) {
      const variants::Params params =
          space.with_settings(space.defaults(), {{"fuse", fuse}, {"residency", "resident"}});
      harness::DeviceResult result = test::run_bound(*bound, params);
      ASSERT_EQ(result.kind, harness::OutputKind::Rows);
      // Each output's columns, then the outputs' row counts.
      std::size_t columns = 0;
      for (const int o : plan.outputs) columns += plan.steps[static_cast<std::size_t>(o)].schema.size();
      ASSERT_EQ(result.buffers.size(), columns + 1);
      const std::vector<std::uint32_t> rows =
          test::download<std::uint32_t>(test::cpu_engine(), *result.buffers.back(), plan.outputs.size());
      EXPECT_EQ(result.rows, want[static_cast<std::size_t>(plan.outputs[0])].rows);
      std::size_t b = 0;
      for (std::size_t i = 0; i < plan.outputs.size(); ++i) {
        const int o = plan.outputs[i];
        const plan::HostRelation& expected = want[static_cast<std::size_t>(o)];
        ASSERT_EQ(rows[i], expected.rows) << "output " << o << ", fuse " << fuse;
        const auto& schema = plan.steps[static_cast<std::size_t>(o)].schema;
        for (std::size_t c = 0; c < schema.size(); ++c, ++b) {
          std::vector<std::int64_t> got(expected.rows);
          if (schema[c].type.wide) {
            got = test::download<std::int64_t>(test::cpu_engine(), *result.buffers[b], expected.rows);
          } else {
            const auto narrow =
                test::download<std::int32_t>(test::cpu_engine(), *result.buffers[b], expected.rows);
            std::copy(narrow.begin(), narrow.end(), got.begin());
          }
          EXPECT_EQ(got, *expected.columns[c])
              << "output " << o << " column " << schema[c].name << ", fuse " << fuse;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Plans, BoundPlan, testing::ValuesIn(shipped_plans()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

// Tables without rows are tables: every output is empty, its row count 0.
TEST(BoundPlan, EmptyTablesGiveEmptyOutputs) {
  const PlanOperator op;
  const plan::Plan plan = plan::parse_plan(plan_document("C"), "C");
  datasets::TpchData data(kScale, 42);
  PlanTables tables = tables_of(plan, data, "C");
  for (auto& rows : tables.binding.rows) rows = 0;
  auto bound = op.bind(test::cpu_engine(), tables.binding);
  nlohmann::json shape_query = {{"plan", plan_document("C")}};
  const variants::Space space = op.space({test::cpu_device(), 0, &shape_query});
  for (const std::string fuse : {"off", "on"}) {
    const harness::DeviceResult result = test::run_bound(
        *bound, space.with_settings(space.defaults(), {{"fuse", fuse}, {"residency", "resident"}}));
    EXPECT_EQ(result.rows, 0u);
    const auto rows =
        test::download<std::uint32_t>(test::cpu_engine(), *result.buffers.back(), plan.outputs.size());
    for (const std::uint32_t r : rows) EXPECT_EQ(r, 0u) << "fuse " << fuse;
  }
}

TEST(BoundPlan, RefusesBindingsThatAreNotThePlansTablesAndTransfers) {
  const PlanOperator op;
  const plan::Plan plan = plan::parse_plan(plan_document("C"), "C");
  datasets::TpchData data(kScale, 42);
  PlanTables tables = tables_of(plan, data, "C");
  Engine& engine = test::cpu_engine();
  {
    harness::Binding missing = tables.binding;
    missing.inputs.pop_back();
    missing.rows.pop_back();
    EXPECT_THROW(op.bind(engine, missing), UsageError);
  }
  {
    harness::Binding uneven = tables.binding;
    uneven.rows[1] = uneven.rows[0] + 1;
    EXPECT_THROW(op.bind(engine, uneven), UsageError);
  }
  {
    harness::Binding unnamed = tables.binding;
    unnamed.query.clear();
    EXPECT_THROW(op.bind(engine, unnamed), UsageError);
    unnamed.query = {{"plan", "Z"}};
    EXPECT_THROW(op.bind(engine, unnamed), UsageError);
  }
  auto bound = op.bind(engine, tables.binding);
  nlohmann::json shape_query = {{"plan", plan_document("C")}};
  const variants::Space space = op.space({test::cpu_device(), 0, &shape_query});
  EXPECT_NE(bound->refuses(space.with_settings(space.defaults(), {{"residency", "transferred"}})), "");
}

}  // namespace
}  // namespace varex::operators
