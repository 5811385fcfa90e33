// Govindaraju's predicates and aggregates (cnf_filter, range, semilinear, aggregate, kth_largest) on the
// OpenCL CPU device: awkward records (INT_MIN and INT_MAX, negatives, all equal, ties around the k-th
// value, one row, none), every strategy, output and method, each checked against the test's own brute
// force written here in plain C++ (not through the query parser). Also the query parser's errors, the
// record files and generators, and the CPU baselines.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <fstream>
#include <functional>
#include <random>

#include "base/errors.hpp"
#include "harness/measure.hpp"
#include "operators/aggregates/aggregates.hpp"
#include "operators/common/attributes/attribute_table.hpp"
#include "operators/common/attributes/cnf.hpp"
#include "operators/filters/filters.hpp"
#include "support.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::find_operator;
}  // namespace varex::operators

namespace varex::operators {
namespace {

using Table = datasets::AttributeTable;

// 997 records of four attributes: the extremes, negatives, small values with many ties, and a column of
// one value throughout (a3 = 7 but for every 13th row).
Table awkward_records() {
  std::mt19937 rng(11);
  Table t;
  t.columns.assign(4, {});
  const std::int32_t extremes[] = {INT_MIN, INT_MAX, INT_MIN + 1, INT_MAX - 1, 0, -1, 1};
  for (std::uint32_t r = 0; r < 997; ++r) {
    const auto pick = [&](int kind) -> std::int32_t {
      switch (kind) {
        case 0:
          return extremes[rng() % 7];
        case 1:
          return static_cast<std::int32_t>(rng() % 21) - 10;  // ties
        default:
          return static_cast<std::int32_t>(rng());
      }
    };
    t.columns[0].push_back(pick(static_cast<int>(rng() % 3)));
    t.columns[1].push_back(pick(static_cast<int>(rng() % 3)));
    t.columns[2].push_back(pick(static_cast<int>(rng() % 3)));
    t.columns[3].push_back(r % 13 ? 7 : pick(1));
  }
  return t;
}

datasets::WorkloadSpec file_workload(const Operator& op, const Table& t, const std::string& name,
                                     std::map<std::string, std::string> query) {
  WorkloadOptions o;
  o.flags["input"] = test::write_records(t, test::scratch_dir("predicates-" + name) + "/records.csv");
  o.query = std::move(query);
  return op.workload(o);
}

// Rows kept and the sum of their indices.
Digest filter_digest(const Table& t, const std::function<bool(std::uint64_t)>& keep) {
  Digest d;
  for (std::uint64_t r = 0; r < t.rows(); ++r) {
    if (keep(r)) {
      ++d.rows;
      d.checksum += r;
    }
  }
  return d;
}

Digest value_digest(std::uint64_t rows, std::int64_t value) {
  return {rows, static_cast<std::uint64_t>(value)};
}

// Two compiled programs (ept 1 and 16) and every launch-time choice.
const std::map<std::string, std::string> kPins{{"local", "64"}, {"ept", "1,16"}, {"grid", "cover,2"}};

TEST(CnfQuery, ParsesFoldsNotAndPrintsItselfBack) {
  const Cnf q = Cnf::parse("(a0 < 10 OR not a1 >= a2) and 7 <= a3 and NOT (a2 = -2147483648)", 4);
  EXPECT_EQ(q.to_string(), "(a0 < 10 or a1 < a2) and a3 >= 7 and a2 != -2147483648");
  EXPECT_EQ(Cnf::parse(q.to_string(), 4).to_string(), q.to_string());
  EXPECT_EQ(q.attributes_used(), 4u);
  EXPECT_EQ(q.predicates(), 4u);
  EXPECT_EQ(kernel_expression(q.all[0]), "(A(0)<10)|(A(1)<A(2))");
  EXPECT_EQ(kernel_expression(q.all[2]), "(A(2)!=(-2147483647-1))");
  EXPECT_EQ(Cnf::parse("a0 = 1 or a1 <> 2 or a2 == 3", 0).all.size(), 1u);  // one bare disjunction
}

TEST(CnfQuery, BadSyntaxIsAUsageErrorSayingWhere) {
  for (const char* bad :
       {"", "a0 <", "a0 < 10 or a1 > 2 and a2 = 1", "(a0 < 1 and a1 < 2)", "a0 < 99999999999", "10 < 20",
        "b0 < 1", "a0 < 1)", "a4 < 1", "a0 ~ 1", "(a0 < 1 or a1 < 2", "a0 < 1 and"}) {
    SCOPED_TRACE(bad);
    try {
      Cnf::parse(bad, 4);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("query where"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

TEST(PredicateQueries, BadValuesAreUsageErrors) {
  struct Case {
    const char* op;
    std::map<std::string, std::string> flags, query;
  };
  const std::vector<Case> cases{
      {"cnf_filter", {}, {{"where", "a7 < 1"}}},
      {"cnf_filter", {}, {{"where", "a0 < 1"}, {"extra", "1"}}},
      {"cnf_filter", {{"data", "weather"}}, {}},
      {"cnf_filter", {{"attributes", "0"}}, {}},
      {"range", {}, {{"low", "1e3"}}},
      {"range", {}, {{"attr", "b1"}}},
      {"range", {}, {{"high", "2147483648"}}},
      {"semilinear", {}, {{"coef", "1,nan"}}},
      {"semilinear", {}, {{"op", "=<"}}},
      {"semilinear", {{"attributes", "2"}}, {{"coef", "1,2,3"}}},
      {"aggregate", {}, {{"fn", "median"}}},
      {"aggregate", {}, {{"attr", "a4"}}},
      {"kth_largest", {}, {{"k", "3"}, {"quantile", "0.5"}}},
      {"kth_largest", {}, {{"quantile", "1.5"}}},
      {"kth_largest", {{"rows", "0"}}, {}},
  };
  for (const Case& c : cases) {
    WorkloadOptions o;
    o.flags = c.flags;
    o.flags.emplace("rows", "100");
    o.query = c.query;
    EXPECT_THROW(find_operator(c.op).workload(o), UsageError)
        << c.op << " " << testing::PrintToString(c.query);
  }
}

TEST(AttributeTables, FilesKeepEveryValueAndRefuseMalformedLines) {
  const Table t = datasets::parse_attribute_table(" -2147483648, 2147483647 ,0\n+5,-7,3\n", "f.csv");
  ASSERT_EQ(t.attributes(), 3u);
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.columns[0][0], INT_MIN);
  EXPECT_EQ(t.columns[1][0], INT_MAX);
  EXPECT_EQ(t.columns[0][1], 5);
  EXPECT_EQ(datasets::parse_attribute_table("", "e.csv").rows(), 0u);
  for (const char* bad :
       {"1,2\n3\n", "1,x\n", "2147483648\n", "1\n\n2\n", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\n"}) {
    EXPECT_THROW(datasets::parse_attribute_table(bad, "bad.csv"), UsageError) << bad;
  }
}

TEST(AttributeTables, GeneratorsAreSeededAndSkewedAsDocumented) {
  using datasets::AttributeData;
  const Table a = datasets::generate_attribute_table(20000, 5, AttributeData::Traces, 3);
  EXPECT_EQ(a.columns, datasets::generate_attribute_table(20000, 5, AttributeData::Traces, 3).columns);
  EXPECT_NE(a.columns, datasets::generate_attribute_table(20000, 5, AttributeData::Traces, 4).columns);
  const auto [lo, hi] = std::minmax_element(a.columns[0].begin(), a.columns[0].end());
  EXPECT_GE(*lo, 40);
  EXPECT_LE(*hi, (1 << 19) - 1);
  std::vector<std::int32_t> ports = a.columns[2];
  std::nth_element(ports.begin(), ports.begin() + 10000, ports.end());
  EXPECT_LT(ports[10000], 65536 / 8);  // 65536 u^4: the median port is 4096
  const Table c = datasets::generate_attribute_table(20000, 4, AttributeData::Census, 3);
  for (std::int32_t h : c.columns[2]) ASSERT_TRUE(h >= 1 && h <= 99);
  for (std::int32_t age : c.columns[0]) ASSERT_TRUE(age >= 17 && age <= 90);
}

TEST(PredicatesDevice, CnfFilterEveryStrategyOrderAndOutputOnAwkwardRecords) {
  const CnfFilterOperator op;
  const Table t = awkward_records();
  const auto spec = file_workload(
      op, t, "cnf", {{"where", "(a0 < 0 or a1 >= a2) and a3 != 7 and not a0 = -2147483648 and a2 <= 5"}});
  const Digest want = filter_digest(t, [&](std::uint64_t r) {
    const auto& c = t.columns;
    return (c[0][r] < 0 || c[1][r] >= c[2][r]) && c[3][r] != 7 && c[0][r] != INT_MIN && c[2][r] <= 5;
  });
  ASSERT_GT(want.rows, 5u);
  test::verify_variants(op, spec, want, kPins);
}

TEST(PredicatesDevice, RangeBothComparisonsOnFullEmptyAndSingleRanges) {
  const RangeOperator op;
  const Table t = awkward_records();
  struct Case {
    std::int64_t low, high;
    const char* compare;  // each comparison on two ranges: one program per case
  };
  for (const Case c : {Case{INT_MIN, INT_MAX, "unsigned_difference"}, Case{-10, 10, "two_sided"},
                       Case{5, 4, "two_sided"}, Case{INT_MAX, INT_MAX, "unsigned_difference"}}) {
    SCOPED_TRACE(std::to_string(c.low) + ".." + std::to_string(c.high) + " " + c.compare);
    const auto spec = file_workload(
        op, t, "range", {{"attr", "a1"}, {"low", std::to_string(c.low)}, {"high", std::to_string(c.high)}});
    const Digest want = filter_digest(
        t, [&](std::uint64_t r) { return c.low <= t.columns[1][r] && t.columns[1][r] <= c.high; });
    test::verify_variants(op, spec, want, {{"local", "64"}, {"ept", "4"}, {"compare", c.compare}});
  }
}

TEST(PredicatesDevice, SemilinearKeepsDotProductsThatLandExactlyOnB) {
  // Small integers and coefficients that are powers of two: every dot product is exact in float, and many
  // land exactly on b = 1.5, which `<=` keeps and `<` does not.
  const SemilinearOperator op;
  Table t;
  t.columns.assign(3, {});
  for (std::int32_t r = 0; r < 600; ++r) {
    t.columns[0].push_back(r % 7 - 3);
    t.columns[1].push_back(r % 5 - 2);
    t.columns[2].push_back(-(r % 3));
  }
  for (const char* cmp : {"<=", "="}) {
    SCOPED_TRACE(cmp);
    const auto spec = file_workload(op, t, "semi", {{"coef", "0.5,-0.25,2"}, {"op", cmp}, {"b", "1.5"}});
    const Digest want = filter_digest(t, [&](std::uint64_t r) {
      const double dot = 0.5 * t.columns[0][r] - 0.25 * t.columns[1][r] + 2.0 * t.columns[2][r];
      return std::string(cmp) == "<=" ? dot <= 1.5 : std::string(cmp) == "<" ? dot < 1.5 : dot == 1.5;
    });
    ASSERT_GT(want.rows, 0u);
    test::verify_variants(op, spec, want, {{"local", "64"}, {"ept", "4"}});
  }
}

TEST(PredicatesDevice, AggregatesDirectAndByBitCountingPastThirtyTwoBits) {
  const AggregateOperator op;
  const Table t = awkward_records();
  for (const bool filtered : {false, true}) {
    std::vector<std::int32_t> kept;
    for (std::uint64_t r = 0; r < t.rows(); ++r) {
      if (!filtered || t.columns[3][r] != 7) kept.push_back(t.columns[0][r]);
    }
    std::int64_t sum = 0;
    for (std::int32_t v : kept) sum += v;
    const std::map<std::string, Digest> want{
        {"count", value_digest(kept.size(), static_cast<std::int64_t>(kept.size()))},
        {"sum", value_digest(kept.size(), sum)},
        {"avg", value_digest(kept.size(), sum)},
        {"min", value_digest(kept.size(), *std::min_element(kept.begin(), kept.end()))},
        {"max", value_digest(kept.size(), *std::max_element(kept.begin(), kept.end()))}};
    for (const auto& [fn, digest] : want) {
      SCOPED_TRACE(fn + (filtered ? " where a3 != 7" : ""));
      std::map<std::string, std::string> query{{"fn", fn}};
      if (filtered) query["where"] = "a3 != 7";
      test::verify_variants(op, file_workload(op, t, "agg", query), digest,
                            {{"local", "64"}, {"ept", "4"}, {"sum_bits", "1,32"}});
    }
  }
}

TEST(PredicatesDevice, AggregatesOverNoRowsAreZero) {
  const AggregateOperator op;
  const Table t = awkward_records();
  for (const char* fn : {"count", "sum", "min", "max"}) {
    SCOPED_TRACE(fn);
    test::verify_variants(
        op, file_workload(op, t, "agg-none", {{"fn", fn}, {"where", "a3 > 2147483646 and a3 < 0"}}),
        Digest{0, 0}, {{"local", "64"}, {"ept", "4"}, {"sum_bits", "1"}});
  }
}

TEST(PredicatesDevice, KthLargestAtEveryDigitWidthWithTiesAndExtremes) {
  const KthLargestOperator op;
  const Table t = awkward_records();
  for (const bool filtered : {false, true}) {
    std::vector<std::int32_t> kept;
    for (std::uint64_t r = 0; r < t.rows(); ++r) {
      if (!filtered || t.columns[3][r] == 7) kept.push_back(t.columns[1][r]);
    }
    std::vector<std::int32_t> sorted = kept;
    std::sort(sorted.rbegin(), sorted.rend());
    // 1 and n, and a k inside the run of tied small values.
    const auto tie =
        static_cast<std::uint64_t>(std::find(sorted.begin(), sorted.end(), 0) - sorted.begin()) + 2;
    for (const std::uint64_t k : {std::uint64_t{1}, std::uint64_t{sorted.size()}, tie}) {
      SCOPED_TRACE("k=" + std::to_string(k) + (filtered ? " where a3 = 7" : ""));
      std::map<std::string, std::string> query{{"attr", "a1"}, {"k", std::to_string(k)}};
      if (filtered) query["where"] = "a3 = 7";
      test::verify_variants(op, file_workload(op, t, "kth", query), value_digest(kept.size(), sorted[k - 1]),
                            {{"local", "64"}, {"ept", "4"}, {"radix_bits", "1,4,11"}});
    }
  }
}

TEST(PredicatesDevice, OneRowNoRowsAndAllEqual) {
  Table one;
  one.columns = {{INT_MIN}, {INT_MAX}};
  Table same;
  same.columns = {std::vector<std::int32_t>(1000, -5), std::vector<std::int32_t>(1000, -5)};
  const KthLargestOperator kth;
  const CnfFilterOperator cnf;
  test::verify_variants(kth, file_workload(kth, one, "one", {{"k", "1"}}), value_digest(1, INT_MIN),
                        {{"local", "64"}, {"ept", "4"}, {"radix_bits", "8"}});
  test::verify_variants(kth, file_workload(kth, same, "same", {{"quantile", "0.5"}}), value_digest(1000, -5),
                        {{"local", "64"}, {"ept", "4"}, {"radix_bits", "8"}});
  test::verify_variants(cnf, file_workload(cnf, one, "one-f", {{"where", "a0 < a1"}}), Digest{1, 0},
                        {{"local", "64"}, {"ept", "4"}});
  Table none;
  EXPECT_THROW(file_workload(kth, none, "none-k", {{"k", "1"}}), UsageError);
  test::verify_variants(cnf, file_workload(cnf, none, "none-f", {{"where", "a2 < 3"}}), Digest{},
                        {{"local", "64"}, {"ept", "4"}});
  // k past the rows, and a quantile's k
  EXPECT_THROW(kth.prepare(test::cpu_engine(), file_workload(kth, one, "one-k2", {{"k", "2"}})), UsageError);
  EXPECT_EQ(kth_of({{"quantile", 0.5}}, 4), 3u);  // 2 of 4 at or below: the 3rd largest
  EXPECT_EQ(kth_of({{"quantile", 1.0}}, 4), 1u);  // the maximum
  EXPECT_EQ(kth_of({{"quantile", 0.0}}, 4), 4u);  // the minimum
}

TEST(PredicatesDevice, MeasurementsCarryAVerifiedCpuBaseline) {
  MeasureSettings settings;
  settings.baseline = true;
  settings.min_reps = settings.max_reps = 2;
  for (const char* name : {"cnf_filter", "semilinear", "aggregate", "kth_largest"}) {
    SCOPED_TRACE(name);
    const Operator& op = find_operator(name);
    WorkloadOptions o;
    o.flags["rows"] = "20000";
    o.flags["data"] = "census";
    const auto spec = op.workload(o);
    auto run = op.prepare(test::cpu_engine(), spec);
    const auto params = op.space({test::cpu_device(), spec.rows()}).defaults();
    const Measurement m = measure(test::cpu_engine(), *run, params, settings, 0);
    ASSERT_TRUE(m.ok()) << m.error;
    ASSERT_TRUE(m.baseline.has_value());
    EXPECT_TRUE(m.baseline->verified);
    EXPECT_GT(m.baseline->ms, 0);
    EXPECT_GE(m.baseline->threads, 1u);
  }
}

// The filters pack their mask by warp ballots only where the device has them: CUDA, and NVIDIA's OpenCL with
// the define that turns its inline PTX on; PoCL offers local memory alone.
TEST(PredicatesDevice, BallotPackingOnlyWhereTheDeviceHasWarpBallots) {
  const Operator& op = find_operator("range");
  const auto packs = [&](const DeviceInfo& device) {
    std::vector<std::string> names;
    const variants::Space space = op.space({device, 1000});
    for (const variants::Tunable& t : space.tunables())
      if (t.name == "pack")
        for (const variants::Value& v : t.values) names.push_back(std::get<std::string>(v));
    return names;
  };
  const auto defines = [&](const DeviceInfo& device, const std::string& pack) {
    variants::Params params = op.space({device, 1000}).defaults();
    params["pack"] = variants::Value{pack};
    return harness::to_string(op.defines(params, device));
  };
  EXPECT_EQ(packs(test::cpu_device()), std::vector<std::string>{"local"});
  DeviceInfo cuda = test::cpu_device();
  cuda.backend = Backend::Cuda;
  cuda.type = "gpu";
  cuda.vendor = "NVIDIA Corporation";
  DeviceInfo nvidia_opencl = cuda;
  nvidia_opencl.backend = Backend::OpenCL;
  for (const DeviceInfo& d : {cuda, nvidia_opencl})
    EXPECT_EQ(packs(d), (std::vector<std::string>{"ballot", "local"}));
  EXPECT_NE(defines(nvidia_opencl, "ballot").find("VAREX_WARP_PTX=1"), std::string::npos);
  EXPECT_EQ(defines(nvidia_opencl, "local").find("PACK_BALLOT"), std::string::npos);
  EXPECT_EQ(defines(cuda, "ballot").find("VAREX_WARP_PTX"), std::string::npos);
  EXPECT_NE(defines(cuda, "ballot").find("PACK_BALLOT=1"), std::string::npos);
}

TEST(PredicatesCli, BadQueriesAndFilesAreOneLineAndStatusTwo) {
  const std::string bad_file = test::scratch_dir("predicates-cli") + "/bad.csv";
  { std::ofstream(bad_file) << "1,2\n3,x\n"; }
  const std::vector<std::vector<std::string>> commands{
      {"--op", "cnf_filter", "--query", "where=a0 <"}, {"--op", "semilinear", "--query", "coef=1,2,3,4,5"},
      {"--op", "kth_largest", "--query", "k=0"},       {"--op", "kth_largest", "--query", "k=5000"},
      {"--op", "range", "--attributes", "17"},         {"--op", "aggregate", "--input", bad_file},
  };
  for (std::vector<std::string> args : commands) {
    args.insert(args.begin(), "run");
    const std::vector<std::string> common{"--device",      test::cpu_device().id,
                                          "--rows",        "1000",
                                          "--db",          test::scratch_dir("predicates-cli-db") + "/v.db",
                                          "--no-baseline", "--quiet"};
    args.insert(args.end(), common.begin(), common.end());
    if (std::find(args.begin(), args.end(), "--input") != args.end()) {
      args.erase(std::find(args.begin(), args.end(), "--rows"),
                 std::find(args.begin(), args.end(), "--rows") + 2);
    }
    const test::CommandResult r = test::run_varex(args);
    EXPECT_EQ(r.status, 2) << args[2] << " " << args[4] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(PredicatesCli, AvgReportsTheSumAsChecksumAndTheAverageAsValue) {
  const std::string dir = test::scratch_dir("predicates-avg");
  { std::ofstream(dir + "/r.csv") << "1,0\n2,0\n4,1\n5,0\n"; }
  const test::CommandResult r =
      test::run_varex({"run",          "--op",         "aggregate",   "--device",      test::cpu_device().id,
                       "--input",      dir + "/r.csv", "--query",     "fn=avg",        "--query",
                       "where=a1 = 0", "--db",         dir + "/v.db", "--no-baseline", "--quiet",
                       "--json",       "--min-reps",   "1",           "--max-reps",    "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("rows").get<std::uint64_t>(), 3u);
  EXPECT_EQ(j.at("checksum").get<std::uint64_t>(), 8u);  // 1 + 2 + 5
  EXPECT_DOUBLE_EQ(j.at("value").get<double>(), 8.0 / 3.0);
  EXPECT_TRUE(j.at("verified").get<bool>());
}

}  // namespace
}  // namespace varex::operators
