// Plans: the TPC-H generator against the specification's rules, the plan file's refusals (unknown operator,
// cycle, type mismatch: exit status 2 through the command line), and every shipped plan verified on PoCL,
// step by step and fused, with its data resident or transferred through pageable or mapped memory.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "base/errors.hpp"
#include "harness/operators/operator.hpp"
#include "operators/plan/plan.hpp"
#include "operators/plan/plan_codegen.hpp"
#include "operators/plan/plan_file.hpp"
#include "operators/plan/plan_reference.hpp"
#include "operators/plan/tpch.hpp"
#include "tests/support.hpp"
#ifdef VAREX_HAVE_CUDA
#include "harness/backends/cuda_engine.hpp"
#endif

namespace varex::plan {
namespace {

using datasets::parse_date;
using nlohmann::json;

TEST(Tpch, DatesRoundTripAndMalformedOnesAreRefused) {
  EXPECT_EQ(parse_date("1970-01-01"), 0);
  EXPECT_EQ(parse_date("1992-01-01"), 8035);
  EXPECT_EQ(parse_date("2000-03-01") - parse_date("2000-02-28"), 2);  // 2000 is a leap year
  EXPECT_EQ(parse_date("1900-03-01") - parse_date("1900-02-28"), 1);  // 1900 is not
  for (const char* d : {"1992-01-01", "1995-06-17", "1996-02-29", "1998-12-31"})
    EXPECT_EQ(datasets::format_date(parse_date(d)), d);
  for (const char* d : {"1995-6-17", "1995-02-29", "1995-13-01", "19950617", "1995-06-1x", ""})
    EXPECT_EQ(parse_date(d), datasets::kBadDate) << d;
}

TEST(Tpch, GeneratedColumnsFollowTheSpecificationsRules) {
  datasets::TpchData data(0.01, 7);
  const std::uint64_t orders = data.rows("orders"), customers = data.rows("customer");
  ASSERT_EQ(orders, 15000u);
  ASSERT_EQ(customers, 1500u);
  const auto& okey = data.column("o_orderkey");
  const auto& ocust = data.column("o_custkey");
  const auto& odate = data.column("o_orderdate");
  std::map<std::int32_t, std::uint64_t> order_row;
  for (std::uint64_t o = 0; o < orders; ++o) {
    EXPECT_EQ(okey[o], static_cast<std::int32_t>((o / 8) * 32 + o % 8 + 1));
    EXPECT_TRUE(ocust[o] >= 1 && ocust[o] <= 1500 && ocust[o] % 3 != 0) << ocust[o];
    EXPECT_TRUE(odate[o] >= parse_date("1992-01-01") && odate[o] <= parse_date("1998-12-31") - 151);
    order_row[okey[o]] = o;
  }
  const std::uint64_t lines = data.rows("lineitem");
  EXPECT_GT(lines, orders * 3);
  EXPECT_LT(lines, orders * 5);
  const auto& lkey = data.column("l_orderkey");
  const auto& lnum = data.column("l_linenumber");
  const auto& ship = data.column("l_shipdate");
  const auto& commit = data.column("l_commitdate");
  const auto& receipt = data.column("l_receiptdate");
  const auto& flag = data.column("l_returnflag");
  const auto& status = data.column("l_linestatus");
  const auto& qty = data.column("l_quantity");
  const auto& part = data.column("l_partkey");
  const auto& price = data.column("l_extendedprice");
  const auto& discount = data.column("l_discount");
  const auto& tax = data.column("l_tax");
  const std::int32_t current = parse_date("1995-06-17");
  std::set<std::int32_t> flags_seen;
  for (std::uint64_t r = 0; r < lines; ++r) {
    ASSERT_TRUE(order_row.count(lkey[r]));
    const std::int32_t ordered = odate[order_row[lkey[r]]];
    EXPECT_TRUE(lnum[r] >= 1 && lnum[r] <= 7);
    if (r > 0 && lkey[r] == lkey[r - 1]) {
      EXPECT_EQ(lnum[r], lnum[r - 1] + 1);
    }
    EXPECT_TRUE(ship[r] - ordered >= 1 && ship[r] - ordered <= 121);
    EXPECT_TRUE(commit[r] - ordered >= 30 && commit[r] - ordered <= 90);
    EXPECT_TRUE(receipt[r] - ship[r] >= 1 && receipt[r] - ship[r] <= 30);
    EXPECT_EQ(flag[r] == 1, receipt[r] > current) << "N exactly where the item was not yet received";
    EXPECT_EQ(status[r] == 1, ship[r] > current) << "O exactly where the item was not yet shipped";
    EXPECT_TRUE(qty[r] >= 1 && qty[r] <= 50 && part[r] >= 1 && part[r] <= 2000);
    const std::int64_t retail = 90000 + (part[r] / 10) % 20001 + 100 * (part[r] % 1000);
    EXPECT_EQ(price[r], qty[r] * retail);
    EXPECT_TRUE(discount[r] >= 0 && discount[r] <= 10 && tax[r] >= 0 && tax[r] <= 8);
    flags_seen.insert(flag[r]);
  }
  EXPECT_EQ(flags_seen.size(), 3u);
  datasets::TpchData again(0.01, 7), other(0.01, 8);
  EXPECT_EQ(again.column("l_shipdate"), ship) << "a column is a function of seed, column and row";
  EXPECT_NE(other.column("o_orderdate"), odate);
}

json lineitem_plan(const json& extra_steps) {
  json steps = json::array({{{"id", "li"},
                             {"op", "scan"},
                             {"table", "lineitem"},
                             {"columns", {"l_shipdate", "l_discount", "l_quantity"}}}});
  for (const json& s : extra_steps) steps.push_back(s);
  return {{"plan", "T"}, {"steps", steps}, {"outputs", {extra_steps.back()["id"]}}};
}

std::string refusal(const json& doc) {
  try {
    parse_plan(doc, "t.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(PlanFile, UnknownOperatorsCyclesAndTypeMismatchesAreRefusedNamingTheStep) {
  EXPECT_NE(refusal(lineitem_plan(json::array({{{"id", "j"}, {"op", "group_by"}, {"input", "li"}}})))
                .find("plan t.json: step 'j': unknown operator 'group_by'"),
            std::string::npos);
  json cycle = lineitem_plan(
      json::array({{{"id", "a"}, {"op", "select"}, {"input", "b"}, {"where", {{"l_quantity", "<", "3"}}}},
                   {{"id", "b"}, {"op", "select"}, {"input", "a"}, {"where", {{"l_quantity", "<", "3"}}}}}));
  EXPECT_NE(refusal(cycle).find("form a cycle"), std::string::npos) << refusal(cycle);
  json self = lineitem_plan(
      json::array({{{"id", "a"}, {"op", "project"}, {"input", "a"}, {"columns", {"l_quantity"}}}}));
  EXPECT_NE(refusal(self).find("a -> a form a cycle"), std::string::npos) << refusal(self);
  const auto select = [](json condition) {
    return lineitem_plan(
        json::array({{{"id", "s"}, {"op", "select"}, {"input", "li"}, {"where", {condition}}}}));
  };
  EXPECT_NE(refusal(select({"l_shipdate", "<", "0.05"})).find("is not a date"), std::string::npos);
  EXPECT_NE(refusal(select({"l_discount", "<", "1994-01-01"})).find("is not a number"), std::string::npos);
  EXPECT_NE(refusal(select({"l_discount", "<", "0.055"})).find("more decimals"), std::string::npos);
  EXPECT_NE(refusal(select({"l_shipdate", "<", {{"column", "l_discount"}}})).find("type mismatch"),
            std::string::npos);
  EXPECT_NE(refusal(select({"l_tax", "<", "1"})).find("has no column 'l_tax'"), std::string::npos);
  EXPECT_NE(refusal(select({"l_quantity", "~", "1"})).find("unknown comparison"), std::string::npos);
  const json arith = lineitem_plan(json::array(
      {{{"id", "x"}, {"op", "arith"}, {"input", "li"}, {"compute", {"x", "l_shipdate", "+", "1"}}}}));
  EXPECT_NE(refusal(arith).find("arithmetic on l_shipdate, a date"), std::string::npos) << refusal(arith);
  EXPECT_NE(refusal(lineitem_plan(json::array({{{"id", "s"},
                                                {"op", "select"},
                                                {"input", "nowhere"},
                                                {"where", {{"l_quantity", "<", "3"}}}}})))
                .find("unknown input 'nowhere'"),
            std::string::npos);
  EXPECT_EQ(refusal(select({"l_discount", "<=", "0.07"})), "(accepted)");

  const auto join = [](json on, const char* build_table, json build_columns) {
    json doc = lineitem_plan(
        json::array({{{"id", "j"}, {"op", "join"}, {"input", "li"}, {"build", "b"}, {"on", on}}}));
    doc["steps"].push_back({{"id", "b"}, {"op", "scan"}, {"table", build_table}, {"columns", build_columns}});
    return doc;
  };
  EXPECT_EQ(refusal(join({"l_quantity", "o_orderkey"}, "orders", {"o_orderkey", "o_orderdate"})),
            "(accepted)");
  EXPECT_NE(refusal(join({"l_shipdate", "o_orderkey"}, "orders", {"o_orderkey"})).find("type mismatch"),
            std::string::npos);
  json self_join = lineitem_plan(json::array({{{"id", "j"},
                                               {"op", "join"},
                                               {"input", "li"},
                                               {"build", "b"},
                                               {"on", {"l_quantity", "l_quantity"}}}}));
  self_join["steps"].push_back(
      {{"id", "b"}, {"op", "select"}, {"input", "li"}, {"where", {{"l_quantity", "<", "3"}}}});
  EXPECT_NE(refusal(self_join).find("self-join"), std::string::npos) << refusal(self_join);
  EXPECT_NE(refusal(join({"l_quantity", "o_nokey"}, "orders", {"o_orderkey"})).find("no column 'o_nokey'"),
            std::string::npos);
}

TEST(PlanReference, AJoinWhoseBuildSideRepeatsAKeyIsRefused) {
  json doc = lineitem_plan(json::array(
      {{{"id", "j"}, {"op", "join"}, {"input", "li"}, {"build", "o"}, {"on", {"l_quantity", "o_custkey"}}}}));
  doc["steps"].push_back({{"id", "o"}, {"op", "scan"}, {"table", "orders"}, {"columns", {"o_custkey"}}});
  datasets::TpchData data(0.001, 1);
  try {
    plan_reference(parse_plan(doc, "t.json"), data);
    ADD_FAILURE() << "orders repeat customer keys";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("join 'j': the build side's key"), std::string::npos) << e.what();
  }
}

TEST(PlanFile, TypesFollowTheArithmetic) {
  const Plan p = parse_plan(operators::plan_document("E"), "E");
  const Step& charge = p.steps[static_cast<std::size_t>(p.outputs.front())];
  ASSERT_EQ(charge.schema.size(), 1u);
  EXPECT_EQ(charge.schema[0].type.describe(), "int64 decimal(6)");  // (2 + 2) + 2 decimals
}

TEST(PlanFile, FusionMakesOneGroupPerTableAndStepsAloneOtherwise) {
  const Plan d = parse_plan(operators::plan_document("D"), "D");
  const auto fused = plan_groups(d, true);
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_EQ(fused[0].outputs.size(), 3u);
  EXPECT_EQ(generate_group(d, fused[0]).compacted, 3u);
  EXPECT_EQ(plan_groups(d, false).size(), 3u);
  const Plan e = parse_plan(operators::plan_document("E"), "E");
  const GroupCode code = generate_group(e, plan_groups(e, true)[0]);
  EXPECT_EQ(code.writes.size(), 1u) << "fused, only the projected charge reaches memory";
  EXPECT_TRUE(code.mapped);
  EXPECT_EQ(code.compacted, 0u);
}

class ShippedPlan : public testing::TestWithParam<std::string> {};

// Every shipped plan, step by step and fused, resident and transferred (copied from pageable memory, or read
// and written in place in mapped memory), and launch shapes that leave partial tiles: each materialised
// step's output checked in full against the host reference.
TEST_P(ShippedPlan, VerifiesFusedAndStepByStepResidentAndTransferred) {
  const harness::Operator& op = harness::find_operator("plan");
  harness::WorkloadOptions options;
  options.flags["plan"] = GetParam();
  options.flags["sf"] = "0.003";
  const auto spec = op.workload(options);
  auto run = op.prepare(test::cpu_engine(), spec);
  const auto space = op.space({test::cpu_device(), spec.rows(), &spec.query});
  const Digest want = run->reference();
  EXPECT_GT(want.rows, 0u);
  int checked = 0;
  for (const std::string fuse : {"off", "on"}) {
    for (const std::string residency : {"resident", "transferred"}) {
      for (const std::string shape : {"64,1", "512,16"}) {
        std::map<std::string, std::string> settings{{"fuse", fuse}, {"residency", residency}};
        if (residency == "transferred") settings["memory"] = shape == "64,1" ? "mapped" : "pageable";
        variants::Params params = space.with_settings(space.defaults(), settings);
        for (const auto& t : space.tunables()) {
          const bool local = t.name.ends_with(".local"), ept = t.name.ends_with(".ept");
          if (!local && !ept) continue;
          variants::Params trial = params;
          trial[t.name] =
              std::stoll(local ? shape.substr(0, shape.find(',')) : shape.substr(shape.find(',') + 1));
          if (space.valid(trial)) params = trial;
        }
        run->poison();
        const auto times = run->execute(params);
        const harness::Collected c = run->collect();
        EXPECT_TRUE(c.verified) << variants::describe(params) << ": " << c.mismatch;
        EXPECT_EQ(c.digest, want) << variants::describe(params);
        const harness::Collected on_device = run->collect(Check::Device);
        EXPECT_EQ(on_device.checked, Check::Device);
        EXPECT_TRUE(on_device.verified) << variants::describe(params);
        bool uploads = false, downloads = false;
        for (const auto& k : times.kernels) {
          uploads = uploads || k.kernel == "h2d";
          downloads = downloads || k.kernel == "d2h";
        }
        // Mapped, the kernels read the tables where they lie: only the outputs' row counts are copied.
        EXPECT_EQ(uploads, residency == "transferred" && settings["memory"] != "mapped")
            << variants::describe(params);
        EXPECT_EQ(downloads, residency == "transferred") << variants::describe(params);
        EXPECT_GT(times.total_ms, 0.0);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 8);
  // Outputs overwritten after a run (the poison word in every value) are not the reference's: the full
  // comparison names the first value that differs, and the device's digest rejects them too.
  run->execute(space.defaults());
  run->poison();
  const harness::Collected poisoned = run->collect();
  EXPECT_FALSE(poisoned.verified);
  EXPECT_NE(poisoned.mismatch.find("step '"), std::string::npos) << poisoned.mismatch;
  EXPECT_FALSE(run->collect(Check::Device).verified);
}

INSTANTIATE_TEST_SUITE_P(Plans, ShippedPlan, testing::ValuesIn(operators::shipped_plans()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

#ifdef VAREX_HAVE_CUDA
// The generated kernels of every shipped plan, fused and step by step, build with NVRTC for Hopper.
TEST(PlanCuda, EveryGroupOfEveryShippedPlanBuildsWithNvrtc) {
  const harness::KernelSource& base = harness::kernel_source(Backend::Cuda, "plan");
  int built = 0;
  for (const std::string& name : operators::shipped_plans()) {
    const Plan p = parse_plan(operators::plan_document(name), name);
    for (const bool fuse : {false, true}) {
      for (const Group& g : plan_groups(p, fuse)) {
        const GroupCode code = generate_group(p, g);
        if (!code.compacted && !code.mapped) continue;
        const harness::KernelSource source{base.name, code.prelude + base.text, "t"};
        try {
          EXPECT_GT(
              harness::compile_cuda_offline(source, {{"SCAN_LOCAL", "128"}, {"SCAN_ITEMS", "8"}}, "sm_90"),
              0u);
        } catch (const harness::CompileError& e) {
          ADD_FAILURE() << name << (fuse ? " fused" : "") << ": " << e.what();
        }
        ++built;
      }
    }
  }
  EXPECT_GT(built, 6);
}
#endif

TEST(PlanCli, APlanFileWithACycleOrAnUnknownOperatorExitsWithStatus2AndOneLine) {
  const std::string dir = test::scratch_dir("plans");
  const auto write = [&](const std::string& name, const json& doc) {
    std::ofstream(dir + "/" + name) << doc.dump();
    return dir + "/" + name;
  };
  const std::string cycle =
      write("cycle.json",
            lineitem_plan(json::array(
                {{{"id", "a"}, {"op", "select"}, {"input", "b"}, {"where", {{"l_quantity", "<", "3"}}}},
                 {{"id", "b"}, {"op", "select"}, {"input", "a"}, {"where", {{"l_quantity", "<", "3"}}}}})));
  const std::string unknown =
      write("unknown.json", lineitem_plan(json::array({{{"id", "g"}, {"op", "group_by"}, {"input", "li"}}})));
  for (const auto& [file, says] : std::vector<std::pair<std::string, std::string>>{
           {cycle, "form a cycle"}, {unknown, "unknown operator 'group_by'"}}) {
    const auto r =
        test::run_varex({"plan", "run", file, "--device", "ocl:0:0", "--sf", "0.001", "--db", dir + "/v.db"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const auto ok = test::run_varex({"plan", "run", "A", "--device", "ocl:0:0", "--sf", "0.001", "--db",
                                   dir + "/v.db", "--set", "fuse=on", "--json", "--quiet"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(json::parse(ok.out).at("verified"), true);
}

// Run with resident and with transferred data, a plan's report stacks each one's fastest variant as
// kernels, transfers and launches (kernels.csv holds the parts).
TEST(PlanCli, TheReportBreaksAPlansTimeIntoKernelsTransfersAndLaunches) {
  const std::string dir = test::scratch_dir("plan-report");
  const std::string db = dir + "/v.db";
  for (const char* residency : {"resident", "transferred"}) {
    const auto r = test::run_varex({"plan", "run", "E", "--device", "ocl:0:0", "--sf", "0.001", "--db", db,
                                    "--set", std::string("residency=") + residency, "--min-reps", "2",
                                    "--max-reps", "3", "--quiet"});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  const auto r = test::run_varex({"report", "--db", db, "--out", dir + "/report"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream kernels(dir + "/report/kernels.csv");
  std::string text((std::istreambuf_iterator<char>(kernels)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(",h2d,"), std::string::npos);
  EXPECT_NE(text.find(",launch,"), std::string::npos);
  EXPECT_NE(text.find(".map,"), std::string::npos);
  const json plots = json::parse(std::ifstream(dir + "/report/plots.json"));
  int breakdowns = 0;
  for (const json& p : plots) {
    if (p.at("kind") != "breakdown") continue;
    ++breakdowns;
    const auto labels = p.at("tick_labels").dump();
    EXPECT_NE(labels.find("resident"), std::string::npos) << labels;
    EXPECT_NE(labels.find("transferred"), std::string::npos) << labels;
  }
  EXPECT_EQ(breakdowns, 1);
}

}  // namespace
}  // namespace varex::plan
